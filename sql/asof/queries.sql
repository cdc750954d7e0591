-- A snapshot's one-statement lookups. Each query begins with a line `-- name: <name>` and is read by
-- read_sql("asof/queries.sql", "<name>") (ctmirror/core/sqlfiles.py).

-- name: exact_counts
-- How many studies a snapshot shows, and how many of them exactly as the registry had them (as_of_exact).
SELECT count(*) FILTER (WHERE as_of_exact) AS exact, count(*) AS studies FROM current_versions

-- name: exact_only
-- An exact-only snapshot (`ctmirror snapshot --exact-only`): the version map keeps only the studies whose version of
-- the cutoff day is held; reconstructed ones are left out of every table.
DELETE FROM current_versions WHERE NOT as_of_exact

-- name: row_count
-- The rows of one snapshot table ($file), for snapshot.json.
SELECT count(*) FROM read_parquet($file)
