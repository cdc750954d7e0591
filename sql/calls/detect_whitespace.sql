-- How the Python API calls detect_whitespace, for one call or a batch (its arguments: args/detect_whitespace.sql,
-- whose table this reads): one row per call, by its position k. Planned once per connection, then executed.
SELECT *
FROM detect_whitespace_many((SELECT drugs FROM detect_whitespace_args),
                            (SELECT conditions FROM detect_whitespace_args),
                            (SELECT dates_before FROM detect_whitespace_args),
                            (SELECT as_ofs FROM detect_whitespace_args),
                            current_state := $current_state,
                            relax_drugs := $relax_drugs, relax_conditions := $relax_conditions);
