-- How the Python API calls stats_results_reporting (parameters bound).
SELECT * FROM stats_results_reporting($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
