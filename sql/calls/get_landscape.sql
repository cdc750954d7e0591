-- How the Python API calls get_landscape, for one call or a batch (its arguments: args/get_landscape.sql, whose
-- table this reads): one row per call, by its position k. Planned once per connection, then executed.
SELECT *
FROM get_landscape_many((SELECT list(condition ORDER BY k) FROM get_landscape_args),
                        (SELECT list(date_before ORDER BY k) FROM get_landscape_args),
                        (SELECT list(top_n ORDER BY k) FROM get_landscape_args),
                        today := (SELECT any_value(today) FROM get_landscape_args));
