-- How many studies a /api/v2/studies request finds ({table}: its matches, made by matches_table.sql).
SELECT count(*) FROM {table}
