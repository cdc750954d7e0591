"""Essie constructs real v2 clients send in filter.advanced, each with a broad condition (query.cond=cancer), a page
of 10 and countTotal, on bench/out/wh-<studies>, in process (v2.studies, what `ctmirror serve` runs).

    python bench/bench_essie.py [--studies 500000] [--calls 3]

The first request of each is timed apart (a list's sizes or a record field's values are read then, and kept);
then the median of --calls more.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import scaled_warehouse_arguments  # noqa: E402
from ctmirror import Mirror  # noqa: E402
from ctmirror.server import v2  # noqa: E402

CONSTRUCTS = (
    "SEARCH[Location](AREA[LocationCountry]Germany AND AREA[LocationStatus]RECRUITING)",
    "AREA[LocationCountry]Germany AND AREA[LocationStatus]RECRUITING",
    "SEARCH[Location](AREA[LocationFacility]Mayo Clinic AND AREA[LocationStatus]RECRUITING)",
    "SEARCH[Location](AREA[LocationStatus]RECRUITING)",
    "AREA[LocationGeoPoint]DISTANCE[42.36,-71.06,50mi]",
    "AREA[Phase:size]2",
    "AREA[Location:size]RANGE[100, MAX]",
    'AREA[LeadSponsorName]COVERAGE[FullMatch]"Merck Sharp & Dohme LLC"',
    'AREA[OverallStatus]"Active, not recruiting"',
    "ALL",
    # a drug class's members: 20 and 63 terms joined by OR (with the condition, 64: a request's most)
    " OR ".join(f"AREA[Condition]c{i}" for i in range(20)),
    " OR ".join(f"AREA[Condition]c{i}" for i in range(63)),
)


def main() -> None:
    args, root = scaled_warehouse_arguments(3)
    with Mirror(root) as m:
        v2.make_search_tables(m)
        print(f"{root.name}: query.cond=cancer, pageSize 10, countTotal; the first request, then a median")
        print(f"{'first ms':>9}{'then ms':>9}{'studies':>9}  filter.advanced")
        for construct in CONSTRUCTS:
            params = {"query.cond": "cancer", "filter.advanced": construct, "pageSize": "10", "fields": "NCTId",
                      "countTotal": "true"}
            times = []
            for _ in range(args.calls + 1):
                started = time.perf_counter()
                page, _ = v2.studies(m, params, None)
                times.append((time.perf_counter() - started) * 1000)
            shown = construct if len(construct) < 100 else f"{construct[:60]} ... ({construct.count(' OR ') + 1} terms)"
            print(f"{times[0]:>9.0f}{statistics.median(times[1:]):>9.0f}{page['totalCount']:>9,}  {shown}")


if __name__ == "__main__":
    main()
