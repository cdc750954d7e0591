-- stats_by_sponsor(condition, intervention, sponsor, date_before, as_of): one row per lead sponsor: sponsor,
-- sponsor_class, trials, total_enrollment. Most trials first, the top 100; '(none)' last: the trials whose record
-- names no lead sponsor.
s AS (SELECT * FROM scope)
(SELECT sponsor, min(sponsor_class) AS sponsor_class, count(*) AS trials, sum(coalesce(enrollment, 0)) AS total_enrollment
 FROM s WHERE sponsor <> '' GROUP BY sponsor ORDER BY trials DESC, sponsor LIMIT 100)
UNION ALL
SELECT '(none)', NULL, count(*), sum(coalesce(enrollment, 0)) FROM s WHERE sponsor = '' HAVING count(*) > 0;
