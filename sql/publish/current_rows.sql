-- The rows of one normalised table ($files: its segment files) that belong to current versions. The caller
-- appends ORDER BY the table's key (its file's `-- key:` line): a total order, so the same warehouse state always
-- writes the same Parquet bytes.
SELECT t.*
FROM read_parquet($files, union_by_name = true) AS t
SEMI JOIN current_versions AS c ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
