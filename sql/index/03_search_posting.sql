-- search_posting: which study has which text, in which field and area, at which weight.
CREATE TABLE search_posting AS
SELECT DISTINCT t.text_id, s.nct_id, s.field, s.area, s.weight
FROM search_source AS s
JOIN search_text AS t ON t.norm = search_norm(s.text)
ORDER BY t.text_id, s.nct_id, s.field, s.area;
