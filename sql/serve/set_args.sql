-- A v2 search's values, bound into serve_args' one row (args_table.sql).
UPDATE serve_args SET texts = $texts::VARCHAR[], text_lists = $text_lists::VARCHAR[][],
                      integers = $integers::BIGINT[],
                      numbers = $numbers::DOUBLE[], dates = $dates::DATE[], flags = $flags::BOOLEAN[];
