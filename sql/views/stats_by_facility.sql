-- stats_by_facility(condition, intervention, sponsor, date_before): one row per site facility (with its city and
-- country): facility, city, country, trials. Most trials first, the top 100.
CREATE OR REPLACE MACRO stats_by_facility(condition_query, intervention_query, sponsor_query, cutoff) AS TABLE
WITH s AS (SELECT nct_id FROM analytics_scope(condition_query, intervention_query, sponsor_query, cutoff)),
sites AS (SELECT d.nct_id, unnest(d.locations) AS x FROM trial_detail AS d SEMI JOIN s USING (nct_id))
SELECT x.facility AS facility, x.city AS city, x.country AS country, count(DISTINCT nct_id) AS trials
FROM sites WHERE x.facility IS NOT NULL
GROUP BY ALL ORDER BY trials DESC, facility, city, country LIMIT 100;
