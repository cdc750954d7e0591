-- trial_detail: one row per version (version_no) with what get_trial_details adds to the Trial: eligibility,
-- sites, keywords, MeSH terms; a lookup reads one row of a table sorted by version_no.
CREATE TABLE trial_detail AS
SELECT
    v.version_no, s.nct_id, s.eligibility_criteria, s.minimum_age, s.maximum_age, s.sex, s.healthy_volunteers,
    s.std_ages, d.locations, d.keywords, d.condition_mesh_terms, d.condition_ancestor_terms,
    d.intervention_mesh_terms
FROM all_studies AS s
JOIN study_version AS v USING (nct_id, content_hash)
JOIN all_study_details AS d USING (nct_id, content_hash)
ORDER BY v.version_no;
