-- The arguments of the Python API's calls to detect_whitespace: one row holding, per argument, the list of the
-- calls' values (a call's position in each list is its k), bound. The call's query (calls/detect_whitespace.sql)
-- reads them here, so it is planned once per connection and then only executed: planning a method's macros
-- took up to a third of a call. Lists rather than a row per call: rebuilding the lists with ordered
-- aggregates took 3-5 ms of every call at 500,000 studies. A temporary table: the catalog stays read-only.
CREATE TEMP TABLE IF NOT EXISTS detect_whitespace_args (
    drugs VARCHAR[],
    conditions VARCHAR[],
    dates_before DATE[]
);
DELETE FROM detect_whitespace_args;
INSERT INTO detect_whitespace_args VALUES ($drugs, $conditions, $dates_before::DATE[]);
