-- documented_columns: the columns of one view ($view), with type and COMMENT, in column order.
SELECT column_name, data_type, comment FROM duckdb_columns()
WHERE table_name = $view AND schema_name = 'main' ORDER BY column_index
