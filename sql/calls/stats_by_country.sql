-- How the Python API calls stats_by_country (parameters bound).
SELECT * FROM stats_by_country($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
