-- The ranges of studies the index's per-version tables are built in (ingest/catalog.py), $per_range studies
-- each, in study_no order: the first and last study_no of each and their NCT IDs, which bound the rows read from
-- the segments (their files are sorted by NCT ID, so a range reads the row groups holding it).
SELECT min(study_no) AS study_from, max(study_no) AS study_to, min(nct_id) AS nct_from, max(nct_id) AS nct_to
FROM (SELECT *, (row_number() OVER (ORDER BY study_no) - 1) // $per_range AS piece FROM study_number)
GROUP BY piece
ORDER BY study_from
