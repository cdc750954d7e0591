-- The catalog's views of study rows (those with an nct_id), and current_version: what the index's files read, of
-- which a patch gives them the changed studies' rows alone (catalog_views/queries.sql (changed_rows)).
SELECT v.view_name
FROM duckdb_views() AS v
WHERE v.database_name = 'catalog' AND NOT v.internal AND NOT v.temporary
  AND v.view_name IN (SELECT table_name FROM duckdb_columns()
                      WHERE database_name = 'catalog' AND column_name = 'nct_id')
UNION ALL
SELECT 'current_version'
ORDER BY 1
