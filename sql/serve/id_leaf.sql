-- The versions of the studies whose NCT ID, or an alias of it, is one of $ids (upper-cased).
SELECT v.version_no, 1.0 AS score
FROM study_version AS v
WHERE v.nct_id IN (SELECT unnest($ids::VARCHAR[]))
   OR v.nct_id IN (SELECT nct_id FROM nct_alias WHERE alias_nct_id IN (SELECT unnest($ids::VARCHAR[])))
