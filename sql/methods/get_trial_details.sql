-- get_trial_details(nct_id): get_trial plus eligibility (criteria text, ages, sex, healthy volunteers),
-- sites, keywords and MeSH terms. get_trial_details_many(nct_ids): (k, nct_id, card, the detail columns) for
-- each ID found.
CREATE OR REPLACE MACRO get_trial_details_many(wanted_ids) AS TABLE
SELECT t.k, t.nct_id, t.card, d.* EXCLUDE (nct_id)
FROM get_trial_many(wanted_ids) AS t
JOIN trial_detail AS d USING (nct_id)
ORDER BY t.k;

CREATE OR REPLACE MACRO get_trial_details(wanted_id) AS TABLE
SELECT unnest(trial_of(card)), * EXCLUDE (k, nct_id, card)
FROM get_trial_details_many([wanted_id]);
