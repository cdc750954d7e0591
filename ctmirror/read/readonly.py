"""Read-only by construction: the DuckDB connection every read surface answers on, and the check of user SQL.

A reader gets a DuckDB instance of its own (an in-memory database with the state's catalog attached READ_ONLY),
so nothing one Mirror runs reaches another. Before any query it is locked: file access only below the state's own
folders (`allowed_directories` with `enable_external_access` off: no other file, no URL, no ATTACH), no
extension installed or loaded, and `lock_configuration` on, so no SET can undo any of it. User SQL is parsed by
DuckDB's own parser first: one statement, and only a query.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb

from ctmirror.core.duck import process_threads
from ctmirror.core.errors import InputError, WarehouseError
from ctmirror.core.sqlfiles import read_sql, sql_literal

# Extensions are never fetched or loaded behind a query's back (there is no network here, and a reader needs none).
READER_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
# Statement kinds user SQL may be: a query, or the plan of one.
ALLOWED_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
# Longer user SQL is refused before DuckDB parses it (no query of ours is a thousandth of this).
MAX_QUERY_CHARACTERS = 1_000_000


class ReadOnlyViolation(InputError):
    """User SQL that is not one query: a write, a setting, an ATTACH, several statements."""


class QueryFailed(InputError):
    """DuckDB rejected the query (syntax, binding, run time), or it ran past the timeout."""


def open_reader(catalog: Path, root: Path, allowed: Iterable[Path], *, threads: int | None = None,
                memory_limit: str | None = None, exact_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A locked connection to `catalog`. root: the folder its views name their files relative to (a warehouse,
    or a snapshot folder); allowed: the only folders it may read below; threads: DuckDB's threads for its queries
    (None: one a core, or CTMIRROR_THREADS); memory_limit: DuckDB's for the whole connection (None: its
    default); exact_only: at a cutoff, no reconstructed study shown (sql/session/settings.sql, exact_only). A
    reader never spills to disk: a query over its memory fails rather than write a temporary file."""
    con = duckdb.connect(":memory:", config={**READER_CONFIG, **process_threads()})
    try:
        con.execute(read_sql("session/settings.sql", "quiet"))
        # ATTACH binds no parameter: the path goes in as a quoted literal.
        con.execute(f"ATTACH {sql_literal(str(catalog))} AS catalog (READ_ONLY)")
        con.execute("USE catalog")
        con.execute(read_sql("session/settings.sql", "reader"))
        con.execute(read_sql("session/settings.sql", "set_root"), {"root": str(root)})
        if threads is not None:
            con.execute(read_sql("session/settings.sql", "threads"), {"threads": threads})
        if memory_limit is not None:
            con.execute(read_sql("session/settings.sql", "memory_limit"), {"limit": memory_limit})
        if exact_only:
            con.execute(read_sql("session/settings.sql", "exact_only"))
        con.execute(read_sql("session/settings.sql", "allowed_directories"),
                    {"folders": [str(folder).rstrip("/") + "/" for folder in allowed]})
        con.execute(read_sql("session/settings.sql", "lock_reader"))
    except BaseException:
        con.close()
        raise
    return con


def check_query(sql: str) -> None:
    """Raises ReadOnlyViolation unless `sql` is exactly one query, as DuckDB's parser classifies it (so a
    keyword's spelling, case or a comment around it changes nothing)."""
    if not isinstance(sql, str):
        raise QueryFailed(f"a query is text, not {type(sql).__name__}")
    if len(sql) > MAX_QUERY_CHARACTERS:
        raise ReadOnlyViolation(f"the query is {len(sql):,} characters long; at most {MAX_QUERY_CHARACTERS:,} are "
                                "accepted", hint="put long lists of values in a smaller query, or filter in SQL")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryFailed(str(exc).splitlines()[0]) from None
    if not statements:
        raise QueryFailed("no statement to run", hint="write one SELECT")
    for statement in statements:
        if statement.type not in ALLOWED_STATEMENTS:
            kind = statement.type.name.replace("_STATEMENT", "").replace("_", " ")
            raise ReadOnlyViolation(
                f"read-only: a {kind} statement cannot run here; only queries (SELECT) run",
                hint="the warehouse changes only through ctmirror load/sync/rebuild")
    if len(statements) > 1:
        raise ReadOnlyViolation("read-only: one query at a time (the text holds several statements)",
                                hint="run each SELECT on its own")
    if _first_keyword(sql) == "PRAGMA":
        # DuckDB rewrites `PRAGMA version` into a SELECT before classifying it: the user's own first word decides.
        raise ReadOnlyViolation("read-only: a PRAGMA statement cannot run here; only queries (SELECT) run",
                                hint="call the function instead: SELECT * FROM pragma_version()")


def _first_keyword(sql: str) -> str:
    """The first token of the text, upper-cased, as DuckDB's tokenizer finds it (comments skipped)."""
    tokens = duckdb.tokenize(sql)
    if not tokens or tokens[0][1] != duckdb.token_type.keyword:
        return ""
    start = tokens[0][0]
    end = tokens[1][0] if len(tokens) > 1 else len(sql)
    return sql[start:end].strip().upper()


def engine_error(exc: duckdb.Error, what: str) -> WarehouseError | None:
    """A damaged or vanished state met while answering, as the one line that says what to do; None for an
    error of the query itself."""
    text = str(exc).splitlines()[0]
    damaged_parquet = "magic bytes" in text or ("Parquet" in text and "corrupt" in text.lower())
    if isinstance(exc, duckdb.InvalidInputException) and damaged_parquet:
        return WarehouseError(f"{what}: a Parquet file is damaged ({text})",
                              hint="run `ctmirror rebuild`: it rewrites every table from raw/ (no network)")
    if isinstance(exc, duckdb.IOException) and ("No files found" in text or "No such file" in text
                                                or "Cannot open file" in text):
        return WarehouseError(f"{what}: a file of this state is gone ({text})",
                              hint="if the state was pruned by a newer sync, open the warehouse again; if files "
                                   "were deleted by hand, run `ctmirror rebuild`")
    return None


def query_error(exc: duckdb.Error) -> QueryFailed:
    """DuckDB's refusal of a user's query: its own words, with the position it points at."""
    if isinstance(exc, duckdb.PermissionException):
        return QueryFailed(f"read-only: the query reads a file outside the warehouse's state "
                           f"({str(exc).splitlines()[0]})",
                           hint="query the state's tables and views; they are listed by "
                                "SELECT view_name FROM duckdb_views() WHERE NOT internal")
    return QueryFailed(str(exc).strip())
