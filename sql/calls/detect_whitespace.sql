-- How the Python API calls detect_whitespace, for one call or a batch (its arguments: args/detect_whitespace.sql,
-- whose table this reads): one row per call, by its position k. Planned once per connection, then executed.
SELECT *
FROM detect_whitespace_many((SELECT list(drug ORDER BY k) FROM detect_whitespace_args),
                            (SELECT list(condition ORDER BY k) FROM detect_whitespace_args),
                            (SELECT list(date_before ORDER BY k) FROM detect_whitespace_args));
