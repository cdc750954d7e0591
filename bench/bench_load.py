"""Load benchmark: the embedded sample replicated to N records (default 50,000), loaded into a fresh
warehouse with `ctmirror load`. Prints studies/s and peak memory.

    python bench/bench_load.py [--records 50000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import print_load_figures, write_corpus  # noqa: E402
from ctmirror.core.warehouse import Warehouse  # noqa: E402
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
    print_load_figures(f"{result.counts.records:,} records ({size_mb:,.0f} MB of JSON)", result, elapsed)


if __name__ == "__main__":
    main()
