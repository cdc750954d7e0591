-- The arguments of the Python API's calls to search_trials: one row holding, per argument, the list of the
-- calls' values (a call's position in each list is its k), bound. The call's query (calls/search_trials.sql)
-- reads them here, so it is planned once per connection and then only executed: planning a method's macros
-- took up to a third of a call. Lists rather than a row per call: rebuilding the lists with ordered
-- aggregates took 3-5 ms of every call at 500,000 studies. A temporary table: the catalog stays read-only.
CREATE TEMP TABLE IF NOT EXISTS search_trials_args (
    drugs VARCHAR[],
    conditions VARCHAR[],
    dates_before DATE[],
    phase_filters VARCHAR[],
    max_results INTEGER[]
);
DELETE FROM search_trials_args;
INSERT INTO search_trials_args VALUES ($drugs, $conditions, $dates_before::DATE[], $phase_filters, $max_results);
