-- stats_by_country(condition, intervention, sponsor, date_before): one row per country with sites: country,
-- trials (with at least one site there), sites, lat/lon (the mean of its sites, for maps). Most trials first.
CREATE OR REPLACE MACRO stats_by_country(condition_query, intervention_query, sponsor_query, cutoff) AS TABLE
WITH s AS (SELECT nct_id FROM analytics_scope(condition_query, intervention_query, sponsor_query, cutoff)),
sites AS (SELECT d.nct_id, unnest(d.locations) AS x FROM trial_detail AS d SEMI JOIN s USING (nct_id))
SELECT x.country AS country, count(DISTINCT nct_id) AS trials, count(*) AS sites,
       round(avg(x.lat), 3) AS lat, round(avg(x.lon), 3) AS lon
FROM sites WHERE x.country IS NOT NULL
GROUP BY 1 ORDER BY trials DESC, country;
