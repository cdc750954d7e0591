-- How the Python API calls detect_whitespace, for one call or a batch (parameters bound: one list entry per
-- call): one row per call, by its position k.
SELECT * FROM detect_whitespace_many($drugs, $conditions, $dates_before::DATE[])
