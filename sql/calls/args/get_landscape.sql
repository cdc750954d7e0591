-- The arguments of the Python API's calls to get_landscape: one row holding, per argument, the list of the
-- calls' values (a call's position in each list is its k), bound. The call's query (calls/get_landscape.sql)
-- reads them here, so it is planned once per connection and then only executed: planning a method's macros
-- took up to a third of a call. Lists rather than a row per call: rebuilding the lists with ordered
-- aggregates took 3-5 ms of every call at 500,000 studies. A temporary table: the catalog stays read-only.
-- today: the reference day when a call has no date_before, taken when the call is made (current_date in
-- the prepared query would make DuckDB plan it again at every execution).
CREATE TEMP TABLE IF NOT EXISTS get_landscape_args (
    conditions VARCHAR[],
    dates_before DATE[],
    top_ns INTEGER[],
    today DATE
);
DELETE FROM get_landscape_args;
INSERT INTO get_landscape_args VALUES ($conditions, $dates_before::DATE[], $top_ns, current_date);
