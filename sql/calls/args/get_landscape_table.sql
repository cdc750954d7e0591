-- The arguments of the Python API's calls to get_landscape: one row holding, per argument, the list of the
-- calls' values (a call's position in each list is its k), bound. The call's query (calls/get_landscape.sql)
-- reads them here, so it is planned once per connection and then only executed: planning a method's macros
-- took up to a third of a call. Lists rather than a row per call: rebuilding the lists with ordered
-- aggregates took 3-5 ms of every call at 500,000 studies. A temporary table: the catalog stays read-only.
-- today: the reference day when a call has no date_before, taken when the call is made (current_date in
-- the prepared query would make DuckDB plan it again at every execution).
-- Created once per connection, with one row; each call sets it (args/get_landscape.sql).
CREATE OR REPLACE TEMP TABLE get_landscape_args AS
SELECT NULL::VARCHAR[] AS conditions,
       NULL::DATE[] AS dates_before,
       NULL::INTEGER[] AS top_ns,
       NULL::DATE AS today;
