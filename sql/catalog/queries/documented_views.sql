-- documented_views: the catalog's own views (tables and analytics), with their COMMENT, by name.
SELECT view_name, comment FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' ORDER BY view_name
