-- stats_top_conditions(condition, intervention, sponsor, date_before, as_of): one row per condition as the records
-- name it (case and spacing aside; written as most of its trials write it): condition, trials (listing it), share
-- (of the trials in scope). Most trials first, the top 100.
s AS (SELECT nct_id, version_no FROM scope),
-- The conditions of the scope's versions, the record's list in each card head (trial_text): the conditions table
-- joined to the scope was read whole for any scope, and a prepared call reading its files is planned every run.
named AS (
    SELECT DISTINCT nct_id, lower(trim(condition)) AS condition_key, trim(condition) AS condition
    FROM (SELECT s.nct_id, unnest(card_conditions(x.card_head)) AS condition
          FROM s JOIN trial_text AS x USING (version_no))
    WHERE trim(condition) <> ''
),
top AS (
    SELECT condition_key, count(DISTINCT nct_id) AS trials FROM named
    GROUP BY condition_key ORDER BY trials DESC, condition_key LIMIT 100
),
spelled AS (SELECT condition_key, condition, count(*) AS n FROM named SEMI JOIN top USING (condition_key) GROUP BY ALL)
SELECT first(w.condition ORDER BY w.n DESC, w.condition) AS condition, t.trials,
       share_of(t.trials, (SELECT count(*) FROM s)) AS share
FROM top AS t JOIN spelled AS w USING (condition_key)
GROUP BY t.condition_key, t.trials ORDER BY t.trials DESC, t.condition_key;
