-- condition_link: synonyms the data teaches. When a study's condition text contains the text from which the
-- registry derived one of its condition MeSH terms (a HIGH browse leaf's asFound), a query matching that
-- condition text also finds studies indexed under the MeSH term: studies listing "NASH - Nonalcoholic
-- Steatohepatitis" teach that NASH maps to "Non-alcoholic Fatty Liver Disease".
CREATE TABLE condition_link AS
SELECT DISTINCT ct.text_id, mt.text_id AS term_text_id
FROM conditions AS c
JOIN browse_leaves AS b
  ON b.nct_id = c.nct_id AND b.domain = 'condition' AND b.relevance = 'HIGH' AND b.as_found IS NOT NULL
 AND contains(search_norm(c.condition), search_norm(b.as_found))
JOIN mesh_terms AS m
  ON m.nct_id = c.nct_id AND m.domain = 'condition' AND NOT m.is_ancestor AND m.term = b.name
JOIN search_text AS ct ON ct.norm = search_norm(c.condition)
JOIN search_text AS mt ON mt.norm = search_norm(m.term)
ORDER BY ALL;
