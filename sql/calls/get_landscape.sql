-- How the Python API calls get_landscape (parameters bound).
SELECT * FROM get_landscape($condition, $date_before::DATE, $top_n)
