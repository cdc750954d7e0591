"""Serves the fake v2 API (tests/fake_api.py) with the sample replicated to N records, in its own process.
Prints its base URL on the first line, then serves until stdin closes.

    python bench/serve_fake.py --records 50000
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from bench.corpus import compact_sample_lines, replicated_lines  # noqa: E402
from fake_api import FakeApiServer, FakeRegistry  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=50_000)
    args = parser.parse_args()
    registry = FakeRegistry(records={})
    gc.disable()  # 50,000 records held as dicts: collections while they load would walk them again and again
    for line in replicated_lines(args.records, compact_sample_lines()):
        record = msgspec.json.decode(line)  # a third of json.loads' time: the server starts in seconds
        registry.put(record)
        registry._encoded[record["protocolSection"]["identificationModule"]["nctId"]] = line  # as encoded() would
    gc.freeze()
    gc.enable()
    with FakeApiServer(registry) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
