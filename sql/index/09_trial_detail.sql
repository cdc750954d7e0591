-- trial_detail: one row per current study with what get_trial_details adds to the Trial: eligibility, sites,
-- keywords, MeSH terms; a lookup reads one row of a table sorted by nct_id.
CREATE TABLE trial_detail AS
SELECT
    s.nct_id, s.eligibility_criteria, s.minimum_age, s.maximum_age, s.sex, s.healthy_volunteers, s.std_ages,
    d.locations, d.keywords, d.condition_mesh_terms, d.condition_ancestor_terms, d.intervention_mesh_terms
FROM studies AS s
JOIN study_details AS d USING (nct_id)
ORDER BY s.nct_id;
