"""`ctmirror sql`: read-only by construction; every write attempt fails and changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import fingerprint

from ctmirror import Mirror
from ctmirror.read.console import QueryFailed, ReadOnlyViolation, run_query


def ctmirror(warehouse: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(warehouse), *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


ATTEMPTS = [
    "DROP VIEW studies",
    "DELETE FROM studies",
    "COPY studies TO '{tmp}/stolen.csv'",
    "COPY (SELECT 1) TO '{warehouse}/tables/studies.parquet' (FORMAT parquet)",
    "ATTACH '{tmp}/other.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "PRAGMA enable_profiling",
    "SET threads = 1",
    "CREATE TABLE x AS SELECT 1",
    "SELECT 1; DROP VIEW studies",
    "SELECT 1 /* harmless */; DELETE FROM studies -- ",
    "/* SELECT */ DROP VIEW studies",
    "-- SELECT only\nDROP VIEW studies",
    "UPDATE studies SET phase = 'x'",
    "INSERT INTO studies SELECT * FROM studies",
    "CHECKPOINT",
    "EXPORT DATABASE '{tmp}/dump'",
]


@pytest.mark.slow
@pytest.mark.parametrize("attempt", ATTEMPTS)
def test_write_attempts_fail_and_change_nothing(tmp_path, sample_warehouse, attempt):
    before = fingerprint(sample_warehouse)
    sql = attempt.format(tmp=tmp_path, warehouse=sample_warehouse)
    done = ctmirror(sample_warehouse, "sql", "--", sql)
    assert done.returncode == 2
    assert done.stderr.startswith("error: read-only:"), done.stderr
    assert fingerprint(sample_warehouse) == before
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_queries_in_every_format(tmp_path, sample_warehouse):
    query = "SELECT phase, count(*) AS n FROM studies GROUP BY ALL ORDER BY n DESC, phase"
    with Mirror(sample_warehouse) as m:
        expected = m.rows(query)
    as_json = json.loads(ctmirror(sample_warehouse, "sql", query, "--format", "json").stdout)
    assert as_json == expected
    as_csv = ctmirror(sample_warehouse, "sql", query, "--format", "csv").stdout.splitlines()
    assert as_csv[0] == "phase,n" and len(as_csv) == len(expected) + 1
    table = ctmirror(sample_warehouse, "sql", query).stdout
    assert "Phase 1/Phase 2" in table
    out = tmp_path / "r.parquet"
    assert ctmirror(sample_warehouse, "sql", query, "--format", "parquet", "--out", str(out)).returncode == 0
    assert pl.read_parquet(out).to_dicts() == expected
    (tmp_path / "q.sql").write_text(query)
    assert json.loads(ctmirror(sample_warehouse, "sql", "--file", str(tmp_path / "q.sql"), "--format",
                               "json").stdout) == expected


@pytest.mark.slow
def test_macros_row_limit_and_prompt(sample_warehouse):
    limited = ctmirror(sample_warehouse, "sql", "SELECT nct_id FROM studies ORDER BY 1", "--limit", "3", "--format",
                       "csv")
    assert len(limited.stdout.splitlines()) == 4  # header + 3
    assert "first 3 rows" in limited.stderr
    macro = ctmirror(sample_warehouse, "sql", "SELECT nct_id FROM get_trial('NCT00711542')", "--format", "json")
    assert json.loads(macro.stdout) == [{"nct_id": "NCT00711542"}]
    session = ctmirror(sample_warehouse, "sql",
                       stdin="SELECT count(*) AS n\nFROM studies;\nDROP VIEW studies;\n.quit\n")
    assert "2279" in session.stdout and "error: read-only" in session.stdout


@pytest.mark.slow
def test_errors_show_duckdb_and_the_position(sample_warehouse):
    done = ctmirror(sample_warehouse, "sql", "SELECT nct_id FROM studies WHERE phsae = 1")
    assert done.returncode == 2 and "phsae" in done.stderr and "LINE 1" in done.stderr


def test_timeout_stops_a_long_query(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        with pytest.raises(QueryFailed, match="longer than 0.2 s"):
            run_query(m, "SELECT count(*) FROM range(10000000000) a", timeout=0.2)
        with pytest.raises(ReadOnlyViolation):
            run_query(m, "CREATE TABLE x (a INT)")


@pytest.mark.slow
def test_the_prompt_answers_dot_commands(sample_warehouse):
    session = ctmirror(sample_warehouse, "sql",
                       stdin=".help\n.tables\n.schema conditions\n.schema nope\n.bogus\nSELECT 41 + 1 AS x;\n.quit\n")
    assert session.returncode == 0, session.stderr
    out = session.stdout
    assert ".schema TABLE" in out  # .help
    assert "studies " in out and "One row per study" in out  # .tables, with what each holds
    assert "condition as the sponsor wrote it" in out  # .schema conditions
    assert "no table or view named 'nope'" in out and "unknown command '.bogus'" in out
    assert "42" in out  # queries still run between them
