-- A segment's study_versions without the records its record file now holds (ingest/publish.py), in the same row
-- order (a record file's row i is the file's row i), nor where a zip member held one (raw_member, in it too).
SELECT COLUMNS(lambda c: c NOT IN ('raw', 'raw_member')) FROM read_parquet($file)
