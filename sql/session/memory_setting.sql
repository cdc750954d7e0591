-- The reader's memory limit, as DuckDB states it (for the message of a query that needed more).
SELECT current_setting('memory_limit');
