-- How the Python API calls get_landscape, for one call or a batch (its arguments: args/get_landscape.sql, whose
-- table this reads): one row per call, by its position k. Planned once per connection, then executed.
SELECT *
FROM get_landscape_many((SELECT condition FROM get_landscape_args),
                        (SELECT date_before FROM get_landscape_args),
                        (SELECT as_of FROM get_landscape_args),
                        (SELECT top_n FROM get_landscape_args),
                        today := (SELECT today FROM get_landscape_args),
                        current_state := $current_state,
                        status_lists := (SELECT status FROM get_landscape_args),
                        phase_lists := (SELECT phase FROM get_landscape_args),
                        location_queries := (SELECT location FROM get_landscape_args),
                        any_filter := $any_filter, relax_conditions := $relax_condition);
