-- nct_aliases: one row per older NCT ID that a study version says now points to it.
-- key: nct_id, content_hash, ordinal
SELECT nct_id, content_hash, generate_subscripts(l, 1) AS ordinal, unnest(l) AS alias_nct_id
FROM (SELECT nct_id, content_hash, d.protocolSection.identificationModule.nctIdAliases AS l FROM new_versions)
