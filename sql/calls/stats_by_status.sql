-- How the Python API calls stats_by_status (parameters bound).
SELECT * FROM stats_by_status($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
