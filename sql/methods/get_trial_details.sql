-- get_trial_details(nct_id): get_trial plus eligibility (criteria text, ages, sex, healthy volunteers),
-- sites, keywords and MeSH terms. get_trial_details_many(nct_ids, as_ofs): (k, nct_id, card, the detail columns)
-- for each ID found, as get_trial_many shows it.
CREATE OR REPLACE MACRO get_trial_details_many(wanted_ids, as_ofs) AS TABLE
SELECT t.k, t.nct_id, t.card, d.* EXCLUDE (version_no, nct_id)
FROM get_trial_many(wanted_ids, as_ofs) AS t
JOIN trial_detail AS d USING (version_no)
ORDER BY t.k;

CREATE OR REPLACE MACRO get_trial_details(wanted_id, as_of := NULL) AS TABLE
SELECT unnest(trial_of(card)), * EXCLUDE (k, nct_id, card)
FROM get_trial_details_many([wanted_id], [as_of]);
