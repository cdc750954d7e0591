-- browse_leaves: one row per browse leaf (the registry's topic index) of a study version, with relevance.
-- key: nct_id, content_hash, domain, ordinal
SELECT nct_id, content_hash, domain, ordinal, b.id AS leaf_id, b.name AS name, b.asFound AS as_found,
       b.relevance AS relevance
FROM (
    SELECT nct_id, content_hash, 'condition' AS domain, generate_subscripts(l, 1) AS ordinal, unnest(l) AS b
    FROM (SELECT nct_id, content_hash, d.derivedSection.conditionBrowseModule.browseLeaves AS l FROM new_versions)
    UNION ALL
    SELECT nct_id, content_hash, 'intervention', generate_subscripts(l, 1), unnest(l)
    FROM (SELECT nct_id, content_hash, d.derivedSection.interventionBrowseModule.browseLeaves AS l FROM new_versions)
)
