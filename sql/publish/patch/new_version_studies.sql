-- The studies with a version in the segments the previous state did not read ($files: their study_versions).
SELECT DISTINCT nct_id FROM read_parquet($files)
