-- A database's DuckDB threads now, to set back after sql/session/threads.sql.
SELECT current_setting('threads');
