-- The next chunk of studies to put back together: $lo <= nct_id < $hi (aact_args is the reassembly's one row of
-- arguments, made by ingest/aact.py: the chunk's bounds and the mapping's constants).
UPDATE aact_args SET lo = $lo, hi = $hi;
