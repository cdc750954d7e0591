-- interventions: one row per intervention of a study version.
-- key: nct_id, content_hash, ordinal
SELECT
    nct_id, content_hash, ordinal,
    i.type AS intervention_type_code,
    intervention_type_label(i.type) AS intervention_type,
    i.name AS name,
    i.description AS description,
    coalesce(i.otherNames, []) AS other_names,
    coalesce(i.armGroupLabels, []) AS arm_group_labels
FROM (
    SELECT nct_id, content_hash, generate_subscripts(l, 1) AS ordinal, unnest(l) AS i
    FROM (SELECT nct_id, content_hash, d.protocolSection.armsInterventionsModule.interventions AS l FROM new_versions)
)
