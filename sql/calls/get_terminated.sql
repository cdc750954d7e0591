-- How the Python API calls get_terminated, for one call or a batch (parameters bound: one list entry per
-- call): each call's trials as (k, study_no, relevance), in order; their cards (stopped_card) come from
-- calls/cards.sql.
SELECT k, study_no, relevance FROM get_terminated_many($queries, $dates_before::DATE[], $max_results)
