-- search_text: each distinct normalised text of every version's search terms once, numbered (text_id).
CREATE TABLE search_text AS
SELECT (row_number() OVER (ORDER BY norm))::INTEGER AS text_id, norm
FROM (SELECT DISTINCT norm FROM all_search_terms WHERE length(trim(norm)) > 0)
ORDER BY norm;
