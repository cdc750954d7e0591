-- search_text: each distinct normalised searchable text once (conditions and MeSH terms repeat across studies).
CREATE TABLE search_text AS
SELECT (row_number() OVER (ORDER BY norm))::INTEGER AS text_id, norm
FROM (SELECT DISTINCT norm FROM search_terms WHERE length(trim(norm)) > 0)
ORDER BY norm;
