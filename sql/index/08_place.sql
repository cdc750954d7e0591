-- place_posting: which versions of studies (version_no) have a site at each normalised place; the `location`
-- filter reads it. place_norm: each normalised place once, which the `location` filter compares its parts against.
CREATE TABLE place_posting AS
SELECT DISTINCT p.norm, v.version_no
FROM all_places AS p
JOIN study_version AS v USING (nct_id, content_hash)
ORDER BY ALL;
CREATE TABLE place_norm AS SELECT DISTINCT norm FROM place_posting ORDER BY norm;
