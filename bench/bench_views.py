"""Statistics latency: every stats_* macro on the scaled warehouse (bench/out/wh-<studies>), without a filter and
with 20 seeded real conditions; prints p50 and p99 per statistic.

    python bench/bench_views.py [--studies 500000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctmirror import Mirror  # noqa: E402
from ctmirror.read.registry import STATISTIC_NAMES as STATS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500_000)
    args = parser.parse_args()
    with Mirror(ROOT / "bench" / "out" / f"wh-{args.studies}") as m:
        rng = random.Random(5)
        conditions = [r["c"] for r in m.rows("SELECT DISTINCT condition AS c FROM conditions WHERE nct_id < 'NCT9' "
                                             "AND length(condition) < 60 ORDER BY 1")]
        scopes = [None] + [rng.choice(conditions) for _ in range(20)]
        studies = m.sql("SELECT count(*) AS n FROM studies")["n"][0]
        print(f"{studies:,} studies; 21 calls each (no filter + 20 conditions)")
        print(f"{'statistic':<28}{'p50 ms':>9}{'p99 ms':>9}")
        for name in STATS:
            m.stats(name)
            times = []
            for condition in scopes:
                started = time.perf_counter()
                m.stats(name, condition=condition)
                times.append((time.perf_counter() - started) * 1000)
            times.sort()
            print(f"{name:<28}{statistics.median(times):>9.1f}{times[-1]:>9.1f}")


if __name__ == "__main__":
    main()
