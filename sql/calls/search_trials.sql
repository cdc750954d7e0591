-- How the Python API calls search_trials, for one call or a batch (its arguments: args/search_trials.sql,
-- whose table this reads): each call's trials as (k, study_no, relevance), in order; their cards come from
-- calls/cards.sql. Planned once per connection (PREPARE), then executed for each call.
SELECT k, study_no, relevance
FROM search_trials_many((SELECT list(drug ORDER BY k) FROM search_trials_args),
                        (SELECT list(condition ORDER BY k) FROM search_trials_args),
                        (SELECT list(date_before ORDER BY k) FROM search_trials_args),
                        (SELECT list(phase_filter ORDER BY k) FROM search_trials_args),
                        (SELECT list(max_results ORDER BY k) FROM search_trials_args));
