-- How the Python API calls get_trial_details (parameters bound).
SELECT * FROM get_trial_details($nct_id)
