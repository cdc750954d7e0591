"""`ctmirror sql`: ad-hoc SQL on a Mirror's locked, read-only connection (ctmirror/read/readonly.py says how it is
locked), with a row limit and a timeout. Results leave through Python (CSV, JSON, Parquet via polars), never
through DuckDB."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb

from ctmirror.read.mirror import Mirror
from ctmirror.read.readonly import QueryFailed, ReadOnlyViolation, check_query, query_error


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool


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
        return QueryFailed(f"the query ran longer than {timeout:g} s and was stopped",
                           hint="narrow it, or raise --timeout")
    return query_error(exc)


def run_query(mirror: Mirror, sql: str, *, limit: int | None = 1000, timeout: float | None = 60.0) -> QueryResult:
    check_query(sql)

    def fetch() -> tuple[list[str], list[tuple[Any, ...]]]:
        cursor = mirror.con.execute(sql)
        columns = [d[0] for d in cursor.description]
        return columns, cursor.fetchmany(limit + 1) if limit is not None else cursor.fetchall()

    with _deadline(mirror.con, timeout) as expired:
        try:
            columns, rows = mirror.recovering(fetch)  # a damaged state: the error that says what to do
        except duckdb.Error as exc:
            raise _failure(exc, expired, timeout) from None
    truncated = limit is not None and len(rows) > limit
    return QueryResult(columns, rows[:limit] if truncated else rows, truncated)


def query_frame(mirror: Mirror, sql: str, *, timeout: float | None = 60.0):
    """The whole result as a polars DataFrame (for Parquet output)."""
    check_query(sql)
    with _deadline(mirror.con, timeout) as expired:
        try:
            return mirror.recovering(lambda: mirror.con.execute(sql).pl())
        except duckdb.Error as exc:
            raise _failure(exc, expired, timeout) from None


__all__ = ["QueryFailed", "QueryResult", "ReadOnlyViolation", "query_frame", "run_query"]
