-- A call's arguments, bound into the one row of get_terminated_args (args/get_terminated_table.sql).
UPDATE get_terminated_args SET queries = $queries, dates_before = $dates_before::DATE[], max_results = $max_results;
