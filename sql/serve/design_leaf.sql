-- The versions whose design or intervention field $field has the value $value (compared upper-cased with spaces
-- as underscores, as the API's enumerations are written), read from every version's rows: DesignAllocation,
-- DesignPrimaryPurpose, DesignInterventionModel, DesignMasking (all_studies), InterventionType (any of the
-- version's interventions: all_interventions).
WITH vals AS (
    SELECT nct_id, content_hash,
           CASE $field WHEN 'DesignAllocation' THEN allocation WHEN 'DesignPrimaryPurpose' THEN primary_purpose
                       WHEN 'DesignInterventionModel' THEN intervention_model WHEN 'DesignMasking' THEN masking
           END AS value
    FROM all_studies
    WHERE $field <> 'InterventionType'
    UNION ALL
    SELECT nct_id, content_hash, intervention_type_code FROM all_interventions WHERE $field = 'InterventionType'
)
SELECT DISTINCT v.version_no, 0.0 AS score
FROM vals
JOIN study_version AS v USING (nct_id, content_hash)
WHERE upper(replace(vals.value, ' ', '_')) = $value::VARCHAR
