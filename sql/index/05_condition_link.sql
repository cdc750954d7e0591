-- condition_link: the data-taught synonyms (condition_links) as text ids of the search index.
CREATE TABLE condition_link AS
SELECT DISTINCT ct.text_id, mt.text_id AS term_text_id
FROM condition_links AS l
JOIN search_text AS ct ON ct.norm = l.condition_norm
JOIN search_text AS mt ON mt.norm = l.term_norm
ORDER BY ALL;
