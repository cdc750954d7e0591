"""Method calls on one kept state of a warehouse, for comparing two versions of the code alternately on the same
machine (its speed drifts by a fifth within hours): publish a state with each code into the same warehouse, then
run this for each in turn, the old code's from its own checkout.

    git worktree add /tmp/old <commit> && (cd /tmp/old && python -m ctmirror.cli -w $WH republish)
    CODE=/tmp/old python bench/compare_states.py --state 000014    # then the new code's state, and again

The calls are bench_cutoffs.py's: 100 conditions drawn across breadth (the breadth is counted once and kept in
bench/out/compare-material.json, so every run makes the same calls), every method on each, current then at a
random cutoff; p50 and p99 ms per method and breadth; get_trial with 300 random IDs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [os.environ.get("CODE", str(ROOT)), str(ROOT)]  # the code measured, then bench/ from here

from bench.corpus import call_material  # noqa: E402
from ctmirror import Mirror  # noqa: E402

FIRST, LAST = date(1995, 1, 1), date(2026, 11, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warehouse", type=Path, default=ROOT / "bench" / "out" / "wh-500000")
    parser.add_argument("--state", required=True)
    args = parser.parse_args()
    rng = random.Random(23)
    kept = ROOT / "bench" / "out" / "compare-material.json"
    with Mirror(args.warehouse, state=args.state) as m:
        print(f"state {m.state_id}, code {Path(sys.modules['ctmirror'].__file__).parent}")
        if kept.exists():
            material = json.loads(kept.read_text())
        else:
            ids, conditions, drugs = call_material(m)
            breadth = {c: m.search(condition=c, page_size=1).pagination.total_count
                       for c in rng.sample(conditions, 100)}
            material = {"ids": rng.sample(ids, 300), "drugs": drugs, "breadth": breadth}
            kept.write_text(json.dumps(material))
        times: dict[tuple[str, str, str], list[float]] = {}

        def timed(key: tuple[str, str, str], call) -> None:
            started = time.perf_counter()
            call()
            times.setdefault(key, []).append((time.perf_counter() - started) * 1000)

        for condition, matches in material["breadth"].items():
            bucket = "<= 1,000" if matches <= 1000 else "<= 10,000" if matches <= 10000 else "more"
            drug = rng.choice(material["drugs"])
            cutoff = FIRST + timedelta(days=rng.randrange((LAST - FIRST).days))
            for method, kwargs in (("search_trials", {"drug": drug, "condition": condition}),
                                   ("get_landscape", {"condition": condition}),
                                   ("detect_whitespace", {"drug": drug, "condition": condition}),
                                   ("get_terminated", {"query": condition}),
                                   ("search", {"condition": condition})):
                timed((method, bucket, "current"), lambda: m.call(method, **kwargs))
                timed((method, bucket, "cutoff"), lambda: m.call(method, **kwargs, date_before=cutoff))
        for nct_id in material["ids"]:
            timed(("get_trial", "random IDs", "current"), lambda: m.call("get_trial", nct_id))
    for key in sorted(times):
        values = sorted(times[key])
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        print(f"{key[0]:<18} {key[1]:<11} {key[2]:<8} p50 {statistics.median(values):6.1f}  p99 {p99:6.1f}  "
              f"calls {len(values)}")


if __name__ == "__main__":
    main()
