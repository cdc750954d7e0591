-- The arguments of the Python API's calls to get_landscape, one row per call (k: its position from 1), bound from
-- lists. The call's query (calls/get_landscape.sql) reads them here, so it is planned once per connection and then
-- only executed: planning a method's macros took up to a third of a call. A temporary table: the catalog stays
-- read-only.
-- today: the reference day when a call has no date_before, taken when the call is made (current_date in
-- the prepared query would make DuckDB plan it again at every execution).
CREATE TEMP TABLE IF NOT EXISTS get_landscape_args (
    k INTEGER,
    condition VARCHAR,
    date_before DATE,
    top_n INTEGER,
    today DATE
);
DELETE FROM get_landscape_args;
INSERT INTO get_landscape_args
SELECT generate_subscripts($conditions, 1), unnest($conditions), unnest($dates_before::DATE[]), unnest($top_ns),
       current_date;
