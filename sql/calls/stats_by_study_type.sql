-- How the Python API calls stats_by_study_type (parameters bound).
SELECT * FROM stats_by_study_type($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
