-- stats_by_phase(condition, intervention, sponsor, date_before, as_of): one row per display phase ('(none)' when the
-- registry gives none): phase, trials, share (of the trials in scope). Most trials first.
s AS (SELECT * FROM scope)
SELECT CASE WHEN phase = '' THEN '(none)' ELSE phase END AS phase, count(*) AS trials,
       share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM s GROUP BY 1 ORDER BY trials DESC, phase;
