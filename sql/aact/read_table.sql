-- One AACT table file into a table of the dump's own in-memory database (not a temp table: the reassembly reads it
-- on cursors of their own). AACT writes its files the way PostgreSQL's COPY ... CSV does, with '|'
-- for the delimiter: header first; a field holding '|', '"' or a newline is quoted with '"' (doubled inside); an
-- unquoted empty field is NULL, a quoted one an empty string. $columns names every header column with its type,
-- so a value of the wrong type is a rejected row with its line (reject_errors), never a silent NULL.
-- {table} is an AACT table name from CTTI's mapping (checked to be a plain identifier), not user input.
CREATE OR REPLACE TABLE aact_{table} AS
SELECT *
FROM read_csv($path, delim = '|', quote = '"', escape = '"', header = true, auto_detect = false,
              columns = $columns, allow_quoted_nulls = false, store_rejects = true);
