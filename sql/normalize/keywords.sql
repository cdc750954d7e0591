-- keywords: one row per keyword of a study version.
SELECT nct_id, content_hash, generate_subscripts(l, 1) AS ordinal, unnest(l) AS keyword
FROM (SELECT nct_id, content_hash, d.protocolSection.conditionsModule.keywords AS l FROM new_versions)
ORDER BY nct_id, content_hash, ordinal
