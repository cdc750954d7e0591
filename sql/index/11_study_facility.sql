-- study_facility: one row per version of a study (version_no) and site facility (with its city and country), for
-- the facility statistics.
CREATE TABLE study_facility AS
SELECT DISTINCT v.version_no, l.facility, l.city, l.country
FROM all_locations AS l
JOIN study_version AS v USING (nct_id, content_hash)
WHERE l.facility IS NOT NULL
ORDER BY ALL;
