-- How the Python API calls get_trial (parameters bound).
SELECT * FROM get_trial($nct_id)
