-- A reader's memory, when it has a budget of its own (the SQL endpoint's readers): a query that needs more fails
-- with DuckDB's out-of-memory error, as readers write no temporary files (sql/session/reader.sql).
SET memory_limit = $limit;
