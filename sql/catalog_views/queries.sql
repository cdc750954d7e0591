-- The catalog's views over files: one-statement pieces. Each query begins with a line `-- name: <name>` and is read
-- by read_sql("catalog_views/queries.sql", "<name>") (ctmirror/core/sqlfiles.py).

-- name: changed_rows
-- The rows of a catalog view ({view}: one of its views of study rows, filled in by ingest/catalog.py) that belong
-- to the studies a patch replaces: what the index's files read to build those studies' rows alone.
CREATE VIEW patch.{view} AS
SELECT * FROM catalog.{view} WHERE nct_id IN (SELECT nct_id FROM patch.changed_study)

-- name: file_list
-- The files of a view, as paths relative to the folder the catalog belongs to ({relative}: a list of quoted
-- relative paths). A reader sets the variable ctmirror_root to where that folder is now (ctmirror.read.mirror), so a
-- warehouse answers the same from any working directory and after being moved or copied; a plain `duckdb`
-- session without it reads the folder where the catalog was built ({root}).
list_transform({relative}, f -> coalesce(getvariable('ctmirror_root'), {root}) || '/' || f)

-- name: over_files
-- A state's view over Parquet files ({view}: a table name; {files}: a list of quoted paths, filled in by
-- ctmirror/catalog.py since DuckDB binds no parameters in DDL).
CREATE OR REPLACE VIEW {view} AS SELECT * FROM read_parquet({files}, union_by_name = true)
