-- stats_recruitment_funnel(condition, intervention, sponsor, date_before, as_of): one row per stage of a trial's life,
-- in order: stage (1 not yet recruiting, 2 recruiting (incl. by invitation), 3 active, not recruiting,
-- 4 completed, 5 stopped early (terminated, withdrawn, suspended), 6 unknown), trials, share.
s AS (SELECT * FROM scope),
staged AS (
    SELECT CASE overall_status
        WHEN 'NOT_YET_RECRUITING' THEN 1 WHEN 'RECRUITING' THEN 2 WHEN 'ENROLLING_BY_INVITATION' THEN 2
        WHEN 'ACTIVE_NOT_RECRUITING' THEN 3 WHEN 'COMPLETED' THEN 4
        WHEN 'TERMINATED' THEN 5 WHEN 'WITHDRAWN' THEN 5 WHEN 'SUSPENDED' THEN 5 ELSE 6 END AS stage_no
    FROM s
)
SELECT ['not yet recruiting', 'recruiting', 'active, not recruiting', 'completed', 'stopped early', 'unknown'][stage_no]
           AS stage,
       count(*) AS trials, share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM staged GROUP BY stage_no ORDER BY stage_no;
