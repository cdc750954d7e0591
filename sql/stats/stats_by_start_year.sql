-- stats_by_start_year(condition, intervention, sponsor, date_before, as_of): one row per calendar year of the start
-- date: start_year, trials. Oldest first; a last row with start_year NULL counts the trials without a start date.
CREATE OR REPLACE MACRO stats_by_start_year(condition_query, intervention_query, sponsor_query, cutoff, as_of := NULL) AS TABLE
SELECT year(start_day) AS start_year, count(*) AS trials
FROM analytics_scope(condition_query, intervention_query, sponsor_query, cutoff, as_of)
GROUP BY 1 ORDER BY start_year NULLS LAST;
