-- How the Python API calls stats_recruitment_funnel (parameters bound).
SELECT * FROM stats_recruitment_funnel($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
