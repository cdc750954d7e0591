"""`ctmirror sql`: ad-hoc SQL on a read-only connection to a published state.

Writes are impossible by construction, twice over: the catalog is opened read_only (DuckDB refuses any change
to it), and before anything runs DuckDB's own parser splits the text into statements and classifies each one;
only queries (SELECT, and EXPLAIN of one) run. So `COPY ... TO`, `ATTACH`, `INSTALL`, `PRAGMA`, `SET`, `CREATE`,
a second statement after a `;`, or a keyword hidden in a comment are refused with the statement's kind named,
whatever the spelling. Results leave through Python (CSV, JSON, Parquet via polars), never through DuckDB.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb

from ctmirror.errors import InputError
from ctmirror.mirror import Mirror

ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


class ReadOnlyViolation(InputError):
    """A statement that is not a query."""


class QueryFailed(InputError):
    """DuckDB rejected the query (syntax, binding, run time), or it ran past the timeout."""


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool


def check_read_only(sql: str) -> list[duckdb.Statement]:
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryFailed(str(exc)) from None
    if not statements:
        raise QueryFailed("no statement to run")
    for statement in statements:
        if statement.type not in ALLOWED:
            kind = statement.type.name.replace("_STATEMENT", "").replace("_", " ")
            raise ReadOnlyViolation(
                f"read-only: a {kind} statement cannot run here; ctmirror sql runs queries (SELECT) only",
                hint="the warehouse changes only through ctmirror load/sync/rebuild")
    if len(statements) > 1:
        raise ReadOnlyViolation("read-only: one query at a time (the text holds several statements)",
                                hint="run each SELECT on its own")
    return statements


@contextmanager
def _deadline(con: duckdb.DuckDBPyConnection, timeout: float | None) -> Iterator[threading.Event]:
    expired = threading.Event()
    timer = None
    if timeout:
        def stop() -> None:
            expired.set()
            con.interrupt()

        timer = threading.Timer(timeout, stop)
        timer.start()
    try:
        yield expired
    finally:
        if timer:
            timer.cancel()


def _failure(exc: duckdb.Error, expired: threading.Event, timeout: float | None) -> QueryFailed:
    if expired.is_set():
        return QueryFailed(f"the query ran longer than {timeout:g} s and was stopped", hint="narrow it, or raise --timeout")
    return QueryFailed(str(exc))


def run_query(mirror: Mirror, sql: str, *, limit: int | None = 1000, timeout: float | None = 60.0) -> QueryResult:
    check_read_only(sql)
    with _deadline(mirror.con, timeout) as expired:
        try:
            cursor = mirror.con.execute(sql)
            columns = [d[0] for d in cursor.description]
            rows = cursor.fetchmany(limit + 1) if limit is not None else cursor.fetchall()
        except duckdb.Error as exc:
            raise _failure(exc, expired, timeout) from None
    truncated = limit is not None and len(rows) > limit
    return QueryResult(columns, rows[:limit] if truncated else rows, truncated)


def query_frame(mirror: Mirror, sql: str, *, timeout: float | None = 60.0):
    """The whole result as a polars DataFrame (for Parquet output)."""
    check_read_only(sql)
    with _deadline(mirror.con, timeout) as expired:
        try:
            return mirror.con.execute(sql).pl()
        except duckdb.Error as exc:
            raise _failure(exc, expired, timeout) from None
