-- arm_groups: one row per arm group of a study version.
-- key: nct_id, content_hash, ordinal
SELECT
    nct_id, content_hash, ordinal,
    a.label AS label, a.type AS arm_type, a.description AS description,
    coalesce(a.interventionNames, []) AS intervention_names
FROM (
    SELECT nct_id, content_hash, generate_subscripts(l, 1) AS ordinal, unnest(l) AS a
    FROM (SELECT nct_id, content_hash, d.protocolSection.armsInterventionsModule.armGroups AS l FROM new_versions)
)
