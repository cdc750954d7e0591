-- stats_by_intervention_type(condition, intervention, sponsor, date_before, as_of): one row per intervention type as the
-- registry displays it (Drug, Device, Behavioral, ...): intervention_type, trials (with at least one such
-- intervention), share (of trials in scope). Most trials first; '(none)' last: the trials with no typed
-- intervention.
s AS (SELECT * FROM scope)
SELECT intervention_type, count(*) AS trials, share_of(count(*), (SELECT count(*) FROM s)) AS share
FROM (SELECT DISTINCT nct_id, unnest(CASE WHEN len(types) = 0 THEN ['(none)'] ELSE types END) AS intervention_type
      FROM (SELECT nct_id, list_filter(list_transform(coalesce(interventions, []), i -> i.intervention_type),
                                       t -> t <> '') AS types FROM s))
GROUP BY 1 ORDER BY intervention_type = '(none)', trials DESC, intervention_type;
