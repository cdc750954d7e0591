-- state_counts: one row for state.json: current studies, all versions, quarantined records ($quarantine files).
SELECT (SELECT count(*) FROM current_versions) AS studies, (SELECT count(*) FROM all_versions) AS versions,
       (SELECT count(*) FROM read_parquet($quarantine)) AS quarantined
