"""DuckDB sessions: the helpers every connection ctmirror opens shares (readers and writers), and the settings a
writer's connection runs with. Part of the core: it imports nothing but the core's SQL files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ctmirror.core.sqlfiles import read_sql, sql_files, sql_literal

# Tables written side by side (segments, states, the catalog's index): one per core, since DuckDB scans a
# batch-sized table on one thread.
CORES = os.cpu_count() or 2
PARALLEL_WRITERS = CORES
# DuckDB threads of a connection that runs beside Python validating the next records: a core is left to Python.
BESIDE_PYTHON = max(1, CORES - 1)
# The row groups of a table whose texts never repeat (written with unrepeated_texts: see write_parquet).
UNREPEATED_TEXT_ROW_GROUP_ROWS = 2_048
# A writer's DuckDB keeps the memory one batch used for the next instead of handing it back to the system after
# each query, so the kernel does not fault the same buffers in afresh batch after batch (COPY's rows, the Parquet
# writer's). The blocks kept are capped; all of it goes back when the connection closes. Readers keep the defaults.
KEEP_MEMORY = {"block_allocator_memory": "2GB", "allocator_flush_threshold": "16GB",
               "allocator_bulk_deallocation_flush_threshold": "16GB"}


@contextmanager
def threads_for(con: duckdb.DuckDBPyConnection, threads: int) -> Iterator[None]:
    """`con`'s DuckDB threads set to `threads` for the block, then as they were."""
    before = con.execute(read_sql("session/current_threads.sql")).fetchone()[0]
    con.execute(read_sql("session/threads.sql"), {"threads": threads})
    try:
        yield
    finally:
        con.execute(read_sql("session/threads.sql"), {"threads": before})


def side_by_side(con: duckdb.DuckDBPyConnection):
    """For the time PARALLEL_WRITERS cursors of `con` run queries at once: the cores divided among them
    (sql/session/threads.sql says why)."""
    return threads_for(con, max(1, CORES // PARALLEL_WRITERS))


def all_cores(con: duckdb.DuckDBPyConnection):
    """For a query that runs with nothing beside it: the last batch's, once Python has validated it all."""
    return threads_for(con, CORES)


def quiet(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """The connection (or cursor) with DuckDB's progress bar off (sql/session/quiet.sql says why)."""
    con.execute(read_sql("session/quiet.sql"))
    return con


def new_connection(temp_dir: Path | None = None, *, threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the shared macros. Insertion order is preserved: segment and state files
    follow the order rows were staged in, which is what makes their bytes reproducible."""
    config: dict[str, object] = {"preserve_insertion_order": True, **KEEP_MEMORY}
    if temp_dir is not None:
        config["temp_directory"] = str(temp_dir)
    if threads is not None:
        config["threads"] = threads
    con = quiet(duckdb.connect(config=config))
    for name in sql_files("schema"):
        con.execute(read_sql(name))
    return con


def write_parquet(con: duckdb.DuckDBPyConnection, query: str, params: dict | None, target: Path, *,
                  unrepeated_texts: bool = False) -> None:
    """A query's rows as zstd Parquet at level 1: the files are written once and read often, and level 1
    compresses about twice as fast as the default for a few percent more bytes. The path is ours, quoted as a
    literal (COPY takes no parameter for it); the query's own parameters stay bound. With `unrepeated_texts`
    (see UNREPEATED_TEXTS), no column is dictionary-encoded and row groups are small."""
    options = (f", DICTIONARY_SIZE_LIMIT 1, ROW_GROUP_SIZE {UNREPEATED_TEXT_ROW_GROUP_ROWS}"
               if unrepeated_texts else "")
    con.execute(f"COPY (\n{query.rstrip().rstrip(';')}\n) TO {sql_literal(str(target))} "
                f"(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1{options})", params)
