-- stats_by_duration(condition, intervention, sponsor, date_before, as_of): one row per band of planned or actual duration
-- from start to primary completion: duration ('< 6 months', '6-12 months', '1-2 years', '2-5 years', '5+ years',
-- 'unknown'), trials, share. In band order.
s AS (SELECT * FROM scope),
banded AS (
    SELECT CASE
        WHEN start_day IS NULL OR completion_day IS NULL OR completion_day < start_day THEN 6
        WHEN completion_day < start_day + INTERVAL 6 MONTH THEN 1
        WHEN completion_day < start_day + INTERVAL 12 MONTH THEN 2
        WHEN completion_day < start_day + INTERVAL 24 MONTH THEN 3
        WHEN completion_day < start_day + INTERVAL 60 MONTH THEN 4
        ELSE 5 END AS band
    FROM s
)
SELECT ['< 6 months', '6-12 months', '1-2 years', '2-5 years', '5+ years', 'unknown'][band] AS duration,
       count(*) AS trials, share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM banded GROUP BY band ORDER BY band;
