-- study_country: one row per current study and country where it has sites (site count, coordinate sums):
-- narrow and native, so the country statistics never unnest every study's site list.
CREATE TABLE study_country AS
SELECT nct_id, country, count(*) AS sites, sum(lat) AS lat_sum, count(lat) AS lat_n, sum(lon) AS lon_sum,
       count(lon) AS lon_n
FROM locations
WHERE country IS NOT NULL
GROUP BY nct_id, country
ORDER BY nct_id, country;
