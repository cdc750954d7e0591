-- How the Python API calls search_trials (parameters bound).
SELECT * FROM search_trials($drug, $condition, $date_before::DATE, $phase_filter, $max_results)
