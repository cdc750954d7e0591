-- The arguments of the Python API's calls to search_trials: one row holding, per argument, the list of the
-- calls' values (a call's position in each list is its k), bound. The call's query (calls/search_trials.sql)
-- reads them here, so it is planned once per connection and then only executed: planning a method's macros
-- took up to a third of a call. Lists rather than a row per call: rebuilding the lists with ordered
-- aggregates took 3-5 ms of every call at 500,000 studies. A temporary table: the catalog stays read-only.
-- Created once per connection, with one row; each call sets it (args/search_trials.sql).
CREATE OR REPLACE TEMP TABLE search_trials_args AS
SELECT NULL::VARCHAR[] AS drugs,
       NULL::VARCHAR[] AS conditions,
       NULL::DATE[] AS dates_before,
       NULL::VARCHAR[] AS phase_filters,
       NULL::INTEGER[] AS max_results;
