-- How the Python API calls get_terminated, for one call or a batch (its arguments: args/get_terminated.sql,
-- whose table this reads): each call's trials as (k, card_no, version_no, relevance), in order; their cards
-- (stopped_card) come from calls/stopped_cards.sql. Planned once per connection, then executed.
SELECT k, card_no, version_no, relevance
FROM get_terminated_many((SELECT query FROM get_terminated_args),
                         (SELECT date_before FROM get_terminated_args),
                         (SELECT as_of FROM get_terminated_args),
                         (SELECT max_results FROM get_terminated_args),
                         current_state := $current_state, relax_queries := $relax_query);
