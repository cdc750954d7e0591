-- A call's arguments, bound into the one row of detect_whitespace_args (args/detect_whitespace_table.sql).
UPDATE detect_whitespace_args SET drugs = $drugs, conditions = $conditions, dates_before = $dates_before::DATE[];
