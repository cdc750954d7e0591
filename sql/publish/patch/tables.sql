-- The tables a patch's index build made in its database ($database), besides its list of studies (and the
-- inputs it copied, which ingest/catalog.py leaves out).
SELECT table_name FROM duckdb_tables()
WHERE database_name = $database AND NOT temporary AND table_name <> 'changed_study'
ORDER BY table_name
