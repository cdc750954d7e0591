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
-- The criteria, the catalog's longest texts, are stored zstd-compressed: a fifth of their size, for about 2 ms
-- more a get_trial_details, which decompresses its row's vector (bench/README.md). Only this table's: the
-- cards' texts are read tens at a time.
CREATE TABLE trial_detail (
    version_no BIGINT, nct_id VARCHAR, eligibility_criteria VARCHAR USING COMPRESSION zstd, minimum_age VARCHAR,
    maximum_age VARCHAR, sex VARCHAR, healthy_volunteers BOOLEAN, std_ages VARCHAR[],
    locations STRUCT(facility VARCHAR, status VARCHAR, city VARCHAR, state VARCHAR, zip VARCHAR, country VARCHAR,
                     lat DOUBLE, lon DOUBLE)[],
    keywords VARCHAR[], condition_mesh_terms VARCHAR[], condition_ancestor_terms VARCHAR[],
    intervention_mesh_terms VARCHAR[]
);
-- for each range of studies:
INSERT INTO trial_detail FROM trial_detail_rows($study_from, $study_to, $nct_from, $nct_to);
-- after the ranges:
-- eligibility_text: each version's criteria normalised once (search_norm), in trial_detail's order, for search's
-- eligibility filter: normalising every version's criteria at each call took 15 s at 500,000 studies. A table of its
-- own, read after trial_detail is built: carried through trial_detail's sort, the second long text made it spill.
CREATE TABLE eligibility_text (version_no BIGINT, norm VARCHAR USING COMPRESSION zstd);
INSERT INTO eligibility_text SELECT version_no, search_norm(eligibility_criteria) FROM trial_detail;
