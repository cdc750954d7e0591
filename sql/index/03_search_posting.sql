-- search_posting: which study (study_no) has which text (text_id) in which area (area_id): three integers a row,
-- sorted by text, so the scan a query makes over it is as small as it can be.
CREATE TABLE search_posting AS
SELECT DISTINCT t.text_id::INTEGER AS text_id, a.area_id, n.study_no
FROM search_terms AS s
JOIN search_area AS a USING (area)
JOIN search_text AS t ON t.norm = s.norm
JOIN study_number AS n USING (nct_id)
ORDER BY text_id, a.area_id, n.study_no;
