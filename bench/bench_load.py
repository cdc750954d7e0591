"""Load benchmark: the embedded sample replicated to N records (default 50,000), loaded into a fresh
warehouse with `ctmirror load`. Prints studies/s and peak memory.

    python bench/bench_load.py [--records 50000]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import write_corpus  # noqa: E402
from ctmirror.warehouse import Warehouse  # noqa: E402
from ingest.loader import load_paths  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(Path(tmp) / "corpus.ndjson", args.records)
        size_mb = corpus.stat().st_size / 1e6
        started = time.perf_counter()
        result = load_paths(Warehouse(Path(tmp) / "warehouse"), [corpus])
        elapsed = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"records            {result.counts.records:,} ({size_mb:,.0f} MB of JSON)")
    print(f"studies published  {result.state.meta['counts']['studies']:,}")
    print(f"wall time          {elapsed:,.1f} s")
    print(f"load rate          {result.counts.records / elapsed:,.0f} studies/s")
    print(f"peak memory        {peak_mb:,.0f} MB (RSS)")


if __name__ == "__main__":
    main()
