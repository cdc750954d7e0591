"""The readers' phrase matcher against the catalog's own, paired: two Mirrors of one warehouse, one finding a query's
phrases and concepts outside DuckDB's plan (ctmirror/read/phrase_texts.py), one with the catalog's field_texts_many
in SQL, each method's calls run alternately on the two, call by call, so the machine's drift falls on both alike.

    python bench/bench_phrase_texts.py [--studies 500000] [--calls 200] [--passes 2]

The calls are bench_methods.py's. A first pass meets every word, synonym group and drug name for the first time in
a fresh process; a second pass repeats the same calls. Prints p50 ms per method and side, their ratio, and how many
answers differ (0: the matchers agree on every call).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ctmirror.read.mirror as mirror_module  # noqa: E402
from bench.bench_methods import calls  # noqa: E402
from bench.corpus import scaled_warehouse_arguments  # noqa: E402
from ctmirror import Mirror  # noqa: E402

MATCHING = ("search_trials", "detect_whitespace", "get_landscape", "get_terminated", "search")


def catalog_matcher_mirror(root: Path) -> Mirror:
    """A Mirror whose connection keeps the catalog's field_texts_many (the reader's function is not installed)."""
    installed = mirror_module.install_phrase_texts
    mirror_module.install_phrase_texts = lambda con, catalog: None
    try:
        return Mirror(root)
    finally:
        mirror_module.install_phrase_texts = installed


def main() -> None:
    passes = 2
    if "--passes" in sys.argv:
        at = sys.argv.index("--passes")
        passes = int(sys.argv[at + 1])
        del sys.argv[at:at + 2]
    args, root = scaled_warehouse_arguments(200)
    if not (root / "current").exists():
        sys.exit(f"{root} is not built: run python bench/bench_methods.py --studies {args.studies} first")
    reader, catalog = Mirror(root), catalog_matcher_mirror(root)
    print(f"{args.studies:,} studies, {args.calls} calls a method, alternately on each side; p50 ms")
    print(f"{'method':<20}{'pass':>5}{'reader':>9}{'catalog':>9}{'ratio':>7}{'differ':>8}")
    for method, method_calls in calls(reader, args.calls).items():
        if method not in MATCHING:
            continue
        for side in (reader, catalog):  # each side's statements prepared
            getattr(side, method)(**method_calls[0][1])
        for done in range(passes):
            times: dict[bool, list[float]] = {True: [], False: []}
            differ = 0
            for i, (name, kwargs) in enumerate(method_calls):
                answers = {}
                for side in ((reader, catalog) if i % 2 else (catalog, reader)):
                    started = time.perf_counter()
                    answers[side is reader] = getattr(side, name)(**kwargs)
                    times[side is reader].append((time.perf_counter() - started) * 1000)
                differ += answers[True] != answers[False]
            ours, theirs = statistics.median(times[True]), statistics.median(times[False])
            print(f"{method:<20}{done + 1:>5}{ours:>9.1f}{theirs:>9.1f}{ours / theirs:>7.3f}{differ:>8}")


if __name__ == "__main__":
    main()
