-- How the Python API calls get_landscape, for one call or a batch (its arguments: args/get_landscape.sql, whose
-- table this reads): one row per call, by its position k. Planned once per connection, then executed.
SELECT *
FROM get_landscape_many((SELECT conditions FROM get_landscape_args),
                        (SELECT dates_before FROM get_landscape_args),
                        (SELECT as_ofs FROM get_landscape_args),
                        (SELECT top_ns FROM get_landscape_args),
                        today := (SELECT today FROM get_landscape_args),
                        current_state := $current_state,
                        status_lists := (SELECT statuses FROM get_landscape_args),
                        phase_lists := (SELECT phases FROM get_landscape_args),
                        location_queries := (SELECT locations FROM get_landscape_args),
                        any_filter := $any_filter, relax_conditions := $relax_conditions);
