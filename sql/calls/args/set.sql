-- A call's arguments, bound into the one row of {table} (args/table.sql); {assignments} (<column> =
-- $<column>::<type>, ...) come from the method's request (Method.columns), the values are bound.
UPDATE {table} SET {assignments};
