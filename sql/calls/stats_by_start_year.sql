-- How the Python API calls stats_by_start_year (parameters bound).
SELECT * FROM stats_by_start_year($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
