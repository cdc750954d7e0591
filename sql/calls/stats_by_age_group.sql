-- How the Python API calls stats_by_age_group (parameters bound).
SELECT * FROM stats_by_age_group($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
