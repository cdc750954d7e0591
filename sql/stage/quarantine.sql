-- quarantine rows of one batch, from the NDJSON file $rejects written by ingest/normalize.py; a record already
-- quarantined for the same reason (known_rejects: a file loaded again) is not added twice. $object_bytes: the
-- longest line's size, at least 16 MB: DuckDB reads in buffers of twice this size, whatever the file holds.
SELECT receipt_id, origin, locator, nct_id, reason, record_text, quarantined_at::TIMESTAMP AS quarantined_at
FROM read_json($rejects,
               columns = {receipt_id: 'BIGINT', origin: 'VARCHAR', locator: 'VARCHAR', nct_id: 'VARCHAR',
                          reason: 'VARCHAR', record_text: 'VARCHAR', quarantined_at: 'VARCHAR'},
               format = 'newline_delimited',
               maximum_object_size = $object_bytes) AS r
WHERE NOT EXISTS (SELECT 1 FROM known_rejects AS k WHERE k.reason = r.reason AND k.text_md5 = md5(r.record_text))
ORDER BY receipt_id, locator
