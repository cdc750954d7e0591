-- trial_detail: one row per version (version_no) with what get_trial_details adds to the Trial: eligibility,
-- sites, keywords, MeSH terms; a lookup reads one row of a table sorted by version_no. Built a range of studies at
-- a time (ingest/catalog.py), as trial_card is: each row carries a study's every site.
CREATE OR REPLACE TEMP MACRO trial_detail_rows(study_from, study_to, nct_from, nct_to) AS TABLE
SELECT
    v.version_no, s.nct_id, s.eligibility_criteria, s.minimum_age, s.maximum_age, s.sex, s.healthy_volunteers,
    s.std_ages, d.locations, d.keywords, d.condition_mesh_terms, d.condition_ancestor_terms,
    d.intervention_mesh_terms
FROM all_studies AS s
JOIN study_version AS v USING (nct_id, content_hash)
JOIN all_study_details AS d USING (nct_id, content_hash)
WHERE v.study_no BETWEEN study_from AND study_to AND s.nct_id BETWEEN nct_from AND nct_to
  AND d.nct_id BETWEEN nct_from AND nct_to
ORDER BY v.version_no;
CREATE TABLE trial_detail AS FROM trial_detail_rows(1, 0, '', '');
-- for each range of studies:
INSERT INTO trial_detail FROM trial_detail_rows($study_from, $study_to, $nct_from, $nct_to);
