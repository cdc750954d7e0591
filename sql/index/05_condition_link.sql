-- condition_link: the data-taught synonyms (condition_links: a condition's text and a MeSH term the registry
-- filed it under) as text ids of the search index, with when they were taught: learned_from, the first cutoff at
-- which a version teaching it is shown, and is_current, whether a current version teaches it. A link once taught
-- stays taught (a later version dropping it does not unteach it).
CREATE TABLE condition_link AS
SELECT ct.text_id, mt.text_id AS term_text_id, min(t.shown_from) AS learned_from, bool_or(t.is_current) AS is_current
FROM all_condition_links AS l
JOIN study_version AS v USING (nct_id, content_hash)
JOIN taught_from() AS t USING (version_no)
JOIN search_text AS ct ON ct.norm = l.condition_norm
JOIN search_text AS mt ON mt.norm = l.term_norm
GROUP BY ct.text_id, mt.text_id
ORDER BY ALL;
