-- The tables a patch's index build made in its database ($database), besides its lists of studies and of
-- known and renumbered versions (and the inputs it copied, which ingest/catalog.py leaves out).
SELECT table_name FROM duckdb_tables()
WHERE database_name = $database AND NOT temporary
  AND table_name NOT IN ('changed_study', 'known_version', 'renumbered_version')
ORDER BY table_name
