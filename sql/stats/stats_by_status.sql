-- stats_by_status(condition, intervention, sponsor, date_before, as_of): one row per overall status ('(none)' for
-- records without one): overall_status, trials, share. Most trials first.
s AS (SELECT * FROM scope)
SELECT CASE WHEN overall_status = '' THEN '(none)' ELSE overall_status END AS overall_status, count(*) AS trials,
       share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM s GROUP BY 1 ORDER BY trials DESC, overall_status;
