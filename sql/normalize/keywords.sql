-- keywords: one row per keyword of a study version.
-- key: nct_id, content_hash, ordinal
SELECT nct_id, content_hash, generate_subscripts(l, 1) AS ordinal, unnest(l) AS keyword
FROM (SELECT nct_id, content_hash, d.protocolSection.conditionsModule.keywords AS l FROM new_versions)
