-- stats_by_country(condition, intervention, sponsor, date_before, as_of): one row per country with sites: country,
-- trials (with at least one site there), sites, lat/lon (the mean of its sites, for maps). Most trials first.
CREATE OR REPLACE MACRO stats_by_country(condition_query, intervention_query, sponsor_query, cutoff, as_of := NULL) AS TABLE
WITH s AS (SELECT version_no FROM analytics_scope(condition_query, intervention_query, sponsor_query, cutoff, as_of))
SELECT country, count(*) AS trials, sum(sites) AS sites,
       round(sum(lat_sum) / nullif(sum(lat_n), 0), 3) AS lat, round(sum(lon_sum) / nullif(sum(lon_n), 0), 3) AS lon
FROM study_country SEMI JOIN s USING (version_no)
GROUP BY country ORDER BY trials DESC, country;
