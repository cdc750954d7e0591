-- documented_views: the catalog's own views (tables and analytics), with their COMMENT, by name; the views of every
-- version's rows (all_<table>) are described once, in the page's header, since their columns are their table's.
SELECT view_name, comment FROM duckdb_views()
WHERE NOT internal AND schema_name = 'main' AND NOT starts_with(view_name, 'all_')
ORDER BY view_name
