-- place_posting: which studies have a site at each normalised place; the `location` filter reads it.
CREATE TABLE place_posting AS
SELECT DISTINCT norm, nct_id FROM places ORDER BY ALL;
-- place_norm: each normalised place once, which the `location` filter compares its parts against.
CREATE TABLE place_norm AS SELECT DISTINCT norm FROM place_posting ORDER BY norm;
