-- outcome_text: the versions' outcome measures and descriptions normalised (search_norm), a row each: the v2 API's
-- query.outc reads them (serve/outcome_leaf.sql), as normalising every version's outcomes at each call took 13.6 s
-- at 500,000 studies. A row per text rather than a version's texts joined: an ordered aggregate of every version's
-- texts ran out of the writer's memory at 500,000. Built a range of studies at a time, as trial_detail is.
CREATE TABLE outcome_text (version_no BIGINT, norm VARCHAR USING COMPRESSION zstd);
-- for each range of studies:
INSERT INTO outcome_text
SELECT v.version_no, search_norm(t.text) AS norm
FROM (SELECT nct_id, content_hash, outcome_type, ordinal, 0 AS part, measure AS text FROM all_outcomes
      UNION ALL
      SELECT nct_id, content_hash, outcome_type, ordinal, 1, description FROM all_outcomes) AS t
JOIN study_version AS v USING (nct_id, content_hash)
WHERE t.text IS NOT NULL AND v.study_no BETWEEN $study_from AND $study_to AND t.nct_id BETWEEN $nct_from AND $nct_to
ORDER BY v.version_no, t.outcome_type, t.ordinal, t.part;
