-- A database's DuckDB threads ($threads): a server's readers run one each (ctmirror/server/pool.py). While PARALLEL_WRITERS cursors write tables side by side, each table's
-- query gets the cores divided among them (one each on two cores): free to use every core, each would run as many
-- threads as there are cores, and they would contend.
SET threads = $threads;
