-- search_posting: which study has which text, in which field and area, at which weight.
CREATE TABLE search_posting AS
SELECT DISTINCT t.text_id, s.nct_id, a.field, a.area, a.weight
FROM search_terms AS s
JOIN search_area AS a USING (area)
JOIN search_text AS t ON t.norm = s.norm
ORDER BY t.text_id, s.nct_id, a.field, a.area;
