-- The versions whose design or intervention field $field has the value $value (compared upper-cased with spaces
-- as underscores, as the API's enumerations are written), read from every version's rows: DesignAllocation,
-- DesignPrimaryPurpose, DesignInterventionModel, DesignMasking (all_studies), InterventionType (any of the
-- version's interventions: all_interventions), CollaboratorClass (any of its collaborators: all_collaborators),
-- LocationStatus (any of its sites: trial_detail).
WITH vals AS (
    SELECT nct_id, content_hash,
           CASE $field WHEN 'DesignAllocation' THEN allocation WHEN 'DesignPrimaryPurpose' THEN primary_purpose
                       WHEN 'DesignInterventionModel' THEN intervention_model WHEN 'DesignMasking' THEN masking
           END AS value
    FROM all_studies
    WHERE $field NOT IN ('InterventionType', 'LocationStatus', 'CollaboratorClass')
    UNION ALL
    SELECT nct_id, content_hash, intervention_type_code FROM all_interventions WHERE $field = 'InterventionType'
    UNION ALL
    SELECT nct_id, content_hash, agency_class FROM all_collaborators WHERE $field = 'CollaboratorClass'
)
SELECT DISTINCT v.version_no, 0.0 AS score
FROM vals
JOIN study_version AS v USING (nct_id, content_hash)
WHERE upper(replace(vals.value, ' ', '_')) = $value::VARCHAR
UNION
SELECT version_no, 0.0 AS score
FROM trial_detail
WHERE $field = 'LocationStatus'
  AND list_contains(list_transform(locations, l -> upper(replace(l.status, ' ', '_'))), $value::VARCHAR)
