-- stats_by_intervention_type(condition, intervention, sponsor, date_before, as_of): one row per intervention type as the
-- registry displays it (Drug, Device, Behavioral, ...): intervention_type, trials (with at least one such
-- intervention), share (of trials in scope). Most trials first.
CREATE OR REPLACE MACRO stats_by_intervention_type(condition_query, intervention_query, sponsor_query, cutoff, as_of := NULL) AS TABLE
WITH s AS (SELECT * FROM analytics_scope(condition_query, intervention_query, sponsor_query, cutoff, as_of))
SELECT intervention_type, count(*) AS trials, share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM (SELECT DISTINCT nct_id, unnest(list_transform(interventions, i -> i.intervention_type)) AS intervention_type FROM s)
WHERE intervention_type <> ''
GROUP BY 1 ORDER BY trials DESC, intervention_type;
