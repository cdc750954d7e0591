-- sync_runs: one row per load, sync, rebuild or history run, completed, failed or interrupted, from
-- warehouse/runs.ndjson ($runs).
SELECT
    run_id, command, source, origin, status,
    started_at::TIMESTAMP AS started_at, finished_at::TIMESTAMP AS finished_at,
    data_timestamp, records, versions_added, studies_added, studies_changed, unchanged, quarantined,
    removed, pages, retries, note
FROM read_json($runs,
               columns = {run_id: 'VARCHAR', command: 'VARCHAR', source: 'VARCHAR', origin: 'VARCHAR',
                          status: 'VARCHAR', started_at: 'VARCHAR', finished_at: 'VARCHAR',
                          data_timestamp: 'VARCHAR', records: 'BIGINT', versions_added: 'BIGINT',
                          studies_added: 'BIGINT', studies_changed: 'BIGINT', unchanged: 'BIGINT',
                          quarantined: 'BIGINT', removed: 'BIGINT', pages: 'BIGINT', retries: 'BIGINT',
                          note: 'VARCHAR'},
               format = 'newline_delimited')
ORDER BY started_at, run_id
