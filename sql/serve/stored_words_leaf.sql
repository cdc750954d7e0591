-- The versions whose text field $field holds $phrase as whole words, read from every version's rows rather than
-- the search index (slower than the index's areas, rarely asked): DetailedDescription and OrgFullName
-- (all_studies); InterventionDescription and InterventionArmGroupLabel (any of the version's interventions:
-- all_interventions); Primary/Secondary/OtherOutcomeDescription and ...TimeFrame, OtherOutcomeMeasure (its
-- outcomes of that kind: all_outcomes).
WITH texts AS (
    SELECT nct_id, content_hash, CASE $field WHEN 'DetailedDescription' THEN detailed_description
                                             WHEN 'OrgFullName' THEN organization END AS text
    FROM all_studies WHERE $field IN ('DetailedDescription', 'OrgFullName')
    UNION ALL
    SELECT nct_id, content_hash, CASE $field WHEN 'InterventionDescription' THEN description
                                             ELSE array_to_string(arm_group_labels, ' | ') END
    FROM all_interventions WHERE $field IN ('InterventionDescription', 'InterventionArmGroupLabel')
    UNION ALL
    SELECT nct_id, content_hash, CASE WHEN ends_with($field, 'TimeFrame') THEN time_frame
                                      WHEN ends_with($field, 'Description') THEN description ELSE measure END
    FROM all_outcomes
    WHERE outcome_type = CASE WHEN starts_with($field, 'Primary') THEN 'PRIMARY'
                              WHEN starts_with($field, 'Secondary') THEN 'SECONDARY'
                              WHEN starts_with($field, 'Other') THEN 'OTHER' END
      AND $field IN ('PrimaryOutcomeDescription', 'PrimaryOutcomeTimeFrame', 'SecondaryOutcomeDescription',
                     'SecondaryOutcomeTimeFrame', 'OtherOutcomeMeasure', 'OtherOutcomeDescription',
                     'OtherOutcomeTimeFrame')
)
SELECT DISTINCT v.version_no, 0.0 AS score
FROM texts AS d
JOIN study_version AS v USING (nct_id, content_hash)
WHERE contains(search_norm(d.text), search_norm($phrase::VARCHAR))
  AND length(trim(search_norm($phrase))) > 0
