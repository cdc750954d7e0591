"""A reader's temporary macros against another revision's, paired: two Mirrors of one warehouse, one as this checkout
installs them, one with the temporary macros of some sql/calls/ files as they were at REV (read with `git show`),
each method's calls run alternately on the two, call by call, so the machine's drift falls on both alike.

    python bench/bench_paired_macros.py REV sql/calls/phrase_texts.sql [...] [--studies 500000] [--calls 200]
        [--methods detect_whitespace,get_landscape] [--mcp] [--batch]

For a change to how a reader answers a macro (its Python functions and the macro that calls them) where this
checkout still registers every function the older macro calls. The calls are bench_methods.py's, or with --mcp
bench_mcp.py's arguments (a random cutoff on every call). Prints p50 ms per method and pass (the second repeats the
first's calls), their ratio, and how many answers differ (0: both sides agree on every call). With --batch, each
method's calls run as one Mirror.batch on each side, alternately, five times: the median ms per call.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_methods import calls  # noqa: E402
from bench.corpus import tool_arguments  # noqa: E402
from ctmirror import Mirror  # noqa: E402

MATCHING = ("search_trials", "detect_whitespace", "get_landscape", "get_terminated", "search")


def temporary_macros(revision: str, path: str) -> list[str]:
    """The statements of a sql/calls/ file at a revision that make temporary macros (its `-- name:` sections)."""
    text = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout
    return [section for section in re.split(r"\n(?=-- name: )", text) if "CREATE OR REPLACE TEMP MACRO" in section]


def mcp_calls(mirror: Mirror, n: int) -> dict[str, list[tuple[str, dict]]]:
    """bench_mcp.py's arguments for the matching methods."""
    makers = tool_arguments(mirror, random.Random(41))
    return {method: [(method, makers[method]()) for _ in range(n)] for method in MATCHING}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision")
    parser.add_argument("files", nargs="+", help="sql/calls/ files whose temporary macros are taken from REVISION")
    parser.add_argument("--studies", type=int, default=500_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--methods", default=",".join(MATCHING))
    parser.add_argument("--mcp", action="store_true", help="bench_mcp.py's arguments rather than bench_methods.py's")
    parser.add_argument("--batch", action="store_true", help="each method's calls in one batch (Mirror.batch)")
    args = parser.parse_args()
    root = ROOT / "bench" / "out" / f"wh-{args.studies}"
    if not (root / "current").exists():
        sys.exit(f"{root} is not built: run python bench/bench_methods.py --studies {args.studies} first")
    this, older = Mirror(root), Mirror(root)
    for path in args.files:
        for statement in temporary_macros(args.revision, path):
            older.con.execute(statement)  # before any call prepares a statement on that connection
    every = mcp_calls(this, args.calls) if args.mcp else calls(this, args.calls)
    print(f"{args.studies:,} studies, {args.calls} calls a method, alternately on each side; p50 ms")
    print(f"{'method':<20}{'pass':>5}{'this':>9}{args.revision[:9]:>10}{'ratio':>7}{'differ':>8}")
    for method in args.methods.split(","):
        method_calls = every[method]
        if args.batch:
            batched(method, method_calls, this, older)
            continue
        for side in (this, older):  # each side's statements prepared
            getattr(side, method)(**method_calls[0][1])
        for done in range(2):
            times: dict[bool, list[float]] = {True: [], False: []}
            differ = 0
            for i, (_, kwargs) in enumerate(method_calls):
                answers = {}
                for side in ((this, older) if i % 2 == 0 else (older, this)):
                    started = time.perf_counter()
                    answers[side is this] = repr(getattr(side, method)(**kwargs))
                    times[side is this].append((time.perf_counter() - started) * 1000)
                differ += answers[True] != answers[False]
            mine, theirs = statistics.median(times[True]), statistics.median(times[False])
            print(f"{method:<20}{done + 1:>5}{mine:>9.1f}{theirs:>10.1f}{mine / theirs:>7.3f}{differ:>8}")
    this.close()
    older.close()


def batched(method: str, method_calls: list[tuple[str, dict]], this: Mirror, older: Mirror) -> None:
    """The calls as one batch on each side, alternately, five times; the median ms per call, and whether the two
    sides' answers differ."""
    times: dict[bool, list[float]] = {True: [], False: []}
    answers = {}
    for _ in range(5):
        for side in (this, older):
            started = time.perf_counter()
            answers[side is this] = repr(side.batch(method_calls))
            times[side is this].append((time.perf_counter() - started) * 1000 / len(method_calls))
    mine, theirs = statistics.median(times[True]), statistics.median(times[False])
    print(f"{method:<20}{'batch':>5}{mine:>9.2f}{theirs:>10.2f}{mine / theirs:>7.3f}"
          f"{int(answers[True] != answers[False]):>8}")


if __name__ == "__main__":
    main()
