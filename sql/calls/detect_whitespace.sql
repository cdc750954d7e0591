-- How the Python API calls detect_whitespace, for one call or a batch (its arguments: args/detect_whitespace.sql,
-- whose table this reads): one row per call, by its position k. Planned once per connection, then executed.
SELECT *
FROM detect_whitespace_many((SELECT drug FROM detect_whitespace_args),
                            (SELECT condition FROM detect_whitespace_args),
                            (SELECT date_before FROM detect_whitespace_args),
                            (SELECT as_of FROM detect_whitespace_args),
                            current_state := $current_state,
                            relax_drugs := $relax_drug, relax_conditions := $relax_condition);
