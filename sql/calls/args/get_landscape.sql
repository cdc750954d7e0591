-- A call's arguments, bound into the one row of get_landscape_args (args/get_landscape_table.sql).
UPDATE get_landscape_args SET conditions = $conditions, dates_before = $dates_before::DATE[], top_ns = $top_ns,
    today = current_date;
