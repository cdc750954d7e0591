-- search_text: each distinct normalised searchable text once (conditions and MeSH terms repeat across studies).
CREATE TABLE search_text AS
SELECT row_number() OVER (ORDER BY norm) AS text_id, norm
FROM (SELECT DISTINCT search_norm(text) AS norm FROM search_source WHERE text IS NOT NULL)
WHERE length(trim(norm)) > 0
ORDER BY norm;
