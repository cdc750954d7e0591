"""Backtests as users run them: every call with a random cutoff of its own, realistic breadth, NCT IDs drawn
uniformly (on bench/out/wh-<studies>, built or rebuilt here as bench_methods.py does).

    python bench/bench_cutoffs.py [--studies 500000] [--calls 200] [--batch 10000] [--cutoffs 1000]

1. Method calls by breadth: each call's condition is counted first (the studies a search on it matches), and p50/p99
   are reported per bucket (<= 100, <= 1,000, <= 10,000, more), on the current state and with a cutoff drawn
   uniformly from 1995-2026 for every call (never the same twice), with the ratio of the two; then the three
   buckets up to 10,000 together (the set the goal of p50 20 ms names).
2. get_trial and get_trial_details with NCT IDs drawn uniformly from every study: current, and on Mirrors pinned to
   random cutoffs.
3. Mirror.batch of --batch calls (landscape, whitespace, search_trials, get_terminated), each with its own cutoff.
4. (run first) --cutoffs distinct cutoffs answered one after another: the process's memory growth over an idle
   Mirror and the bytes added under the warehouse.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_methods import build, read_into_page_cache  # noqa: E402
from bench.corpus import CONDITIONS, call_material  # noqa: E402
from ctmirror import Mirror  # noqa: E402

BUCKETS = ((100, "<= 100"), (1_000, "<= 1,000"), (10_000, "<= 10,000"), (None, "more"))
FIRST, LAST = date(1995, 1, 1), date(2026, 11, 1)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def listing(root: Path) -> dict[str, int]:
    return {str(p): p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def p50_p99(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def cell(times: list[float]) -> str:
    if not times:
        return f"{'-':>8}{'-':>8}{0:>6}"
    p50, p99 = p50_p99(times)
    return f"{p50:>8.1f}{p99:>8.1f}{len(times):>6}"


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def random_cutoff(rng: random.Random) -> date:
    return FIRST + timedelta(days=rng.randrange((LAST - FIRST).days))


def memory_and_disk(root: Path, conditions: list[str], count: int, rng: random.Random) -> None:
    """Run first, in a fresh process: the peak it reads is the process's own high-water mark."""
    before = listing(root)
    with Mirror(root) as m:
        m.get_landscape("asthma")
        idle = rss_mb()
        started = time.perf_counter()
        for _ in range(count):
            m.get_landscape(rng.choice(conditions), date_before=random_cutoff(rng))
        elapsed = time.perf_counter() - started
        grown = peak_rss_mb() - idle
    after = listing(root)
    added = sum(size for path, size in after.items() if before.get(path) != size)
    print(f"{count:,} distinct cutoffs, one landscape each: {elapsed:,.1f} s; peak memory {grown:,.0f} MB above "
          f"an idle Mirror ({idle:,.0f} MB); {added:,} bytes written under the warehouse "
          f"({len(after.keys() - before.keys())} new files)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--cutoffs", type=int, default=1_000)
    parser.add_argument("--memory-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    rng = random.Random(23)
    if args.memory_only:
        root = ROOT / "bench" / "out" / f"wh-{args.studies}"
        with Mirror(root) as m:
            conditions = [r["c"] for r in m.rows(CONDITIONS)]
        memory_and_disk(root, conditions, args.cutoffs, rng)
        return
    root = build(ROOT / "bench" / "out" / f"wh-{args.studies}", args.studies)
    with Mirror(root) as m:
        read_into_page_cache(m.state.catalog)  # as a few minutes of use would (see bench_methods.py)
        studies = m.sql("SELECT count(*) AS n FROM studies")["n"][0]
        ids, conditions, drugs = call_material(m)
        rows = m.sql("SELECT count(*) AS n FROM trial_card")["n"][0]
        print(f"{studies:,} studies ({rows:,} rows of trial_card); {args.calls} conditions drawn from "
              f"{len(conditions):,}")
    # in a process of its own: this one's high-water mark holds the build above, if it ran
    subprocess.run([sys.executable, __file__, "--studies", str(args.studies), "--cutoffs", str(args.cutoffs),
                    "--memory-only"], check=True)
    with Mirror(root) as m:

        # 1. by breadth, current and at a random cutoff per call
        breadth = {c: m.search(condition=c, page_size=1).pagination.total_count
                   for c in rng.sample(conditions, min(len(conditions), args.calls))}
        current: dict[str, dict[str, list[float]]] = {}
        dated: dict[str, dict[str, list[float]]] = {}
        for condition, matches in breadth.items():
            bucket = next(label for limit, label in BUCKETS if limit is None or matches <= limit)
            drug = rng.choice(drugs)
            cutoff = random_cutoff(rng)
            for method, kwargs in (("search_trials", {"drug": drug, "condition": condition}),
                                   ("get_landscape", {"condition": condition}),
                                   ("detect_whitespace", {"drug": drug, "condition": condition}),
                                   ("get_terminated", {"query": condition}),
                                   ("search", {"condition": condition})):
                current.setdefault(method, {}).setdefault(bucket, []).append(timed(lambda: m.call(method, **kwargs)))
                dated.setdefault(method, {}).setdefault(bucket, []).append(
                    timed(lambda: m.call(method, **kwargs, date_before=cutoff)))
        print("\nby how many studies the condition matches: p50 ms, p99 ms, calls")
        print(f"{'method':<20}{'':<9}" + "".join(f"{label:>22}" for _, label in BUCKETS) + f"{'worst call ms':>15}")
        for method in current:
            for name, table in (("current", current), ("cutoff", dated)):
                worst = max(t for ts in table[method].values() for t in ts)
                print(f"{method if name == 'current' else '':<20}{name:<9}"
                      + "".join(cell(table[method].get(label, [])).rjust(22) for _, label in BUCKETS)
                      + f"{worst:>15.1f}")
            ratios = []
            for _, label in BUCKETS:
                if current[method].get(label):
                    (c50, c99), (d50, d99) = p50_p99(current[method][label]), p50_p99(dated[method][label])
                    ratios.append(f"{d50 / c50:>6.2f}x {d99 / c99:>5.2f}x".rjust(22))
                else:
                    ratios.append(f"{'-':>22}")
            print(f"{'':<20}{'ratio':<9}" + "".join(ratios))
        # the goal's set as its words read, "queries matching <= 10,000 studies": the first three columns together
        print("\nevery condition matching <= 10,000 studies (the first three columns together): p50 ms, p99 ms, calls")
        for method in current:
            for name, table in (("current", current), ("cutoff", dated)):
                times = [t for limit, label in BUCKETS if limit is not None for t in table[method].get(label, [])]
                print(f"{method if name == 'current' else '':<20}{name:<9}{cell(times):>22}")

        # 2. by ID
        for method in ("get_trial", "get_trial_details"):
            times = [timed(lambda: m.call(method, rng.choice(ids))) for _ in range(args.calls)]
            print(f"{method:<20}{'current':<9}{'uniformly random IDs':>22}{cell(times):>22}")
        for method in ("get_trial", "get_trial_details"):
            times = []
            for _ in range(10):
                with Mirror(root, as_of=random_cutoff(rng)) as pinned:
                    times += [timed(lambda: pinned.call(method, rng.choice(ids))) for _ in range(args.calls // 10)]
            print(f"{method:<20}{'pinned':<9}{'10 random cutoffs':>22}{cell(times):>22}")

        # 3. a backtest's batch, every call its own cutoff
        calls = []
        days = rng.sample(range((LAST - FIRST).days), args.batch)  # a distinct cutoff for every call
        for day in days:
            condition, drug, cutoff = rng.choice(conditions), rng.choice(drugs), FIRST + timedelta(days=day)
            calls.append(rng.choice([
                ("get_landscape", {"condition": condition, "date_before": cutoff}),
                ("detect_whitespace", {"drug": drug, "condition": condition, "date_before": cutoff}),
                ("search_trials", {"drug": drug, "condition": condition, "date_before": cutoff}),
                ("get_terminated", {"query": condition, "date_before": cutoff})]))
        distinct = len({c[1]["date_before"] for c in calls})
        started = time.perf_counter()
        m.batch(calls)
        elapsed = time.perf_counter() - started
        print(f"\nMirror.batch: {len(calls):,} calls, {distinct:,} distinct cutoffs: {elapsed:,.1f} s, "
              f"{len(calls) / elapsed:,.0f} calls/s")


if __name__ == "__main__":
    main()
