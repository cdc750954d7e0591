-- The arguments of the Python API's calls to detect_whitespace: one row holding, per argument, the list of the
-- calls' values (a call's position in each list is its k), bound. The call's query (calls/detect_whitespace.sql)
-- reads them here, so it is planned once per connection and then only executed: planning a method's macros
-- took up to a third of a call. Lists rather than a row per call: rebuilding the lists with ordered
-- aggregates took 3-5 ms of every call at 500,000 studies. A temporary table: the catalog stays read-only.
-- Created once per connection, with one row; each call sets it (args/detect_whitespace.sql).
CREATE OR REPLACE TEMP TABLE detect_whitespace_args AS
SELECT NULL::VARCHAR[] AS drugs,
       NULL::VARCHAR[] AS conditions,
       NULL::DATE[] AS dates_before;
