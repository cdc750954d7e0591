-- A snapshot's sync_runs: empty (snapshot.json says which state and data timestamp it came from).
SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS command, NULL::VARCHAR AS source, NULL::VARCHAR AS origin,
       NULL::VARCHAR AS status, NULL::TIMESTAMP AS started_at, NULL::TIMESTAMP AS finished_at,
       NULL::VARCHAR AS data_timestamp, NULL::BIGINT AS records, NULL::BIGINT AS versions_added,
       NULL::BIGINT AS studies_added, NULL::BIGINT AS studies_changed, NULL::BIGINT AS unchanged,
       NULL::BIGINT AS quarantined, NULL::BIGINT AS removed, NULL::BIGINT AS pages, NULL::BIGINT AS retries,
       NULL::VARCHAR AS note
WHERE false
