"""Harvest benchmark: a full `sync` of N records (default 50,000: the sample replicated under new NCT IDs)
from the fake v2 API running in another process, request interval 0, pages of 1,000. Prints studies/s end to
end (harvest, normalise, publish), CPU seconds per page, and peak memory.

    python bench/bench_harvest.py [--records 50000]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctmirror.core.warehouse import Warehouse  # noqa: E402
from ingest.harvest import SyncOptions, sync  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=50_000)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, str(ROOT / "bench" / "serve_fake.py"), "--records", str(args.records)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            cpu_before = time.process_time()
            started = time.perf_counter()
            result = sync(Warehouse(Path(tmp) / "w"), SyncOptions(base_url=base_url, min_interval=0))
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu_before
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    pages = result.run["pages"]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"studies harvested  {result.run['studies_added']:,} in {pages} pages")
    print(f"wall time          {elapsed:,.1f} s")
    print(f"end-to-end rate    {result.run['studies_added'] / elapsed:,.0f} studies/s")
    print(f"harvester CPU      {cpu:,.1f} s = {cpu / pages:,.2f} s per page of 1,000 (the API allows one per 1.2 s)")
    before = cpu - result.publish_cpu_seconds
    print(f"  before publish   {before:,.1f} s = {before / pages:,.2f} s per page (receiving, validating, normalising)")
    print(f"  publishing       {result.publish_cpu_seconds:,.1f} s of CPU in {result.publish_seconds:,.1f} s, "
          "once per run")
    print(f"peak memory        {peak_mb:,.0f} MB (RSS)")


if __name__ == "__main__":
    main()
