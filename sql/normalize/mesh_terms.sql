-- mesh_terms: one row per MeSH term the registry derived for a study version: domain 'condition' or
-- 'intervention', and whether the term is on the MeSH list itself or an ancestor of one.
-- key: nct_id, content_hash, domain, is_ancestor, ordinal
SELECT nct_id, content_hash, domain, is_ancestor, ordinal, m.id AS mesh_id, m.term AS term
FROM (
    SELECT nct_id, content_hash, 'condition' AS domain, false AS is_ancestor, generate_subscripts(l, 1) AS ordinal, unnest(l) AS m
    FROM (SELECT nct_id, content_hash, d.derivedSection.conditionBrowseModule.meshes AS l FROM new_versions)
    UNION ALL
    SELECT nct_id, content_hash, 'condition', true, generate_subscripts(l, 1), unnest(l)
    FROM (SELECT nct_id, content_hash, d.derivedSection.conditionBrowseModule.ancestors AS l FROM new_versions)
    UNION ALL
    SELECT nct_id, content_hash, 'intervention', false, generate_subscripts(l, 1), unnest(l)
    FROM (SELECT nct_id, content_hash, d.derivedSection.interventionBrowseModule.meshes AS l FROM new_versions)
    UNION ALL
    SELECT nct_id, content_hash, 'intervention', true, generate_subscripts(l, 1), unnest(l)
    FROM (SELECT nct_id, content_hash, d.derivedSection.interventionBrowseModule.ancestors AS l FROM new_versions)
)
