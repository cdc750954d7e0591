-- search_text: each distinct normalised text of every version's search terms once, numbered (text_id): the texts
-- of the search areas (search_area), not the study IDs, which study_identifier holds.
CREATE TABLE search_text AS
SELECT (row_number() OVER (ORDER BY norm))::INTEGER AS text_id, norm
FROM (SELECT DISTINCT norm FROM all_search_terms
      WHERE length(trim(norm)) > 0 AND area IN (SELECT area FROM search_area))
ORDER BY norm;
