"""A writer within a memory budget: the sample replicated to 14,000 studies loads under --memory-limit 300MB (DuckDB
spilling to the warehouse's scratch folder, small batches) and gives the same warehouse as with the default."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from ctmirror import Mirror
from ctmirror.core.duck import memory_budget, parse_size, writer_memory
from ctmirror.core.warehouse import Warehouse
from ingest import catalog
from ingest.loader import load_paths, sample_path

pytestmark = pytest.mark.slow  # builds warehouses of its own under budgets

_NCT_ID = re.compile(rb'"nctId"\s*:\s*"NCT\d{8}"')
# Columns saying when a run received what, or where in its segment files: smaller batches make more files.
RUN_SPECIFIC = {"ingested_at", "record_file", "record_row", "seen_at", "run_id", "started_at", "finished_at"}


def replicated(lines: list[bytes], count: int) -> bytes:
    """`count` records: the real sample, then copies of it under new IDs (NCT9 copy index), real content."""
    out = []
    for n in range(count):
        copy, index = divmod(n, len(lines))
        line = lines[index]
        if copy:
            line = _NCT_ID.sub(lambda _m: b'"nctId":"NCT9%03d%04d"' % (copy, index), line, count=1)
        out.append(line)
    return b"\n".join(out) + b"\n"


@pytest.mark.slow  # loads 14,000 studies twice, in subprocesses (two index ranges under the budget: 13,732 a range)
def test_a_writer_under_300mb_gives_the_same_warehouse(tmp_path, records):
    source = tmp_path / "studies.ndjson"
    source.write_bytes(replicated([json.dumps(r).encode() for r in records], 14_000))

    def load(name: str, *budget: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ctmirror.cli", "-q", *budget, "-w", str(tmp_path / name),
                               "load", str(source)], capture_output=True, text=True, timeout=900,
                              env={k: v for k, v in os.environ.items() if k != "CTMIRROR_MEMORY_LIMIT"})

    small = load("small", "--memory-limit", "300MB")
    assert small.returncode == 0, small.stderr
    default = load("default", "--memory-limit", "none")
    assert default.returncode == 0, default.stderr
    assert small.stdout.split(";")[0] == default.stdout.split(";")[0] == \
        "14000 records: 14000 new studies, 0 changed, 0 unchanged, 0 quarantined"
    with Mirror(tmp_path / "small") as a, Mirror(tmp_path / "default") as b:
        compared = 0
        for row in a.rows("SELECT table_name, list(column_name) AS columns FROM duckdb_columns() "
                          "WHERE NOT internal GROUP BY table_name ORDER BY table_name"):
            kept = [c for c in row["columns"] if c not in RUN_SPECIFIC]
            values = ", ".join(f'"{c}"' for c in kept)
            query = f'SELECT count(*) AS n, sum(hash({values})) AS h FROM "{row["table_name"]}"'  # every row
            assert a.rows(query) == b.rows(query), row["table_name"]
            compared += 1
        assert compared > 40  # the index's tables and every documented view
        calls = [("get_landscape", ("breast cancer",)), ("search_trials", ("tadalafil", "erectile dysfunction")),
                 ("detect_whitespace", ("metformin", "asthma")), ("get_terminated", ("diabetes",))]
        for method, args in calls:
            assert getattr(a, method)(*args) == getattr(b, method)(*args), method


def test_the_budget_reads_as_documented(monkeypatch):
    assert parse_size("2GB") == 2 * 10**9 and parse_size("300 MB") == 300 * 10**6 and parse_size("1.5GiB") == 3 * 2**29
    for wrong in ("lots", "12XB", "5MB"):
        with pytest.raises(ValueError):
            parse_size(wrong)
    monkeypatch.setenv("CTMIRROR_MEMORY_LIMIT", "none")
    assert memory_budget() is None and "memory_limit" not in writer_memory()
    monkeypatch.delenv("CTMIRROR_MEMORY_LIMIT")  # by default a quarter of the machine's memory, at most 4 GB
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert memory_budget() == min(4 * 10**9, total // 4)
    monkeypatch.setenv("CTMIRROR_MEMORY_LIMIT", "2GB")
    assert memory_budget() == 2 * 10**9 and writer_memory()["memory_limit"] == f"{int(1.2 * 10**9) // 2**20}MiB"


def test_index_tables_built_in_ranges_of_studies_are_the_tables_built_whole(tmp_path, monkeypatch, sample_warehouse):
    """Under a budget the per-version tables are built a range of studies at a time: here 400 studies a range
    (six ranges of the sample) give the same rows, in the same order, as the sample's warehouse built whole."""
    ranges_run = []
    original = catalog.index_file_parts

    def counted(text: str) -> tuple[str, str, str]:
        parts = original(text)
        ranges_run.append(bool(parts[1]))
        return parts

    monkeypatch.setattr(catalog, "studies_per_index_range", lambda: 400)
    monkeypatch.setattr(catalog, "index_file_parts", counted)
    load_paths(Warehouse(tmp_path / "ranged"), [sample_path()], source="sample")
    assert sum(ranges_run) == 3  # trial cards and texts; trial details; outcome texts
    with Mirror(tmp_path / "ranged") as ranged, Mirror(sample_warehouse) as whole:
        assert ranged.rows(COUNT_RANGES, {"per_range": 400}) == [{"n": 6}]
        for table in ("trial_text", "trial_card", "trial_detail", "eligibility_text", "outcome_text", "trial_drug_key",
                      "stopped_card"):
            query = f"SELECT list(hash(COLUMNS(*))) AS rows FROM {table}"  # every row, in table order
            assert ranged.rows(query) == whole.rows(query), table
        assert ranged.get_landscape("breast cancer") == whole.get_landscape("breast cancer")


COUNT_RANGES = "SELECT (count(*) + $per_range - 1) // $per_range AS n FROM study_number"
