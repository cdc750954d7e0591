-- How the Python API calls get_terminated (parameters bound).
SELECT * FROM get_terminated($query, $date_before::DATE, $max_results)
