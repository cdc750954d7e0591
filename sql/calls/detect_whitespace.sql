-- How the Python API calls detect_whitespace (parameters bound).
SELECT * FROM detect_whitespace($drug, $condition, $date_before::DATE)
