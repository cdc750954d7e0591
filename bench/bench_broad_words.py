"""The hard cases of Essie's scattered words: broad conditions of several common words (bench/out/wh-<studies>,
built by bench_methods.py), get_landscape on a fresh Mirror, three ways: its first call (the reader reads the words'
versions), the same call again, and a Mirror.batch of the same condition at 20 cutoffs (ms a call).

    python bench/bench_broad_words.py [--studies 500000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctmirror import Mirror  # noqa: E402

CONDITIONS = ["chronic kidney disease", "type 2 diabetes mellitus", "non small cell lung cancer", "breast cancer",
              "heart failure"]
CUTOFFS = [f"{year}-01-01" for year in range(2005, 2025)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500_000)
    args = parser.parse_args()
    root = ROOT / "bench" / "out" / f"wh-{args.studies}"
    with Mirror(root) as mirror:
        mirror.get_trial(nct_id=mirror.rows("SELECT nct_id FROM studies ORDER BY nct_id LIMIT 1")[0]["nct_id"])
        print(f"{'condition':28} {'first ms':>9} {'again ms':>9} {'batch ms/call':>14}")
        for condition in CONDITIONS:
            first = timed(lambda: mirror.get_landscape(condition=condition))
            again = timed(lambda: mirror.get_landscape(condition=condition))
            batch = timed(lambda: mirror.batch([("get_landscape", {"condition": condition, "date_before": cutoff})
                                                for cutoff in CUTOFFS])) / len(CUTOFFS)
            print(f"{condition:28} {first:9.1f} {again:9.1f} {batch:14.1f}")


def timed(work) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


if __name__ == "__main__":
    main()
