-- get_trial(nct_id): the contract's Trial for one study, or no row. An NCT alias resolves to its study.
-- get_trial_many(nct_ids, as_ofs): (k, nct_id, version_no, card) for each ID found, k its position from 1, as the
-- call's cutoff shows it (as_ofs: each call's strict cutoff; NULL: the current state); the card's JSON is what the
-- Python API reads.
CREATE OR REPLACE MACRO get_trial_many(wanted_ids, as_ofs) AS TABLE
WITH wanted AS (
    SELECT generate_subscripts(wanted_ids, 1) AS k, upper(unnest(wanted_ids)) AS wanted_id,
           unnest(as_ofs)::DATE AS as_of
),
resolved AS (
    SELECT w.k, w.as_of, n.study_no
    FROM wanted AS w
    LEFT JOIN nct_alias AS a ON a.alias_nct_id = w.wanted_id
    JOIN study_number AS n ON n.nct_id = coalesce(a.nct_id, w.wanted_id)
)
SELECT r.k, t.nct_id, t.version_no,
       card_json(x.card_head, x.references_json, t.reconstructed_from, t.overall_status, t.why_stopped,
                 t.results_posted, t.as_of_exact, t.enrollment, t.start_date, t.completion_date, t.withheld) AS card
FROM resolved AS r
JOIN trial_card AS t ON t.study_no = r.study_no
    AND shown_at(t.valid_from, t.valid_to, t.is_current, t.study_first_post_date, NULL, r.as_of,
                 as_of_exact := t.as_of_exact)
JOIN trial_text AS x ON x.version_no = t.version_no
ORDER BY r.k;

CREATE OR REPLACE MACRO get_trial(wanted_id, as_of := NULL) AS TABLE
SELECT unnest(trial_of(card)) FROM get_trial_many([wanted_id], [as_of]);
