-- References as of the cutoff: only those of versions updated on or before it (a reference cannot be dated,
-- so a reconstructed study shows none). The caller appends ORDER BY the table's key.
SELECT t.*
FROM read_parquet($files, union_by_name = true) AS t
SEMI JOIN (SELECT * FROM current_versions WHERE as_of_exact) AS c
    ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
