-- stats_results_reporting(condition, intervention, sponsor, date_before, as_of): one row: completed (trials COMPLETED),
-- with_results (of those, with results posted), reporting_rate, median_delay_days and p90_delay_days (from
-- primary completion to results first posted, for those with both dates).
s AS (SELECT * FROM scope WHERE overall_status = 'COMPLETED')
SELECT count(*) AS completed, count(*) FILTER (WHERE results_posted) AS with_results,
       share_of(count(*) FILTER (WHERE results_posted), count(*)) AS reporting_rate,
       median(date_diff('day', completion_day, results_first_post_date)) FILTER (WHERE results_posted) AS median_delay_days,
       quantile_disc(date_diff('day', completion_day, results_first_post_date), 0.9) FILTER (WHERE results_posted)
           AS p90_delay_days
FROM s;
