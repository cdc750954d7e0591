-- stats_by_facility(condition, intervention, sponsor, date_before, as_of): one row per site facility (with its city and
-- country): facility, city, country, trials. Most trials first, the top 100.
s AS (SELECT version_no FROM scope)
SELECT facility, city, country, count(*) AS trials
FROM study_facility SEMI JOIN s USING (version_no)
GROUP BY ALL ORDER BY trials DESC, facility, city, country LIMIT 100;
