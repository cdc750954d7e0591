-- stats_by_age_group(condition, intervention, sponsor, date_before, as_of): one row per standard age group (CHILD,
-- ADULT, OLDER_ADULT; a trial counts in every group it admits): age_group, trials, share (of trials in scope,
-- so shares can sum past 1); '(none)' last: the trials whose record gives no age group.
s AS (SELECT * FROM scope)
SELECT age_group, count(*) AS trials, share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM (SELECT DISTINCT nct_id, unnest(CASE WHEN len(coalesce(std_ages, [])) = 0 THEN ['(none)'] ELSE std_ages END)
                                  AS age_group FROM s)
GROUP BY 1 ORDER BY CASE age_group WHEN 'CHILD' THEN 1 WHEN 'ADULT' THEN 2 WHEN 'OLDER_ADULT' THEN 3 ELSE 4 END;
