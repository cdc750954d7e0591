-- A call's arguments, bound into the one row of search_trials_args (args/search_trials_table.sql).
UPDATE search_trials_args SET drugs = $drugs, conditions = $conditions, dates_before = $dates_before::DATE[],
    phase_filters = $phase_filters, max_results = $max_results;
