-- Run on the read-only connection a Mirror answers methods on. A hash join whose build side has up to this many
-- keys hands them to the probe side's scan as a filter (DuckDB's default is 50). A method's few hundred matched
-- studies then pick their rows out of trial_card before its other columns are read, where a min/max range of
-- keys spread over the whole table would read all of them; much above 1,000 keys the filter costs more than it
-- saves.
SET dynamic_or_filter_threshold = 1000;
-- No temporary files: DuckDB's default folder is `.tmp` under the working directory, which a reader's sandbox would
-- then have to allow (and could list); a reader's query runs in memory or fails.
SET temp_directory = '';
