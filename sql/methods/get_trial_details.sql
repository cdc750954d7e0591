-- get_trial_details(nct_id): get_trial plus eligibility (criteria text, ages, sex, healthy volunteers),
-- sites, keywords and MeSH terms.
CREATE OR REPLACE MACRO get_trial_details(wanted_id) AS TABLE
SELECT t.*, d.* EXCLUDE (nct_id)
FROM get_trial(wanted_id) AS t
JOIN trial_detail AS d USING (nct_id);
