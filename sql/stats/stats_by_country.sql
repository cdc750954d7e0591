-- stats_by_country(condition, intervention, sponsor, date_before, as_of): one row per country with sites: country,
-- trials (with at least one site there), sites, lat/lon (the mean of its sites, for maps). Most trials first;
-- '(none)' last: the trials that list no site (sites 0, no lat/lon).
s AS (SELECT version_no FROM scope)
SELECT * FROM (
    SELECT country, count(*) AS trials, sum(sites) AS sites,
           round(sum(lat_sum) / nullif(sum(lat_n), 0), 3) AS lat, round(sum(lon_sum) / nullif(sum(lon_n), 0), 3) AS lon
    FROM study_country SEMI JOIN s USING (version_no)
    GROUP BY country
    UNION ALL
    SELECT '(none)', count(*), 0, NULL, NULL FROM s ANTI JOIN study_country USING (version_no) HAVING count(*) > 0)
ORDER BY country = '(none)', trials DESC, country;
