-- The versions whose eligibility criteria hold $phrase as whole words (as search's eligibility filter).
SELECT version_no, 0.0 AS score FROM eligibility_text
WHERE contains(norm, search_norm($phrase::VARCHAR))
  AND length(trim(search_norm($phrase))) > 0
