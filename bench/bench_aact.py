"""AACT load benchmark: the test AACT sample (864 real studies, tests/data/aact) replicated with new NCT ids to
N studies (default 100,000) as one dump zip, loaded into a fresh warehouse with `ctmirror load-aact`.
Prints studies/s and peak memory; with --cpu, the CPU each of the load's threads used (Linux).

    python bench/bench_aact.py [--studies 100000] [--cpu]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import zipfile
from contextlib import nullcontext
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import print_load_figures  # noqa: E402
from bench.thread_cpu import ThreadCpu, print_thread_cpu  # noqa: E402
from ctmirror.core.warehouse import Warehouse  # noqa: E402
from ingest.loader import load_aact  # noqa: E402

SAMPLE = ROOT / "tests" / "data" / "aact" / "20261101_ctgov_sample.zip"


def replicate(out: Path, studies: int, scratch: Path) -> int:
    """Every table of the sample, copied with NCT ids NCT9xxxxxxx and ids shifted per copy; returns the studies."""
    source = scratch / "sample"
    with zipfile.ZipFile(SAMPLE) as archive:
        archive.extractall(source)
    con = duckdb.connect()
    sample_studies = con.execute("SELECT count(*) FROM read_csv(?, delim='|', header=true, all_varchar=true)",
                                 [str(source / "studies.txt")]).fetchone()[0]
    copies = -(-studies // sample_studies)
    con.execute("CREATE TABLE copies AS SELECT range AS k FROM range(?)", [copies])
    con.execute("CREATE TABLE numbering AS SELECT nct_id AS original, row_number() OVER (ORDER BY nct_id) - 1 AS i "
                "FROM read_csv(?, delim='|', header=true, all_varchar=true)", [str(source / "studies.txt")])
    tables = scratch / "tables"
    tables.mkdir()
    # Every id and *_id column of a copy is shifted by the same amount, above every table's ids, so a child row's
    # parent id (intervention_id, design_group_id, ...) still names its parent's copy.
    top = max(con.execute("SELECT coalesce(max(id::BIGINT), 0) FROM read_csv(?, delim='|', header=true, quote='\"', "
                          "escape='\"', all_varchar=true, auto_detect=false, allow_quoted_nulls=false, columns=?)",
                          [str(file), _columns(file)]).fetchone()[0]
              for file in sorted(source.glob("*.txt")) if "id" in _columns(file))
    for file in sorted(source.glob("*.txt")):
        con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM read_csv(?, delim='|', header=true, quote='\"', "
                    "escape='\"', all_varchar=true, auto_detect=false, allow_quoted_nulls=false, "
                    "columns=?)", [str(file), _columns(file)])
        columns = [r[0] for r in con.execute("DESCRIBE t").fetchall()]

        def shifted(column: str) -> str:
            if column == "nct_id":
                return ("CASE WHEN k = 0 OR i IS NULL THEN nct_id "
                        "ELSE 'NCT9' || lpad((k * 1000 + i)::VARCHAR, 7, '0') END AS nct_id")
            if column == "id" or column.endswith("_id") and column not in ("document_id", "expanded_access_nctid"):
                return (f'CASE WHEN "{column}" IS NULL THEN NULL '
                        f'ELSE ("{column}"::BIGINT + k * {top + 1})::VARCHAR END AS "{column}"')
            return column

        if "nct_id" not in columns:  # a lookup table (mesh_headings): not per study
            con.execute(f"COPY t TO '{tables / file.name}' (DELIMITER '|', HEADER, QUOTE '\"', ESCAPE '\"')")
            continue
        select = ", ".join(shifted(c) for c in columns)
        con.execute(f"COPY (SELECT {select} FROM copies, t LEFT JOIN numbering ON original = t.nct_id ORDER BY k) "
                    f"TO '{tables / file.name}' "
                    "(DELIMITER '|', HEADER, QUOTE '\"', ESCAPE '\"')")
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for file in sorted(tables.glob("*.txt")):
            archive.write(file, file.name)
    return sample_studies * copies


def _columns(file: Path) -> dict[str, str]:
    with open(file, encoding="utf-8") as f:
        return {name: "VARCHAR" for name in f.readline().rstrip("\n").split("|")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=100_000)
    parser.add_argument("--cpu", action="store_true", help="also print the CPU used, thread by thread")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        dump = scratch / "20261101_replicated.zip"
        made = replicate(dump, args.studies, scratch)
        size_mb = dump.stat().st_size / 1e6
        with ThreadCpu() if args.cpu else nullcontext() as cpu:
            started = time.perf_counter()
            result = load_aact(Warehouse(scratch / "warehouse"), dump)
            elapsed = time.perf_counter() - started
    print_load_figures(f"{made:,} studies in one AACT dump ({size_mb:,.0f} MB zipped)", result, elapsed)
    if cpu is not None:
        print_thread_cpu(cpu)


if __name__ == "__main__":
    main()
