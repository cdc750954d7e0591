-- How the Python API calls stats_by_sponsor_class (parameters bound).
SELECT * FROM stats_by_sponsor_class($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
