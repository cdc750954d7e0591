-- study_facility: one row per current study and site facility (with its city and country), for the facility
-- statistics.
CREATE TABLE study_facility AS
SELECT DISTINCT nct_id, facility, city, country
FROM locations
WHERE facility IS NOT NULL
ORDER BY ALL;
