-- place_text / place_posting: each distinct site place (city, state, zip, country) once, and which studies
-- have a site there; the `location` filter of search matches against these.
CREATE TABLE place_posting AS
SELECT DISTINCT search_norm(concat_ws(' , ', city, state, zip, country)) AS norm, nct_id
FROM locations
ORDER BY ALL;
