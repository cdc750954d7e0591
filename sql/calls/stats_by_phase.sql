-- How the Python API calls stats_by_phase (parameters bound).
SELECT * FROM stats_by_phase($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
