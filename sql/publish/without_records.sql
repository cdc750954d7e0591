-- A segment's study_versions without the records its record file now holds (ingest/publish.py), in the same row
-- order (a record file's row i is the file's row i).
SELECT * EXCLUDE (raw) FROM read_parquet($file)
