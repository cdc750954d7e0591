-- stats_by_phase(condition, intervention, sponsor, date_before, as_of): one row per display phase ('(none)' when the
-- registry gives none): phase, trials, share (of the trials in scope). Most trials first.
CREATE OR REPLACE MACRO stats_by_phase(condition_query, intervention_query, sponsor_query, cutoff, as_of := NULL) AS TABLE
WITH s AS (SELECT * FROM analytics_scope(condition_query, intervention_query, sponsor_query, cutoff, as_of))
SELECT CASE WHEN phase = '' THEN '(none)' ELSE phase END AS phase, count(*) AS trials,
       share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM s GROUP BY 1 ORDER BY trials DESC, phase;
