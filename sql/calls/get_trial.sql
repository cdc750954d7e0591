-- How the Python API calls get_trial, for one ID or a batch (parameters bound): each found trial's card,
-- whose JSON it validates, by the ID's position k.
SELECT k, card FROM get_trial_many($nct_ids, $as_ofs)
