-- How the Python API calls stats_enrollment (parameters bound).
SELECT * FROM stats_enrollment($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
