-- stats_by_sponsor_class(condition, intervention, sponsor, date_before, as_of): one row per lead sponsor class
-- (INDUSTRY, NIH, FED, OTHER, ...; '(none)'): sponsor_class, trials, share.
s AS (SELECT * FROM scope)
SELECT coalesce(sponsor_class, '(none)') AS sponsor_class, count(*) AS trials,
       share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM s GROUP BY 1 ORDER BY trials DESC, sponsor_class;
