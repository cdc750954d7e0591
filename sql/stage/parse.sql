-- parsed: every staged record parsed once: canonical JSON text, its md5 content hash, and the extracted structure.
-- $staging is an NDJSON file written by ingest/normalize.py, one {"o": ordinal, "r": receipt_id, "l": locator, "s": study} a line,
-- with "m": [local header offset, compressed size, size, CRC-32, method] where the study is a whole zip member.
-- $object_bytes: the size of its longest line, never below DuckDB's default 16 MB. DuckDB reads the file in buffers
-- of this size, one thread a buffer: at 1 GB a batch was parsed on one thread, taking twice as long.
CREATE OR REPLACE TABLE parsed AS
SELECT
    o AS ordinal,
    r AS receipt_id,
    l AS locator,
    s AS raw,
    m AS raw_member,
    md5(s::VARCHAR) AS content_hash,
    json_transform(s, study_structure()) AS d
FROM read_json($staging,
               columns = {o: 'BIGINT', r: 'BIGINT', l: 'VARCHAR', m: 'UBIGINT[]', s: 'JSON'},
               format = 'newline_delimited',
               maximum_object_size = $object_bytes);
