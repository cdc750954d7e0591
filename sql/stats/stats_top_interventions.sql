-- stats_top_interventions(condition, intervention, sponsor, date_before, as_of): one row per intervention the
-- records name (case and spacing aside; placebo, sham and vehicle left out), written as most of its trials write
-- it and with their type (Drug, Biological, Device, ...): intervention, intervention_type, trials (listing it),
-- share (of the trials in scope). Most trials first, the top 100.
s AS (SELECT nct_id, interventions FROM scope),
-- The interventions of the scope's versions, their cards' own list (trial_card.interventions, which writes a missing
-- type as ''): the interventions table joined to the scope was read whole for any scope.
named AS (
    SELECT DISTINCT nct_id, lower(trim(i.intervention_name)) AS name_key, trim(i.intervention_name) AS name,
           nullif(i.intervention_type, '') AS intervention_type
    FROM (SELECT nct_id, unnest(interventions) AS i FROM s)
    WHERE trim(i.intervention_name) <> '' AND NOT is_placebo(i.intervention_name)
),
top AS (
    SELECT name_key, count(DISTINCT nct_id) AS trials FROM named
    GROUP BY name_key ORDER BY trials DESC, name_key LIMIT 100
),
spelled AS (SELECT name_key, name, intervention_type, count(*) AS n FROM named SEMI JOIN top USING (name_key) GROUP BY ALL)
SELECT first(w.name ORDER BY w.n DESC, w.name, w.intervention_type) AS intervention,
       first(w.intervention_type ORDER BY w.n DESC, w.name, w.intervention_type) AS intervention_type, t.trials,
       share_of(t.trials, (SELECT count(*) FROM s)) AS share
FROM top AS t JOIN spelled AS w USING (name_key)
GROUP BY t.name_key, t.trials ORDER BY t.trials DESC, t.name_key;
