-- A state's view over Parquet files ({view}: a table name; {files}: a list of quoted paths, filled in by
-- ctmirror/catalog.py since DuckDB binds no parameters in DDL).
CREATE OR REPLACE VIEW {view} AS SELECT * FROM read_parquet({files}, union_by_name = true)
