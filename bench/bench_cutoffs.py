"""Backtests as users run them: realistic breadth on the current state, NCT IDs drawn uniformly, and calls that
each carry a cutoff of their own, never seen before (on bench/out/wh-<studies>, built by bench_methods.py).

    python bench/bench_cutoffs.py [--studies 500000] [--calls 200] [--new-cutoffs 3]

1. Method calls on the current state, by breadth: each call's condition is counted first (the studies a search on
   it matches), and p50/p99 are reported per bucket (<= 100, <= 1,000, <= 10,000, more). get_trial and
   get_trial_details with NCT IDs drawn uniformly from every study.
2. Calls at never-seen cutoffs, drawn uniformly from 1995-2026: the first call at each (what a backtest pays per
   distinct cutoff), the memory the process grew by and the bytes added under the warehouse; then the next calls at
   that cutoff, against the same calls on the current state. A batch of calls with distinct cutoffs pays the first
   call's cost once per cutoff: its throughput is extrapolated from these figures rather than run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_methods import read_into_page_cache  # noqa: E402
from ctmirror import Mirror  # noqa: E402

BUCKETS = ((100, "<= 100"), (1_000, "<= 1,000"), (10_000, "<= 10,000"), (None, "more"))


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def percentiles(times: list[float]) -> str:
    if not times:
        return f"{'-':>9}{'-':>9}{0:>7}"
    times = sorted(times)
    return f"{statistics.median(times):>9.1f}{times[min(len(times) - 1, int(len(times) * 0.99))]:>9.1f}{len(times):>7}"


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--new-cutoffs", type=int, default=3)
    args = parser.parse_args()
    root = ROOT / "bench" / "out" / f"wh-{args.studies}"
    if not (root / "current").exists():
        sys.exit(f"{root} is missing: run `python bench/bench_methods.py --studies {args.studies}` first")
    rng = random.Random(23)
    with Mirror(root) as m:
        read_into_page_cache(m.state.catalog)  # as a few minutes of use would (see bench_methods.py)
        studies = m.sql("SELECT count(*) AS n FROM studies")["n"][0]
        conditions = [r["c"] for r in m.rows("SELECT DISTINCT condition AS c FROM conditions WHERE nct_id < 'NCT9' "
                                             "AND length(condition) < 60 ORDER BY 1")]
        drugs = [r["d"] for r in m.rows("SELECT DISTINCT name AS d FROM interventions WHERE nct_id < 'NCT9' AND "
                                        "intervention_type = 'Drug' AND NOT is_placebo(name) ORDER BY 1")]
        ids = [r["nct_id"] for r in m.rows("SELECT nct_id FROM studies ORDER BY 1")]
        print(f"{studies:,} studies; {args.calls} calls per method; conditions drawn from {len(conditions):,}")

        # 1. the current state, by breadth
        breadth: dict[str, int] = {}
        for condition in rng.sample(conditions, min(len(conditions), args.calls)):
            breadth[condition] = m.search(condition=condition, page_size=1).pagination.total_count
        by_bucket: dict[str, dict[str, list[float]]] = {}
        for condition, matches in breadth.items():
            bucket = next(label for limit, label in BUCKETS if limit is None or matches <= limit)
            drug = rng.choice(drugs)
            for method, call in (("search_trials", lambda: m.search_trials(drug, condition)),
                                 ("get_landscape", lambda: m.get_landscape(condition)),
                                 ("detect_whitespace", lambda: m.detect_whitespace(drug, condition)),
                                 ("get_terminated", lambda: m.get_terminated(condition)),
                                 ("search", lambda: m.search(condition=condition))):
                by_bucket.setdefault(method, {}).setdefault(bucket, []).append(timed(call))
        print("\ncurrent state, by how many studies the condition matches: p50 ms, p99 ms, calls")
        print(f"{'method':<20}" + "".join(f"{label:>25}" for _, label in BUCKETS))
        for method, buckets in by_bucket.items():
            print(f"{method:<20}" + "".join(percentiles(buckets.get(label, [])).rjust(25) for _, label in BUCKETS))
        for method in ("get_trial", "get_trial_details"):
            times = [timed(lambda: getattr(m, method)(rng.choice(ids))) for _ in range(args.calls)]
            print(f"{method:<20}{'uniformly random IDs':>25}{percentiles(times):>25}")

        # 2. never-seen cutoffs
        print(f"\n{args.new_cutoffs} never-seen cutoffs (uniform in 1995-2026), one landscape call each first")
        print(f"{'cutoff':<12}{'first call s':>14}{'RSS grew MB':>13}{'disk added MB':>15}{'next calls p50/p99 ms':>26}"
              f"{'same, current p50/p99':>24}")
        firsts = []
        for _ in range(args.new_cutoffs):
            cutoff = date(1995, 1, 1) + timedelta(days=rng.randrange((date(2026, 11, 1) - date(1995, 1, 1)).days))
            rss, disk = peak_rss_mb(), disk_bytes(root)
            condition = rng.choice(conditions)
            started = time.perf_counter()
            m.get_landscape(condition, date_before=cutoff)
            first = time.perf_counter() - started
            firsts.append(first)
            picked = [rng.choice(conditions) for _ in range(50)]
            then = sorted(timed(lambda: m.get_landscape(c, date_before=cutoff)) for c in picked)
            now = sorted(timed(lambda: m.get_landscape(c)) for c in picked)
            print(f"{cutoff.isoformat():<12}{first:>14.1f}{peak_rss_mb() - rss:>13,.0f}"
                  f"{(disk_bytes(root) - disk) / 1e6:>15,.0f}"
                  f"{statistics.median(then):>15.1f} / {then[-1]:<8.1f}{statistics.median(now):>13.1f} / {now[-1]:.1f}")
        per_cutoff = statistics.median(firsts)
        print(f"\na batch of 10,000 calls with 10,000 distinct cutoffs would take ~{per_cutoff * 10_000 / 3600:,.0f} h "
              f"({10_000 / (per_cutoff * 10_000):.4f} calls/s); 1,000 distinct cutoffs would add "
              f"~{(disk_bytes(root) - disk) / 1e9 * 1_000:,.0f} GB under the warehouse at the rate of the last one")


if __name__ == "__main__":
    main()
