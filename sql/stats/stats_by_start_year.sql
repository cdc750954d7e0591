-- stats_by_start_year(condition, intervention, sponsor, date_before, as_of): one row per calendar year of the start
-- date: start_year, trials. Oldest first; a last row with start_year NULL counts the trials without a start date.
s AS (SELECT start_day FROM scope)
SELECT year(start_day) AS start_year, count(*) AS trials
FROM s
GROUP BY 1 ORDER BY start_year NULLS LAST;
