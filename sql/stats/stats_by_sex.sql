-- stats_by_sex(condition, intervention, sponsor, date_before, as_of): one row per eligible sex (ALL, FEMALE, MALE,
-- '(none)'): sex, trials, share.
s AS (SELECT * FROM scope)
SELECT coalesce(sex, '(none)') AS sex, count(*) AS trials, share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM s GROUP BY 1 ORDER BY trials DESC, sex;
