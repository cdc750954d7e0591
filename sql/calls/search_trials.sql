-- How the Python API calls search_trials, for one call or a batch (parameters bound: one list entry per call):
-- each call's trials as (k, study_no, relevance), in order; their cards come from calls/cards.sql.
SELECT k, study_no, relevance
FROM search_trials_many($drugs, $conditions, $dates_before::DATE[], $phase_filters, $max_results)
