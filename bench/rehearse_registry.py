"""The full registry, rehearsed offline: a bulk json.zip of --studies studies made from the shipped real records
under new IDs (one NCTxxxxxxxx.json per study, as the registry's file is), then what the nightly sync job does
with it, each step a ctmirror command in a process of its own under the default memory budget (or --memory-limit's):

1. bootstrap: `ctmirror sync --from-bulk ctg-studies.json.zip` into a new warehouse;
2. --nights nights, each `ctmirror sync` against the fake v2 API on loopback serving --changes studies (drawn
   anew each night) updated since the last sync (new status, enrollment and last update date), the incremental
   harvest a nightly run makes; the warehouse's size after the last night is its steady state (default kept
   states, no reader holding an older one);
3. `ctmirror rebuild` of every table from raw/ (unless --no-rebuild).

Printed per step: wall time, CPU time, peak memory (the process's own high-water mark), the warehouse's size on
disk without raw/ and raw/'s own (files hard-linked between generations counted once), and CPU per study.

    python bench/rehearse_registry.py [--studies 600000] [--changes 2000] [--nights 1] [--no-rebuild]
                                      [--out bench/out/rehearsal-600000] [--memory-limit 2GB]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
import zipfile
from datetime import date
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_api import FakeApiServer, FakeRegistry, encode_record  # noqa: E402

from bench.corpus import replicated_lines  # noqa: E402

NIGHT = "2026-11-26"  # after every date the sample's records hold: the first night's changed studies' last update


def write_bulk_zip(path: Path, studies: int) -> None:
    """The replicated corpus as the registry's bulk file: a zip of one compact JSON file per study."""
    partial = path.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for line in replicated_lines(studies):
            record = msgspec.json.decode(line)
            nct_id = record["protocolSection"]["identificationModule"]["nctId"]
            archive.writestr(f"{nct_id}.json", encode_record(record))
    partial.rename(path)


def changed_records(studies: int, changes: int, seed: int = 27, night: str = NIGHT) -> list[dict]:
    """`changes` studies of the corpus, drawn at random, as the registry would show them on `night`."""
    picked = set(random.Random(seed).sample(range(studies), changes))
    records = []
    for n, line in enumerate(replicated_lines(studies)):
        if n in picked:
            record = msgspec.json.decode(line)
            status = record["protocolSection"].setdefault("statusModule", {})
            status["lastUpdatePostDateStruct"] = {"date": night, "type": "ACTUAL"}
            status["overallStatus"] = "COMPLETED" if status.get("overallStatus") != "COMPLETED" else "TERMINATED"
            design = record["protocolSection"].setdefault("designModule", {})
            enrollment = design.setdefault("enrollmentInfo", {})
            enrollment["count"] = int(enrollment.get("count") or 0) + 1 + (seed - 27)
            records.append(record)
    return records


def on_disk(root: Path) -> tuple[int, int]:
    """(bytes without raw/, bytes of raw/), each file once however many links it has."""
    seen: set[tuple[int, int]] = set()
    sizes = [0, 0]
    for folder, _dirs, names in os.walk(root):
        in_raw = Path(folder).relative_to(root).parts[:1] == ("raw",)
        for name in names:
            path = Path(folder) / name
            if path.is_symlink():
                continue
            stat = path.stat()
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                sizes[in_raw] += stat.st_size
    return sizes[0], sizes[1]


def run_step(name: str, arguments: list[str], warehouse: Path, studies: int, memory_limit: str | None) -> str:
    """One ctmirror command in a child process: its wall time, CPU and peak memory (os.wait4's rusage of that
    child alone), then the warehouse's size. memory_limit: the writer's budget (None: the default)."""
    command = [sys.executable, "-m", "ctmirror.cli", "-q", "-w", str(warehouse), *arguments]
    env = {k: v for k, v in os.environ.items() if k != "CTMIRROR_MEMORY_LIMIT"}
    if memory_limit:
        env["CTMIRROR_MEMORY_LIMIT"] = memory_limit
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    out, err = child.stdout.read().decode(), child.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{name} failed: {err or out}")
    cpu = usage.ru_utime + usage.ru_stime
    tables, raw = on_disk(warehouse)
    line = (f"{name:<10}{wall:>9.1f}{cpu:>9.1f}{usage.ru_maxrss / 2**20:>10.2f}{tables / 1e9:>10.2f}"
            f"{raw / 1e9:>9.2f}{tables / raw:>8.2f}{1000 * cpu / studies:>12.3f}")
    print(line, flush=True)
    print(f"{'':<10}{out.strip().splitlines()[-1][:150] if out.strip() else ''}", flush=True)
    return line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=600_000)
    parser.add_argument("--changes", type=int, default=2_000)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--nights", type=int, default=1)
    parser.add_argument("--no-rebuild", action="store_true")
    parser.add_argument("--memory-limit", default=None, help="every step's budget, as ctmirror --memory-limit takes it")
    args = parser.parse_args()
    out = args.out or ROOT / "bench" / "out" / f"rehearsal-{args.studies}"
    out.mkdir(parents=True, exist_ok=True)
    bulk = out / "ctg-studies.json.zip"
    if not bulk.exists():
        started = time.perf_counter()
        write_bulk_zip(bulk, args.studies)
        print(f"made {bulk} ({bulk.stat().st_size / 1e9:.2f} GB, {args.studies:,} studies) in "
              f"{time.perf_counter() - started:,.0f} s", flush=True)
    warehouse = out / "warehouse"
    subprocess.run(["rm", "-rf", str(warehouse)], check=True)
    print(f"\nmemory budget: {args.memory_limit or 'the default'}")
    print(f"{'step':<10}{'wall s':>9}{'CPU s':>9}{'peak GB':>10}{'tables GB':>10}{'raw GB':>9}{'ratio':>8}"
          f"{'CPU ms/study':>12}")
    run_step("bootstrap", ["sync", "--from-bulk", str(bulk)], warehouse, args.studies, args.memory_limit)
    for night in range(args.nights):
        # the first night's changes are dated NIGHT; later nights' today, inside the range a sync asks for
        registry = FakeRegistry(records={})
        for record in changed_records(args.studies, args.changes, seed=27 + night,
                                      night=NIGHT if night == 0 else date.today().isoformat()):
            registry.put(record)
        with FakeApiServer(registry) as server:
            run_step("night" if args.nights == 1 else f"night {night + 1}",
                     ["sync", "--base-url", server.base_url, "--interval", "0"], warehouse, args.changes,
                     args.memory_limit)
    if not args.no_rebuild:
        run_step("rebuild", ["rebuild"], warehouse, args.studies, args.memory_limit)


if __name__ == "__main__":
    main()
