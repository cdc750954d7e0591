-- The arguments of the Python API's calls to get_terminated, one row per call (k: its position from 1), bound from
-- lists. The call's query (calls/get_terminated.sql) reads them here, so it is planned once per connection and then
-- only executed: planning a method's macros took up to a third of a call. A temporary table: the catalog stays
-- read-only.
CREATE TEMP TABLE IF NOT EXISTS get_terminated_args (
    k INTEGER,
    query VARCHAR,
    date_before DATE,
    max_results INTEGER
);
DELETE FROM get_terminated_args;
INSERT INTO get_terminated_args
SELECT generate_subscripts($queries, 1), unnest($queries), unnest($dates_before::DATE[]), unnest($max_results);
