-- The arguments of the Python API's calls to detect_whitespace, one row per call (k: its position from 1), bound
-- from lists. The call's query (calls/detect_whitespace.sql) reads them here, so it is planned once per connection
-- and then only executed: planning a method's macros took up to a third of a call. A temporary table: the catalog
-- stays read-only.
CREATE TEMP TABLE IF NOT EXISTS detect_whitespace_args (
    k INTEGER,
    drug VARCHAR,
    condition VARCHAR,
    date_before DATE
);
DELETE FROM detect_whitespace_args;
INSERT INTO detect_whitespace_args
SELECT generate_subscripts($drugs, 1), unnest($drugs), unnest($conditions), unnest($dates_before::DATE[]);
