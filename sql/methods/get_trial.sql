-- get_trial(nct_id): the contract's Trial for one study, or no row. An NCT alias resolves to its study.
-- get_trial_many(nct_ids): (k, nct_id, card) for each ID found, k its position from 1; the card's JSON is
-- what the Python API reads.
CREATE OR REPLACE MACRO get_trial_many(wanted_ids) AS TABLE
WITH wanted AS (SELECT generate_subscripts(wanted_ids, 1) AS k, upper(unnest(wanted_ids)) AS wanted_id),
resolved AS (
    SELECT w.k, coalesce(a.nct_id, w.wanted_id) AS nct_id
    FROM wanted AS w
    LEFT JOIN nct_alias AS a ON a.alias_nct_id = w.wanted_id
)
SELECT r.k, t.nct_id, t.card
FROM resolved AS r
JOIN trial_card AS t USING (nct_id)
ORDER BY r.k;

CREATE OR REPLACE MACRO get_trial(wanted_id) AS TABLE
SELECT unnest(trial_of(card)) FROM get_trial_many([wanted_id]);
