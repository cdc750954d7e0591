-- stats_by_study_type(condition, intervention, sponsor, date_before, as_of): one row per study type
-- (INTERVENTIONAL, OBSERVATIONAL, EXPANDED_ACCESS, '(none)'): study_type, trials, share.
s AS (SELECT * FROM scope)
SELECT coalesce(study_type, '(none)') AS study_type, count(*) AS trials,
       share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM s GROUP BY 1 ORDER BY trials DESC, study_type;
