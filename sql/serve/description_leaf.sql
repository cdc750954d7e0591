-- The versions whose description $field holds $phrase as whole words, read from every version's rows rather than
-- the search index (slower than the index's areas, rarely asked): DetailedDescription (all_studies),
-- InterventionDescription (any of the version's interventions: all_interventions).
SELECT DISTINCT v.version_no, 0.0 AS score
FROM (SELECT nct_id, content_hash, detailed_description AS text FROM all_studies
      WHERE $field = 'DetailedDescription'
      UNION ALL
      SELECT nct_id, content_hash, description FROM all_interventions WHERE $field = 'InterventionDescription') AS d
JOIN study_version AS v USING (nct_id, content_hash)
WHERE contains(search_norm(d.text), search_norm($phrase::VARCHAR))
  AND length(trim(search_norm($phrase))) > 0
