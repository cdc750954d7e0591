-- How the Python API calls search_trials, for one call or a batch (its arguments: args/search_trials.sql,
-- whose table this reads): each call's trials as (k, card_no, version_no, relevance), in order; their cards come
-- from calls/cards.sql. Planned once per connection (PREPARE), then executed for each call.
SELECT k, card_no, version_no, relevance
FROM search_trials_many((SELECT drug FROM search_trials_args),
                        (SELECT condition FROM search_trials_args),
                        (SELECT date_before FROM search_trials_args),
                        (SELECT as_of FROM search_trials_args),
                        (SELECT phase_filter FROM search_trials_args),
                        (SELECT max_results FROM search_trials_args),
                        relax_drugs := $relax_drug, relax_conditions := $relax_condition,
                        hits_in_plan := $many_calls);
