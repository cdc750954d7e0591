-- stats_enrollment(condition, intervention, sponsor, date_before, as_of): one row per enrollment band ('1-50',
-- '51-100', '101-500', '501-1000', '1000+', 'unknown'; zero counts as unknown): enrollment, trials, share.
s AS (SELECT * FROM scope),
banded AS (
    SELECT CASE WHEN enrollment IS NULL OR enrollment <= 0 THEN 6 WHEN enrollment <= 50 THEN 1
                WHEN enrollment <= 100 THEN 2 WHEN enrollment <= 500 THEN 3 WHEN enrollment <= 1000 THEN 4
                ELSE 5 END AS band
    FROM s
)
SELECT ['1-50', '51-100', '101-500', '501-1000', '1000+', 'unknown'][band] AS enrollment, count(*) AS trials,
       share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM banded GROUP BY band ORDER BY band;
