-- The rows of one normalised table ($files: its segment files) that belong to current versions, in the files'
-- order (each segment's file is sorted by the table's key): so the same warehouse state always writes the same
-- Parquet bytes, without the sort of every current row that ordering them by key across segments took (a third
-- of publishing them).
SELECT t.*
FROM read_parquet($files, union_by_name = true) AS t
SEMI JOIN current_versions AS c ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
