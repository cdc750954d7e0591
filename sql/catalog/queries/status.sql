-- What `ctmirror status` reads from a catalog. Each query begins with a line `-- name: <name>` and is read by
-- read_sql("catalog/queries/status.sql", "<name>") (ctmirror/core/sqlfiles.py).

-- name: status_by_phase
-- status_by_phase: current studies per display phase, most first.
SELECT CASE WHEN phase = '' THEN '(none)' ELSE phase END AS phase, count(*) AS studies
FROM studies GROUP BY ALL ORDER BY studies DESC, phase

-- name: status_by_status
-- status_by_status: current studies per overall status, most first.
SELECT coalesce(overall_status, '(none)') AS overall_status, count(*) AS studies
FROM studies GROUP BY ALL ORDER BY studies DESC, overall_status

-- name: status_last_run
-- status_last_run: the latest completed load/sync run, with its source and the registry's data timestamp.
SELECT command, source, origin, started_at, finished_at, data_timestamp, records, versions_added, quarantined
FROM sync_runs WHERE status = 'completed' ORDER BY finished_at DESC, run_id LIMIT 1

-- name: documented_columns
-- documented_columns: the columns of one view ($view), with type and COMMENT, in column order.
SELECT column_name, data_type, comment FROM duckdb_columns()
WHERE table_name = $view AND schema_name = 'main' ORDER BY column_index
