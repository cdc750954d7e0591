-- conditions: one row per condition listed by a study version, in the registry's order.
-- key: nct_id, content_hash, ordinal
SELECT nct_id, content_hash, generate_subscripts(l, 1) AS ordinal, unnest(l) AS condition
FROM (SELECT nct_id, content_hash, d.protocolSection.conditionsModule.conditions AS l FROM new_versions)
