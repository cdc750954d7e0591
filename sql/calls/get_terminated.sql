-- How the Python API calls get_terminated, for one call or a batch (its arguments: args/get_terminated.sql,
-- whose table this reads): each call's trials as (k, study_no, relevance), in order; their cards
-- (stopped_card) come from calls/cards.sql. Planned once per connection, then executed.
SELECT k, study_no, relevance
FROM get_terminated_many((SELECT list(query ORDER BY k) FROM get_terminated_args),
                         (SELECT list(date_before ORDER BY k) FROM get_terminated_args),
                         (SELECT list(max_results ORDER BY k) FROM get_terminated_args));
