-- The arguments of a method's calls through the Python API ({table}: <method>_args), bound into its one row: for a
-- set-wise method, per argument the list of the calls' values (a call's position in each list is its k); for search,
-- one call's values. {columns} (NULL::<type> AS <column>, ...): its request's fields, by their names (Method.columns
-- in ctmirror/read/registry.py). The call's query reads them here, so it is planned once per connection and then
-- only executed (planning a method's macros is a large part of a call). Lists rather than a row per call: rebuilding
-- the lists with ordered aggregates would cost every call more than its lookups. A temporary table: the catalog
-- stays read-only. Created once per connection; each batch sets it (args/set.sql), where a set-wise call alone
-- reads its values from the reader's functions instead (ctmirror/read/answers.py, install_call_arguments).
CREATE OR REPLACE TEMP TABLE {table} AS
SELECT {columns};
