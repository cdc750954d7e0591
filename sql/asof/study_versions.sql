-- The versions a snapshot shows. Their records, which a published segment keeps in its record file alone, go
-- into the snapshot's own record file (ingest/snapshot.py, asof/record_sources.sql). Caller appends ORDER BY.
SELECT t.*
FROM read_parquet($files, union_by_name = true) AS t
SEMI JOIN current_versions AS c ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
