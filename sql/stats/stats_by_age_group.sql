-- stats_by_age_group(condition, intervention, sponsor, date_before, as_of): one row per standard age group (CHILD,
-- ADULT, OLDER_ADULT; a trial counts in every group it admits): age_group, trials, share (of trials in scope,
-- so shares can sum past 1).
CREATE OR REPLACE MACRO stats_by_age_group(condition_query, intervention_query, sponsor_query, cutoff, as_of := NULL) AS TABLE
WITH s AS (SELECT * FROM analytics_scope(condition_query, intervention_query, sponsor_query, cutoff, as_of))
SELECT age_group, count(*) AS trials, share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM (SELECT DISTINCT nct_id, unnest(std_ages) AS age_group FROM s)
GROUP BY 1 ORDER BY CASE age_group WHEN 'CHILD' THEN 1 WHEN 'ADULT' THEN 2 ELSE 3 END;
