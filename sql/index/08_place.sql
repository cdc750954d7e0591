-- place_posting: which studies have a site at each normalised place; the `location` filter reads it.
CREATE TABLE place_posting AS
SELECT DISTINCT norm, nct_id FROM places ORDER BY ALL;
