"""The fixed cost of a method call: what every call pays however few studies it matches.

    python bench/bench_call_floor.py [--studies 500000] [--calls 100]

1. Each method called on a query that matches nothing (on bench/out/wh-<studies>, built as bench_cutoffs.py builds
   it): p50 of the whole call, and of its prepared query alone (EXECUTE), wall and CPU.
2. DuckDB's own floor, on a table of one row in memory: a prepared query of each operator kind the methods' plans
   are made of, p50 in microseconds, on one thread and on two. A plan's operators each cost this much however few
   rows reach them, so a method's floor is roughly the sum over its plan.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_methods import build  # noqa: E402
from ctmirror import Mirror  # noqa: E402

NOTHING = "zzqx qqzx"  # no study's condition, drug or text holds these words
CALLS = {
    "search_trials": {"drug": NOTHING, "condition": NOTHING},
    "get_landscape": {"condition": NOTHING},
    "detect_whitespace": {"drug": NOTHING, "condition": NOTHING},
    "get_terminated": {"query": NOTHING},
}
OPERATORS = {
    "SELECT 1": "SELECT 1",
    "ungrouped aggregate": "SELECT count(*), sum(i) FROM one",
    "hash grouping": "SELECT i % 3 AS g, count(*) FROM one GROUP BY g",
    "perfect-hash grouping": "SELECT u, count(*) FROM one GROUP BY u",
    "list aggregate": "SELECT list(i) FROM one",
    "hash join": "SELECT count(*) FROM one AS a JOIN one AS b USING (i)",
    "order by": "SELECT i FROM one ORDER BY i DESC",
    "window": "SELECT row_number() OVER (PARTITION BY i % 3 ORDER BY i) FROM one",
    "scalar subquery": "SELECT (SELECT l FROM one)",
}


def timed(run, count: int) -> tuple[float, float]:
    """p50 wall and CPU milliseconds of run() over count runs, after a few to warm up."""
    for _ in range(3):
        run()
    walls, cpus = [], []
    for _ in range(count):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def method_floor(root: Path, count: int) -> None:
    print(f"a call matching nothing, p50 ms of {count} ({root.name})")
    print(f"{'method':<20}{'call wall':>11}{'call CPU':>10}{'query wall':>12}{'query CPU':>11}")
    with Mirror(root) as m:
        for method, arguments in CALLS.items():
            call_wall, call_cpu = timed(lambda: m.call(method, **arguments), count)
            # the call above left its arguments in the method's table and its query prepared under a name that
            # starts with the method's and says its plan's constants (read.answers._execute)
            prepared = max((name for name in m.prepared_calls if name.startswith(method)), key=len)
            query_wall, query_cpu = timed(lambda: m.con.execute(f"EXECUTE {prepared}").fetchall(), count)
            print(f"{method:<20}{call_wall:>11.2f}{call_cpu:>10.2f}{query_wall:>12.2f}{query_cpu:>11.2f}")


def operator_floor(count: int) -> None:
    print(f"\nDuckDB {duckdb.__version__}, a prepared query over one row, p50 µs of {count}")
    print(f"{'query':<24}{'1 thread':>10}{'2 threads':>11}")
    figures: dict[str, list[float]] = {name: [] for name in OPERATORS}
    for threads in (1, 2):
        con = duckdb.connect(config={"threads": threads, "autoinstall_known_extensions": False,
                                     "autoload_known_extensions": False})
        con.execute("CREATE TABLE one AS SELECT 0::BIGINT AS i, 0::UTINYINT AS u, ['x'] AS l")
        for name, query in OPERATORS.items():
            con.execute(f"PREPARE floor AS {query}")
            wall, _ = timed(lambda: con.execute("EXECUTE floor").fetchall(), count * 3)
            figures[name].append(wall * 1000)
            con.execute("DEALLOCATE floor")
        con.close()
    for name, (one, two) in figures.items():
        print(f"{name:<24}{one:>10.0f}{two:>11.0f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500_000)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    root = build(ROOT / "bench" / "out" / f"wh-{args.studies}", args.studies)
    method_floor(root, args.calls)
    operator_floor(args.calls)


if __name__ == "__main__":
    main()
