-- The versions with an outcome measure (its title or description) holding $phrase as whole words.
SELECT DISTINCT v.version_no, 0.0 AS score
FROM all_outcomes AS o
JOIN study_version AS v USING (nct_id, content_hash)
WHERE (contains(search_norm(o.measure), search_norm($phrase::VARCHAR))
       OR contains(search_norm(o.description), search_norm($phrase::VARCHAR)))
  AND length(trim(search_norm($phrase))) > 0
