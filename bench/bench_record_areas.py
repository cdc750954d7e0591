"""AREA[...] of record fields that have no area of their own (ctmirror/server/v2/record_areas.py) at scale: the first
request naming a field reads every record shown, later ones match the values kept in memory. Prints, per query,
the seconds of a /api/v2/studies page (10 studies, with the total) on the current state and at a cutoff.

    python bench/bench_record_areas.py [--warehouse bench/out/wh-500000] [--as-of 2019-06-01]
"""

from __future__ import annotations

import argparse
import time
from datetime import date
from pathlib import Path

from ctmirror import Mirror
from ctmirror.server import v2

# (query, what it shows): the first of each field reads the records; those after it do not
QUERIES = [
    ("AREA[OverallOfficialAffiliation](university hospital)", "text, first of its field"),
    ('AREA[OverallOfficialAffiliation]"mayo clinic"', "text, field kept"),
    ("AREA[OverallOfficialAffiliation]harv*", "wildcard, field kept"),
    ("AREA[OverallOfficialAffiliation](university hospital) AND AREA[Phase]PHASE3", "with a structured field"),
    ("AREA[OversightHasDMC]true", "boolean, first of its field"),
    ("AREA[ReferenceCitation]MISSING", "MISSING, first of its field"),
    ("AREA[OutcomeMeasureTitle]COVERAGE[StartsWith](change from baseline)", "a results field, first"),
]


def timed(m: Mirror, query: str, as_of: date | None) -> tuple[float, int]:
    start = time.perf_counter()
    page, _ = v2.studies(m, {"filter.advanced": query, "pageSize": "10", "countTotal": "true"}, as_of)
    return time.perf_counter() - start, page.get("totalCount", 0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warehouse", type=Path, default=Path("bench/out/wh-500000"))
    parser.add_argument("--as-of", type=date.fromisoformat, default=date(2019, 6, 1))
    args = parser.parse_args()
    for as_of in (None, args.as_of):
        with Mirror(args.warehouse, as_of=as_of) as m:
            for query, what in QUERIES:
                seconds, total = timed(m, query, as_of)
                print(f"{as_of or 'current'}\t{seconds:7.2f} s\t{total:>8,}\t{what}\t{query}", flush=True)


if __name__ == "__main__":
    main()
