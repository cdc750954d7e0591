"""Scaled corpora for benchmarks: the embedded sample's real records, replicated under new NCT IDs."""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path

import zstandard

from ctmirror.core.sqlfiles import CATALOG_MACROS, sql_digest
from ingest.loader import sample_path

_NCT_ID_FIELD = re.compile(rb'"nctId": ?"NCT\d{8}"')


def sample_lines() -> list[bytes]:
    with open(sample_path(), "rb") as f:
        data = zstandard.ZstdDecompressor().stream_reader(f).read()
    return [line for line in data.split(b"\n") if line.strip()]


def replicated_lines(count: int, lines: list[bytes] | None = None) -> Iterator[bytes]:
    """`count` records. Copy 0 is the real sample; copy k (1..999) of record i is NCT9 kkk iiii, so every
    replicated record is a distinct study with real content."""
    lines = lines or sample_lines()
    for n in range(count):
        copy, index = divmod(n, len(lines))
        line = lines[index]
        if copy:
            new_id = b'"nctId":"NCT9%03d%04d"' % (copy, index)
            line = _NCT_ID_FIELD.sub(lambda _m: new_id, line, count=1)
        yield line


def write_corpus(path: Path, count: int) -> Path:
    with open(path, "wb") as out:
        for line in replicated_lines(count):
            out.write(line + b"\n")
    return path


def print_load_figures(input_line: str, result, elapsed: float) -> None:
    """The figures every load benchmark prints: what went in, what was published, time, rate, peak memory."""
    import resource

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"input              {input_line}")
    print(f"studies published  {result.state.meta['counts']['studies']:,} (quarantined {result.counts.quarantined})")
    print(f"wall time          {elapsed:,.1f} s")
    print(f"load rate          {result.counts.records / elapsed:,.0f} studies/s")
    print(f"peak memory        {peak_mb:,.0f} MB (RSS)")


# SQL a warehouse does not hold (the server's and the Python API's queries run from sql/serve/ and sql/calls/ at
# request time), and the macros a reader installs over a catalog's own when they differ (CATALOG_MACROS): editing
# them needs no rebuild.
NOT_IN_A_WAREHOUSE = ("serve", "calls", *CATALOG_MACROS)


# What benchmark calls draw their arguments from: the real sample's conditions and drugs (the replicated copies
# repeat them), and every study's NCT ID.
CONDITIONS = ("SELECT DISTINCT condition AS c FROM conditions WHERE nct_id < 'NCT9' AND length(condition) < 60 "
              "ORDER BY 1")
DRUGS = ("SELECT DISTINCT name AS d FROM interventions WHERE nct_id < 'NCT9' AND intervention_type = 'Drug' "
         "AND NOT is_placebo(name) ORDER BY 1")


def call_material(mirror) -> tuple[list[str], list[str], list[str]]:
    """(NCT IDs, conditions, drugs) that benchmark calls draw from."""
    return ([r["nct_id"] for r in mirror.rows("SELECT nct_id FROM studies ORDER BY 1")],
            [r["c"] for r in mirror.rows(CONDITIONS)], [r["d"] for r in mirror.rows(DRUGS)])


def tool_arguments(mirror, rng: random.Random) -> dict[str, Callable[[], dict]]:
    """bench_mcp.py's calls: per tool, what draws one call's arguments from the sample's conditions, drugs and NCT IDs,
    with a random cutoff on every contract call."""
    ids, conditions, drugs = call_material(mirror)

    def cutoff() -> str:
        return (date(1995, 1, 1) + timedelta(days=rng.randrange(11_600))).isoformat()

    return {
        "search_trials": lambda: {"drug": rng.choice(drugs), "condition": rng.choice(conditions),
                                  "date_before": cutoff(), "max_results": 20},
        "detect_whitespace": lambda: {"drug": rng.choice(drugs), "condition": rng.choice(conditions),
                                      "date_before": cutoff()},
        "get_landscape": lambda: {"condition": rng.choice(conditions), "date_before": cutoff(), "top_n": 10},
        "get_terminated": lambda: {"query": rng.choice(conditions), "date_before": cutoff(), "max_results": 20},
        "get_trial": lambda: {"nct_id": rng.choice(ids)},
        "get_trial_details": lambda: {"nct_id": rng.choice(ids)},
        "search": lambda: {"condition": rng.choice(conditions), "page_size": 10, "date_before": cutoff()},
        "get_study": lambda: {"nct_id": rng.choice(ids)},
        "count_studies": lambda: {"query.cond": rng.choice(conditions)},
        "statistics": lambda: {"statistic": "stats_by_phase", "condition": rng.choice(conditions),
                               "date_before": cutoff()},
    }


def sql_fingerprint() -> str:
    """What the SQL under sql/ is now: a warehouse kept in bench/out from an older checkout is stale if this
    differs from the one recorded when it was built."""
    return sql_digest(NOT_IN_A_WAREHOUSE)


def reuse_or_build(root: Path, build) -> Path:
    """A benchmark warehouse kept between runs: built by `build(root)` the first time, renormalised from its
    raw/ (`ctmirror rebuild`) when the SQL has changed since, as is otherwise."""
    from ctmirror.core.warehouse import Warehouse
    from ingest.loader import rebuild

    stamp = root / "bench-sql-fingerprint.txt"
    if not (root / "current").exists():
        build(root)
    elif not stamp.exists() or stamp.read_text() != sql_fingerprint():
        print(f"rebuilding {root}: the SQL changed since it was built")
        rebuild(Warehouse(root))
    stamp.write_text(sql_fingerprint())
    return root


def scaled_warehouse_arguments(calls: int) -> tuple[argparse.Namespace, Path]:
    """A benchmark's --studies (500,000 by default) and --calls arguments, and the scaled warehouse they name
    (bench/out/wh-<studies>, built by bench_methods.py)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500_000)
    parser.add_argument("--calls", type=int, default=calls)
    args = parser.parse_args()
    return args, Path(__file__).resolve().parent / "out" / f"wh-{args.studies}"
