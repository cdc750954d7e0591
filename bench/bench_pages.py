"""v2 search pages by what they show: whole records, chosen `fields`, CSV; on bench/out/wh-<studies>, in process
(v2.studies, what `ctmirror serve` runs for /api/v2/studies, without the HTTP).

    python bench/bench_pages.py [--studies 500000] [--calls 40]

Conditions are drawn (seeded) from the sample's, broad and narrow alike; every request asks for a page of 1,000
(a data pipeline's page), on the current state or, for half of them, at one of three cutoffs (a server pinned to a
date reads records as of it; each reader's plans are made before timing). Reports p50/p99 ms and studies per page
for each kind of page.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import call_material, scaled_warehouse_arguments  # noqa: E402
from ctmirror import Mirror  # noqa: E402
from ctmirror.server import v2  # noqa: E402

CUTOFFS = (date(2008, 1, 1), date(2015, 6, 1), date(2021, 1, 1))
KINDS = {
    "whole records": {},
    "fields=NCTId": {"fields": "NCTId"},
    "five fields": {"fields": "NCTId,BriefTitle,OverallStatus,Phase,LocationCountry"},
    "CSV, live columns": {"format": "csv"},
}


def main() -> None:
    args, root = scaled_warehouse_arguments(40)
    rng = random.Random(5)
    with Mirror(root) as m:
        _, conditions, _ = call_material(m)
    requests = [(rng.choice(conditions), rng.choice(CUTOFFS) if rng.random() < 0.5 else None)
                for _ in range(args.calls)]
    print(f"{root.name}: {args.calls} requests a kind, pageSize 1000, half at a cutoff")
    print(f"{'page':<20}{'p50 ms':>9}{'p99 ms':>9}{'studies':>9}")
    mirrors = {cutoff: Mirror(root, as_of=cutoff) for cutoff in (None, *CUTOFFS)}
    try:
        for cutoff, mirror in mirrors.items():
            v2.make_search_tables(mirror)
            for extra in KINDS.values():
                v2.studies(mirror, {"query.cond": "asthma", "pageSize": "1000", **extra}, cutoff)
        for kind, extra in KINDS.items():
            times, shown = [], []
            for condition, cutoff in requests:
                params = {"query.cond": condition, "pageSize": "1000", **extra}
                started = time.perf_counter()
                page, _ = v2.studies(mirrors[cutoff], params, cutoff)
                times.append((time.perf_counter() - started) * 1000)
                shown.append(len(page["studies"]))
            times.sort()
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            print(f"{kind:<20}{statistics.median(times):>9.1f}{p99:>9.1f}{statistics.median(shown):>9.0f}")
    finally:
        for mirror in mirrors.values():
            mirror.close()


if __name__ == "__main__":
    main()
