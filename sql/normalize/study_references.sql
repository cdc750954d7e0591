-- study_references: one row per literature reference of a study version (`references` is an SQL keyword).
-- key: nct_id, content_hash, ordinal
SELECT nct_id, content_hash, ordinal, r.pmid AS pmid, r.type AS reference_type, r.citation AS citation
FROM (
    SELECT nct_id, content_hash, generate_subscripts(l, 1) AS ordinal, unnest(l) AS r
    FROM (SELECT nct_id, content_hash, d.protocolSection.referencesModule.references AS l FROM new_versions)
)
