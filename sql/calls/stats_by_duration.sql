-- How the Python API calls stats_by_duration (parameters bound).
SELECT * FROM stats_by_duration($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
