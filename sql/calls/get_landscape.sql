-- How the Python API calls get_landscape, for one call or a batch (parameters bound: one list entry per
-- call): one row per call, by its position k.
SELECT * FROM get_landscape_many($conditions, $dates_before::DATE[], $top_ns)
