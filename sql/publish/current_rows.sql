-- The rows of one normalised table ($files: its segment files) that belong to current versions, in a total order
-- (key columns come first in every table), so the same warehouse state always writes the same Parquet bytes.
SELECT t.*
FROM read_parquet($files, union_by_name = true) AS t
SEMI JOIN current_versions AS c ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
ORDER BY ALL
