"""Writes a state's catalog.duckdb: views over the state's Parquet files, documentation, macros, methods.

View definitions must name their files literally (DuckDB binds no parameters in DDL), so paths go through
`sql_literal`, the one quoting helper; everything else comes from the files under `sql/`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb

from ctmirror.sqlfiles import read_sql, sql_files, sql_root


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def file_list_literal(paths: Iterable[Path]) -> str:
    return "[" + ", ".join(sql_literal(str(p)) for p in paths) + "]"


def build_catalog(path: Path, tables: dict[str, list[Path]]) -> None:
    """tables: view name → the Parquet files it reads (absolute, final paths)."""
    path.unlink(missing_ok=True)
    con = duckdb.connect(str(path))
    try:
        for name in sql_files("schema"):
            con.execute(read_sql(name))
        for view, files in sorted(tables.items()):
            con.execute(f"CREATE VIEW {view} AS SELECT * FROM read_parquet({file_list_literal(files)}, "
                        "union_by_name = true)")
        # The search index and trial cards are native tables: point lookups on them take milliseconds
        # where the same lookups over Parquet would read whole columns.
        index_params = {"synonyms": str(sql_root() / "data" / "synonyms.csv")}
        for name in sql_files("index"):
            statement = read_sql(name)
            params = {k: v for k, v in index_params.items() if f"${k}" in statement}
            con.execute(statement, params or None)
        for folder in ("catalog", "methods", "views"):  # views use the methods' matcher
            for name in sql_files(folder):
                con.execute(read_sql(name))
        con.execute("CHECKPOINT")
    finally:
        con.close()
