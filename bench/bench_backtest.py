"""Backtest throughput: N mixed method calls (default 10,000) through Mirror.batch against a strict as-of
snapshot of the scaled warehouse (bench/out/wh-<studies>, built by bench_methods.py). Prints the snapshot's
build time, the wall time of the calls and calls/s.

    python bench/bench_backtest.py [--studies 500000] [--calls 10000] [--as-of 2019-06-01]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctmirror import Mirror  # noqa: E402
from ctmirror.core.sqlfiles import catalog_digests  # noqa: E402
from ctmirror.core.warehouse import Warehouse  # noqa: E402
from ingest.snapshot import build_snapshot  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500_000)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--as-of", default="2019-06-01")
    args = parser.parse_args()
    cutoff = date.fromisoformat(args.as_of)
    warehouse = Warehouse(ROOT / "bench" / "out" / f"wh-{args.studies}")
    # Kept per catalog format: one built by an older ctmirror is not what this one reads.
    snapshot = ROOT / "bench" / "out" / f"snapshot-{args.studies}-{cutoff}-{catalog_digests()[0][:12]}"
    if not (snapshot / "snapshot.json").exists():
        started = time.perf_counter()
        manifest = build_snapshot(warehouse, cutoff, snapshot)
        print(f"snapshot of {manifest['studies']:,} studies as of {cutoff} built in "
              f"{time.perf_counter() - started:,.0f} s")
    rng = random.Random(11)
    with Mirror(snapshot) as m:
        conditions = [r["c"] for r in m.rows("SELECT DISTINCT condition AS c FROM conditions WHERE nct_id < 'NCT9' "
                                             "AND length(condition) < 60 ORDER BY 1")]
        drugs = [r["d"] for r in m.rows("SELECT DISTINCT name AS d FROM interventions WHERE nct_id < 'NCT9' AND "
                                        "intervention_type = 'Drug' AND NOT is_placebo(name) ORDER BY 1")]
        ids = [r["nct_id"] for r in m.rows("SELECT nct_id FROM studies ORDER BY 1")]
        kinds = [
            lambda: ("search_trials", {"drug": rng.choice(drugs), "condition": rng.choice(conditions)}),
            lambda: ("detect_whitespace", {"drug": rng.choice(drugs), "condition": rng.choice(conditions)}),
            lambda: ("get_landscape", {"condition": rng.choice(conditions)}),
            lambda: ("get_terminated", {"query": rng.choice(drugs + conditions)}),
            lambda: ("get_trial", {"nct_id": rng.choice(ids)}),
            lambda: ("get_trial_details", {"nct_id": rng.choice(ids)}),
        ]
        calls = [rng.choice(kinds)() for _ in range(args.calls)]
        started = time.perf_counter()
        results = m.batch(calls)
        elapsed = time.perf_counter() - started
    print(f"calls              {len(results):,} mixed (six methods, seeded)")
    print(f"wall time          {elapsed:,.1f} s")
    print(f"throughput         {len(results) / elapsed:,.0f} calls/s")


if __name__ == "__main__":
    main()
