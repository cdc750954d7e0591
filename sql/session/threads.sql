-- A database's DuckDB threads ($threads). While PARALLEL_WRITERS cursors write tables side by side, each table's
-- query gets the cores divided among them (one each on two cores): with every query free to use every core, two
-- cores ran four threads, and writing a batch's tables cost 10% more CPU in their contention.
SET threads = $threads;
