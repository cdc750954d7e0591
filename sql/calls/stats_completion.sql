-- How the Python API calls stats_completion (parameters bound).
SELECT * FROM stats_completion($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
