"""Method latency benchmark: p50/p99 of each contract method over >= 200 varied real calls, on the embedded
sample and on a warehouse scaled to N studies (the sample replicated under new NCT IDs; built once into
bench/out/, then reused).

    python bench/bench_methods.py [--studies 500000] [--calls 200]

Calls are drawn (seeded) from real values of the sample: its conditions, drug names, stop-reason queries and
NCT IDs, so each scaled call matches about as many copies of real trials as the value has in the sample (a
sample condition found in 1,000 of its 2,279 studies matches 220,000 studies at 500,000: far more than any real
condition, which makes the tail pessimistic). Dated calls use holdout="first_posted" (the macro path on the
current state); strict answers come from snapshots, measured by bench/bench_backtest.py. The last column is the
same calls run together through Mirror.batch (one set-wise query per method), per call.

Before timing, the catalog file is read once, so the figures are those of a mirror whose catalog sits in the OS
page cache, as it does after a few minutes of use. --cold skips that: the first calls then also wait for the
disk (search_trials, measured first, reads up to 200 cards a call from blocks all over the file).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import reuse_or_build, write_corpus  # noqa: E402
from ctmirror import Mirror  # noqa: E402
from ctmirror.core.warehouse import Warehouse  # noqa: E402
from ingest.loader import load_paths, sample_path  # noqa: E402


def build(root: Path, studies: int) -> Path:
    def make(target: Path) -> None:
        with tempfile.TemporaryDirectory(dir=ROOT / "bench" / "out") as tmp:
            started = time.perf_counter()
            corpus = write_corpus(Path(tmp) / "corpus.ndjson", studies)
            load_paths(Warehouse(target), [corpus])
            print(f"built {target} ({studies:,} studies) in {time.perf_counter() - started:,.0f} s")

    return reuse_or_build(root, make)


FP = "first_posted"


def calls(m: Mirror, n: int, seed: int = 7) -> dict[str, list]:
    rng = random.Random(seed)
    conditions = [r["condition"] for r in m.rows(
        "SELECT DISTINCT condition FROM conditions WHERE nct_id < 'NCT9' AND length(condition) < 60 ORDER BY 1")]
    drugs = [r["name"] for r in m.rows(
        "SELECT DISTINCT name FROM interventions WHERE nct_id < 'NCT9' AND intervention_type IN ('Drug', 'Biological') "
        "AND NOT is_placebo(name) AND length(name) < 40 ORDER BY 1")]
    pairs = [(r["name"], r["condition"]) for r in m.rows(
        "SELECT DISTINCT i.name, c.condition FROM interventions i JOIN conditions c USING (nct_id) "
        "WHERE i.nct_id < 'NCT9' AND i.intervention_type = 'Drug' AND NOT is_placebo(i.name) ORDER BY 1, 2")]
    ids = [r["nct_id"] for r in m.rows("SELECT nct_id FROM studies ORDER BY nct_id")]
    dates = [None, "2015-01-01", "2019-06-01", "2022-01-01"]

    def pick(values):
        return values[rng.randrange(len(values))]

    return {
        "search_trials": [("search_trials", {"drug": p[0], "condition": p[1], "date_before": pick(dates),
                                             "holdout": FP})
                          for p in (pick(pairs) for _ in range(n))],
        "detect_whitespace": [("detect_whitespace", {"drug": pick(drugs), "condition": pick(conditions),
                                                     "date_before": pick(dates), "holdout": FP}) for _ in range(n)],
        "get_landscape": [("get_landscape", {"condition": pick(conditions), "date_before": pick(dates), "holdout": FP})
                          for _ in range(n)],
        "get_terminated": [("get_terminated", {"query": pick(drugs + conditions), "date_before": pick(dates),
                                               "holdout": FP}) for _ in range(n)],
        "get_trial": [("get_trial", {"nct_id": pick(ids)}) for _ in range(n)],
        "get_trial_details": [("get_trial_details", {"nct_id": pick(ids)}) for _ in range(n)],
        "search": [("search", {"condition": pick(conditions), "status": pick([None, "RECRUITING", "COMPLETED"])})
                   for _ in range(n)],
    }


def read_into_page_cache(path: Path) -> None:
    started = time.perf_counter()
    with path.open("rb", buffering=0) as f:
        while f.read(1 << 24):
            pass
    print(f"read {path.name} ({path.stat().st_size / 1e9:.1f} GB) once into the OS page cache in "
          f"{time.perf_counter() - started:.1f} s")


def measure(root: Path, label: str, n: int, cold: bool = False) -> None:
    with Mirror(root) as m:
        if not cold:
            read_into_page_cache(m.state.catalog)
        studies = m.sql("SELECT count(*) AS n FROM studies")["n"][0]
        print(f"\n{label}: {studies:,} studies, {n} calls per method; one at a time, then the same calls in one batch")
        print(f"{'method':<20}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'batch ms/call':>15}")
        for method, method_calls in calls(m, n).items():
            getattr(m, method)(**method_calls[0][1])  # warm
            times = []
            for name, kwargs in method_calls:
                started = time.perf_counter()
                getattr(m, name)(**kwargs)
                times.append((time.perf_counter() - started) * 1000)
            times.sort()
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            started = time.perf_counter()
            m.batch(method_calls)
            batched = (time.perf_counter() - started) * 1000 / len(method_calls)
            print(f"{method:<20}{statistics.median(times):>9.1f}{p99:>9.1f}{times[-1]:>9.1f}{batched:>15.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--cold", action="store_true", help="do not read the catalog into the page cache first")
    parser.add_argument("--no-scatter", action="store_true",
                        help="diagnostic: plan no scattered words for any query (phrases and concepts only), to see "
                             "what Essie's scattered words cost a call")
    args = parser.parse_args()
    if args.no_scatter:
        import ctmirror.read.answers as answers
        answers.may_scatter = lambda query: False
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    sample = reuse_or_build(out / "wh-sample", lambda root: load_paths(Warehouse(root), [sample_path()]))
    measure(sample, "embedded sample", args.calls, args.cold)
    measure(build(out / f"wh-{args.studies}", args.studies), "scaled", args.calls, args.cold)


if __name__ == "__main__":
    main()
