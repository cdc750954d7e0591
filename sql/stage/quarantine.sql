-- quarantine rows of one batch, from the NDJSON file $rejects written by ingest/normalize.py.
SELECT receipt_id, origin, locator, nct_id, reason, record_text, quarantined_at::TIMESTAMP AS quarantined_at
FROM read_json($rejects,
               columns = {receipt_id: 'BIGINT', origin: 'VARCHAR', locator: 'VARCHAR', nct_id: 'VARCHAR',
                          reason: 'VARCHAR', record_text: 'VARCHAR', quarantined_at: 'VARCHAR'},
               format = 'newline_delimited',
               maximum_object_size = 1073741824)
ORDER BY receipt_id, locator
