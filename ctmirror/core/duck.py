"""DuckDB sessions: the helpers every connection ctmirror opens shares (readers and writers), and the settings a
writer's connection runs with. Part of the core: it imports nothing but the core's SQL files."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import duckdb

from ctmirror.core.sqlfiles import read_sql, sql_files, sql_literal

# DuckDB's Python binding looks for pandas (`import pandas`) for each value of a list it binds; where pandas is not
# installed each look is an import that fails after searching sys.path again (a list of 5,000 IDs took 1.3 s to bind).
# Marked absent once, each look is a dictionary lookup. Only where pandas cannot be imported at all.
if importlib.util.find_spec("pandas") is None:
    sys.modules.setdefault("pandas", None)  # type: ignore[arg-type]

# The cores a process's DuckDB uses: every core, or CTMIRROR_THREADS of them where processes share the machine
# (several servers, a test run's workers): each connection then runs at most that many threads, and a writer builds
# that many tables side by side.
THREADS_ENV = "CTMIRROR_THREADS"


def _threads_given() -> int | None:
    given = os.environ.get(THREADS_ENV, "").strip()
    if not given:
        return None
    if not given.isdigit() or int(given) < 1:
        raise ValueError(f"{THREADS_ENV} must be a whole number of threads, 1 or more, not {given!r}: unset it to "
                         "use every core")
    return int(given)


THREADS_GIVEN = _threads_given()
CORES = THREADS_GIVEN or os.cpu_count() or 2


def process_threads() -> dict[str, int]:
    """A connection's config for its threads: CTMIRROR_THREADS's, where it is set (else DuckDB's, a core each)."""
    return {} if THREADS_GIVEN is None else {"threads": THREADS_GIVEN}


# Tables written side by side (segments, states, the catalog's index): one per core, since DuckDB scans a
# batch-sized table on one thread.
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

# A writer's memory budget (the whole command): `--memory-limit` or CTMIRROR_MEMORY_LIMIT ('2GB', '300MB'),
# by default a quarter of the machine's memory and at most 4 GB ('none': DuckDB's own limit, 80% of the memory).
# DuckDB gets DUCKDB_SHARE of it as its memory_limit and spills what does not fit to the writer's scratch folder
# inside the warehouse; the rest is Python's (its libraries, a batch of records being validated) and what DuckDB
# holds beside its limit: publishing 500,000 studies peaked 0.6-0.75 GB above DuckDB's limit (bench/README.md).
MEMORY_LIMIT_ENV = "CTMIRROR_MEMORY_LIMIT"
NO_BUDGET = "none"
DEFAULT_BUDGET_SHARE = 0.25
DEFAULT_BUDGET_MAX = 4 * 10**9
DUCKDB_SHARE = 0.6
# On a small budget DuckDB gets up to SMALL_BUDGET_DUCKDB_SHARE of it, up to DUCKDB_LEAST: less fails on 20,000
# studies.
SMALL_BUDGET_DUCKDB_SHARE = 0.75
DUCKDB_LEAST = 225 * 10**6
SIDE_BY_SIDE_BUDGET = 2 * 10**9
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_size(text: str) -> int:
    """'2GB', '300 MB', '1.5GiB' or a number of bytes, as bytes; ValueError says what it takes ('none' is read
    by memory_budget)."""
    cleaned = text.strip().upper().replace(" ", "")
    number = cleaned.rstrip("KMGTIB")
    unit = cleaned[len(number):]
    try:
        value = float(number) * _UNITS[unit]
    except (ValueError, KeyError):
        raise ValueError(f"{text!r} is not a size: write it as 2GB, 300MB or 1.5GiB") from None
    if value < 100 * 10**6:
        raise ValueError(f"{text!r} is below 100MB, too little for DuckDB to work in")
    return int(value)


def machine_memory() -> int:
    """The machine's memory in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_budget() -> int:
    return min(DEFAULT_BUDGET_MAX, int(machine_memory() * DEFAULT_BUDGET_SHARE))


def parse_budget(text: str) -> int | None:
    """A budget as given: a size (parse_size), or None for 'none'."""
    return None if text.strip().lower() == NO_BUDGET else parse_size(text)


def memory_budget() -> int | None:
    """The writer's budget in bytes (see MEMORY_LIMIT_ENV); None when it is 'none'."""
    given = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    return parse_budget(given) if given else default_budget()


def writer_lanes() -> int:
    """How many tables a writer builds side by side: PARALLEL_WRITERS, or one at a time under a budget below
    SIDE_BY_SIDE_BUDGET, where two large sorts at once (an index's tables) would not fit."""
    budget = memory_budget()
    return PARALLEL_WRITERS if budget is None or budget >= SIDE_BY_SIDE_BUDGET else 1


# Under a budget, the index's per-version tables (trial cards and texts, trial details) are built a range of
# studies at a time (ingest/catalog.py): their list aggregates cannot spill, and held about this much DuckDB
# memory a study when built whole (more than 1.3 GiB at 500,000 studies).
INDEX_BYTES_PER_STUDY = 16_384


def studies_per_index_range() -> int | None:
    """How many studies an index range holds under the budget; None (all at once) without one."""
    budget = memory_budget()
    if budget is None:
        return None
    return max(1_000, duckdb_share(budget) // INDEX_BYTES_PER_STUDY)


def duckdb_share(budget: int) -> int:
    """The bytes of the budget DuckDB's memory_limit gets."""
    return max(int(budget * DUCKDB_SHARE), min(int(budget * SMALL_BUDGET_DUCKDB_SHARE), DUCKDB_LEAST))


def writer_memory() -> dict[str, str]:
    """DuckDB settings keeping a writer's connection within the budget, if one is given."""
    budget = memory_budget()
    if budget is None:
        return dict(KEEP_MEMORY)
    duckdb_bytes = duckdb_share(budget)
    return {**KEEP_MEMORY, "memory_limit": f"{duckdb_bytes // 2**20}MiB",
            "block_allocator_memory": f"{min(2 * 2**30, duckdb_bytes // 4) // 2**20}MiB"}


@contextmanager
def threads_for(con: duckdb.DuckDBPyConnection, threads: int) -> Iterator[None]:
    """`con`'s DuckDB threads set to `threads` for the block, then as they were."""
    before = con.execute(read_sql("session/settings.sql", "current_threads")).fetchone()[0]
    con.execute(read_sql("session/settings.sql", "threads"), {"threads": threads})
    try:
        yield
    finally:
        con.execute(read_sql("session/settings.sql", "threads"), {"threads": before})


def side_by_side(con: duckdb.DuckDBPyConnection):
    """For the time writer_lanes() cursors of `con` run queries at once: the cores divided among them
    (sql/session/settings.sql, threads, says why)."""
    return threads_for(con, max(1, CORES // writer_lanes()))


def all_cores(con: duckdb.DuckDBPyConnection):
    """For a query that runs with nothing beside it: the last batch's, once Python has validated it all."""
    return threads_for(con, CORES)


@cache
def record_pandas_absent() -> None:
    """DuckDB's Python API tries `import pandas` twice for every parameter value it binds (one might be a
    DataFrame), and each element of a list. Without pandas each try searches all of sys.path again: a noticeable
    part of a method call, and a tenth of a night's publish (binding the changed studies' 2,000 NCT IDs took
    0.3 s a time); marked absent in sys.modules, a try fails at once. Nothing changes where pandas is installed.
    Run once, when the first Mirror or writer connection opens, rather than on import."""
    if "pandas" not in sys.modules and importlib.util.find_spec("pandas") is None:
        sys.modules["pandas"] = None  # type: ignore[assignment]


def quiet(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """The connection (or cursor) with DuckDB's progress bar off (sql/session/settings.sql, quiet, says why). Every
    writer's connection passes here: pandas is recorded absent first (record_pandas_absent)."""
    record_pandas_absent()
    con.execute(read_sql("session/settings.sql", "quiet"))
    return con


def new_connection(temp_dir: Path | None = None, *, threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the shared macros. Insertion order is preserved: segment and state files
    follow the order rows were staged in, which is what makes their bytes reproducible."""
    config: dict[str, object] = {"preserve_insertion_order": True, **writer_memory(), **process_threads()}
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
