-- status_last_run: the latest completed load/sync run, with its source and the registry's data timestamp.
SELECT command, source, origin, started_at, finished_at, data_timestamp, records, versions_added, quarantined
FROM sync_runs WHERE status = 'completed' ORDER BY finished_at DESC, run_id LIMIT 1
