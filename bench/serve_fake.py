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

from fake_api import FakeApiServer, FakeRegistry, encode_record  # noqa: E402

from bench.corpus import replicated_lines, sample_lines  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=50_000)
    args = parser.parse_args()
    registry = FakeRegistry(records={})
    gc.disable()  # 50,000 records held as dicts: collections while they load would walk them again and again
    # The sample's lines have spaces after separators (5% more bytes than the API sends): encoded as the API
    # would once, then replicated; a replicated line is then exactly its record's encoding.
    compact = [encode_record(msgspec.json.decode(line)) for line in sample_lines()]
    for line in replicated_lines(args.records, compact):
        registry.put(msgspec.json.decode(line), encoded=line)  # msgspec: a third of json.loads' time
    gc.freeze()
    gc.enable()
    with FakeApiServer(registry) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
