-- The arguments of the Python API's calls to search_trials, one row per call (k: its position from 1), bound from
-- lists. The call's query (calls/search_trials.sql) reads them here, so it is planned once per connection and then
-- only executed: planning a method's macros took up to a third of a call. A temporary table: the catalog stays
-- read-only.
CREATE TEMP TABLE IF NOT EXISTS search_trials_args (
    k INTEGER,
    drug VARCHAR,
    condition VARCHAR,
    date_before DATE,
    phase_filter VARCHAR,
    max_results INTEGER
);
DELETE FROM search_trials_args;
INSERT INTO search_trials_args
SELECT generate_subscripts($drugs, 1), unnest($drugs), unnest($conditions), unnest($dates_before::DATE[]),
       unnest($phase_filters), unnest($max_results);
