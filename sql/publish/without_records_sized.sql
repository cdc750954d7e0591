-- without_records.sql for a file written before study_versions had record_bytes: the size of each record it is
-- about to lose, last, where a newer file has it.
SELECT * EXCLUDE (raw), strlen(raw) AS record_bytes FROM read_parquet($file)
