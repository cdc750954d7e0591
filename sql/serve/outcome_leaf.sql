-- The versions with an outcome measure (its title or description) holding $phrase as whole words, from their texts
-- normalised at publish (outcome_text).
SELECT DISTINCT version_no, 0.0 AS score FROM outcome_text
WHERE contains(norm, search_norm($phrase::VARCHAR)) AND length(trim(search_norm($phrase))) > 0
