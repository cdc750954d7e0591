-- The versions whose detailed description holds $phrase as whole words (every version's rows: all_studies). The
-- one area read from the stored text rather than the search index: slower than the others, rarely asked.
SELECT DISTINCT v.version_no, 0.0 AS score
FROM all_studies AS s
JOIN study_version AS v USING (nct_id, content_hash)
WHERE contains(search_norm(s.detailed_description), search_norm($phrase::VARCHAR))
  AND length(trim(search_norm($phrase))) > 0
