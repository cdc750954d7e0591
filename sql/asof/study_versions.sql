-- The versions a snapshot shows, with their raw JSON, so the snapshot stands alone. Caller appends ORDER BY.
SELECT t.*
FROM read_parquet($files, union_by_name = true) AS t
SEMI JOIN current_versions AS c ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
