-- How the Python API calls stats_by_facility (parameters bound).
SELECT * FROM stats_by_facility($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
