-- How the Python API calls get_trial, for one ID or a batch (its arguments: args/get_trial.sql's table, which this
-- reads): each found trial's card, whose JSON it validates, by the ID's position k. Planned once per connection,
-- then executed: planning the macro costs more than the lookup.
SELECT k, card FROM get_trial_many((SELECT nct_id FROM get_trial_args), (SELECT as_of FROM get_trial_args))
