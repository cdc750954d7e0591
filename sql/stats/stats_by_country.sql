-- stats_by_country(condition, intervention, sponsor, date_before): one row per country with sites: country,
-- trials (with at least one site there), sites, lat/lon (the mean of its sites, for maps). Most trials first.
CREATE OR REPLACE MACRO stats_by_country(condition_query, intervention_query, sponsor_query, cutoff) AS TABLE
WITH s AS (SELECT nct_id FROM analytics_scope(condition_query, intervention_query, sponsor_query, cutoff))
SELECT country, count(*) AS trials, sum(sites) AS sites,
       round(sum(lat_sum) / nullif(sum(lat_n), 0), 3) AS lat, round(sum(lon_sum) / nullif(sum(lon_n), 0), 3) AS lon
FROM study_country SEMI JOIN s USING (nct_id)
GROUP BY country ORDER BY trials DESC, country;
