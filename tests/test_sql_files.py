"""The SQL under sql/: whole files, and files of short named queries (ctmirror/core/sqlfiles.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ctmirror.core import sqlfiles
from ctmirror.core.sqlfiles import named_queries, read_sql, sql_root

ROOT = Path(__file__).resolve().parent.parent


def literal_reads() -> set[tuple[str, ...]]:
    """The arguments of every read_sql call in the code written as literals: ("folder/file.sql"[, "name"])."""
    found = set()
    for path in [*(ROOT / "ctmirror").rglob("*.py"), *(ROOT / "ingest").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "read_sql"
                    and node.args and all(isinstance(a, ast.Constant) for a in node.args)):
                found.add(tuple(a.value for a in node.args))
    return found


def test_every_query_the_code_names_is_there():
    reads = literal_reads()
    assert len(reads) > 100 and any(len(r) == 2 for r in reads)  # the scan finds the reads, named ones among them
    for arguments in sorted(reads):
        assert read_sql(*arguments).strip(), arguments


def test_a_file_of_named_queries_reads_each_from_its_name_to_the_next(tmp_path, monkeypatch):
    (tmp_path / "some").mkdir()
    (tmp_path / "some" / "queries.sql").write_text(
        "-- What the file holds.\n\n-- name: first\n-- Its comment.\nSELECT 1;\n\n-- name: second\nSELECT\n  2;\n")
    monkeypatch.setattr(sqlfiles, "sql_root", lambda: tmp_path)
    for cached in (read_sql, named_queries):
        cached.cache_clear()
    try:
        assert named_queries("some/queries.sql") == {"first": "-- Its comment.\nSELECT 1;\n",
                                                     "second": "SELECT\n  2;\n"}
        with pytest.raises(KeyError, match="has no query named 'third': it has first, second"):
            read_sql("some/queries.sql", "third")
        (tmp_path / "some" / "twice.sql").write_text("-- name: one\nSELECT 1;\n-- name: one\nSELECT 2;\n")
        with pytest.raises(ValueError, match="names a query twice"):
            named_queries("some/twice.sql")
    finally:
        for cached in (read_sql, named_queries):
            cached.cache_clear()


def test_each_file_of_named_queries_names_each_query_once():
    for path in sql_root().rglob("*.sql"):
        relative = path.relative_to(sql_root()).as_posix()
        if "\n-- name: " in path.read_text(encoding="utf-8"):
            assert all(text.strip() for text in named_queries(relative).values()), relative
