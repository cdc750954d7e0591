-- Connection settings: what every reader and writer sets on the connections and cursors it opens. Each query begins
-- with a line `-- name: <name>` and is read by read_sql("session/settings.sql", "<name>")
-- (ctmirror/core/sqlfiles.py).

-- name: allowed_directories
-- A reader may read files only below these folders ($folders: the state's folder and the segments it reads, or a
-- snapshot's folder), once sql/session/settings.sql (lock_reader) has turned external access off.
SET allowed_directories = $folders;

-- name: catalog_writer
-- Run when a catalog is built: its strings are stored without FSST, DuckDB's symbol-table compression, whose
-- analysis of every string segment was the most expensive part of writing the index and trial tables, for a few
-- percent of bytes and no change to method latencies. Its integers are neither run-length encoded nor bit-packed
-- as deltas, only as offsets from a frame (DuckDB's `for` bitpacking mode, a setting it calls a debugging one):
-- the index's keys, made from NCT numbers, are sparse, and a row fetched through an index from a run-length or
-- delta-packed segment is found by decoding what comes before it in its group (`search`'s lookups of trial_card
-- took 2-5 ms more a call, bench/README.md). Readers need nothing: a file's blocks say how they are stored.
SET disabled_compression_methods = 'fsst,rle';
SET force_bitpacking_mode = 'for';

-- name: catalog_writer_done
-- Run when a catalog is built on a writer's connection: the connection is left as sql/session/settings.sql
-- (catalog_writer) found it (strings and integers compressed every way DuckDB can, and its in-memory database the
-- default).
RESET disabled_compression_methods;
RESET force_bitpacking_mode;
USE memory;

-- name: current_threads
-- A database's DuckDB threads now, to set back after sql/session/settings.sql (threads).
SELECT current_setting('threads');

-- name: exact_only
-- An exact-only reader (Mirror(exact_only=True), --exact-only): at a cutoff, only the studies whose version of that
-- day the warehouse holds are shown; a reconstruction is not (shown_at, sql/schema/as_of_rules.sql).
SET VARIABLE ctmirror_exact_only = true;

-- name: lock_reader
-- Run last when a reader opens (ctmirror/read/readonly.py): no file outside the allowed folders, no URL, no ATTACH, and
-- no further change of any setting, these included.
SET enable_external_access = false;
SET lock_configuration = true;

-- name: memory_limit
-- A reader's memory, when it has a budget of its own (the SQL endpoint's readers): a query that needs more fails
-- with DuckDB's out-of-memory error, as readers write no temporary files (sql/session/settings.sql (reader)).
SET memory_limit = $limit;

-- name: memory_setting
-- The reader's memory limit, as DuckDB states it (for the message of a query that needed more).
SELECT current_setting('memory_limit');

-- name: quiet
-- Run on every connection and cursor ctmirror opens: DuckDB draws a progress bar on stdout for any query over two
-- seconds, which would corrupt the CLI's output (JSON included). The setting is per session, so a cursor needs
-- it as much as its connection.
SET enable_progress_bar = false;

-- name: reader
-- Run on the read-only connection a Mirror answers methods on. A hash join whose build side has up to this many
-- keys hands them to the probe side's scan as a filter (DuckDB's default is 50). A method's few hundred matched
-- studies then pick their rows out of trial_card before its other columns are read, where a min/max range of
-- keys spread over the whole table would read all of them; much above 1,000 keys the filter costs more than it
-- saves.
SET dynamic_or_filter_threshold = 1000;
-- No temporary files: DuckDB's default folder is `.tmp` under the working directory, which a reader's sandbox would
-- then have to allow (and could list); a reader's query runs in memory or fails.
SET temp_directory = '';

-- name: reset_root
-- After a catalog is built on a writer's connection: the connection is left without the root it was given.
RESET VARIABLE ctmirror_root;

-- name: set_root
-- Where the folder a catalog reads its files from is now ($root, absolute): see sql/catalog_views/queries.sql
-- (file_list).
SET VARIABLE ctmirror_root = $root;

-- name: threads
-- A database's DuckDB threads ($threads): a server's readers run one each (ctmirror/server/pool.py). While
-- PARALLEL_WRITERS cursors write tables side by side, each table's query gets the cores divided among them (one each
-- on two cores): free to use every core, each would run as many threads as there are cores, and they would contend.
SET threads = $threads;
