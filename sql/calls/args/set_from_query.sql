-- One argument of a call computed by a query of ours (its values bound) into its column of the call's arguments
-- table (args/table.sql), never through Python (ctmirror/read/answers.py, FromQuery).
UPDATE {table} SET {column} = (
{query}
);
