-- An AACT load's one-statement steps. Each query begins with a line `-- name: <name>` and is read by
-- read_sql("aact/queries.sql", "<name>") (ctmirror/core/sqlfiles.py).

-- name: chunk_bounds
-- The next chunk of studies to put back together: $lo <= nct_id < $hi (aact_args is the reassembly's one row of
-- arguments, made by ingest/aact.py: the chunk's bounds and the mapping's constants).
UPDATE aact_args SET lo = $lo, hi = $hi;

-- name: unnamed_studies
-- Rows of studies.txt without an nct_id: nothing could load them, so the dump is refused.
SELECT count(*) FROM aact_studies WHERE nct_id IS NULL OR trim(nct_id) = '';
