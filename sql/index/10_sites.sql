-- study_country: one row per version of a study (version_no) and country where it has sites (site count,
-- coordinate sums): narrow and native, so the country statistics never unnest every study's site list.
CREATE TABLE study_country AS
SELECT v.version_no, l.country, count(*) AS sites, sum(l.lat) AS lat_sum, count(l.lat) AS lat_n,
       sum(l.lon) AS lon_sum, count(l.lon) AS lon_n
FROM all_locations AS l
JOIN study_version AS v USING (nct_id, content_hash)
WHERE l.country IS NOT NULL
GROUP BY v.version_no, l.country
ORDER BY v.version_no, l.country;
