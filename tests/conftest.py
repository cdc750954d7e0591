"""Shared fixtures: real records (the embedded sample and tests/data), and warehouses in tmp paths."""

from __future__ import annotations

import fcntl
import gc
import hashlib
import json
import os
from pathlib import Path

import pytest
import zstandard

# The two workers of `pytest -n 2` share the machine's cores: each runs DuckDB on one thread, as a server's readers
# do, rather than two threads each contending for two cores. Set before ctmirror is imported: it reads
# CTMIRROR_THREADS once.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("CTMIRROR_THREADS", "1")

from ctmirror.core.warehouse import Warehouse  # noqa: E402
from ingest.loader import load_paths, sample_path  # noqa: E402

DATA = Path(__file__).parent / "data"


def sample_records() -> list[dict]:
    with open(sample_path(), "rb") as f:
        text = zstandard.ZstdDecompressor().stream_reader(f).read().decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def nct(record: dict) -> str:
    return record["protocolSection"]["identificationModule"]["nctId"]


# The longest test files first: `--dist loadfile` hands whole files to the two workers in collection order, so the
# run then ends on short files instead of one worker finishing a long one alone.
LONGEST_FIRST = ("test_harvest.py", "test_asof.py", "test_trust.py", "test_aact.py", "test_catalog_patch.py",
                 "test_memory.py", "test_methods.py", "test_record_files.py", "test_mcp.py", "test_serve.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's own order kept


@pytest.fixture(scope="session")
def records() -> list[dict]:
    """The sample's 2,279 records, parsed once. Their millions of objects are moved out of the garbage collector's
    sight (gc.freeze): every full collection of the test process would traverse them again, and decoding a page of
    records (every v2 search the tests make) triggers many."""
    parsed = sample_records()
    gc.freeze()
    return parsed


@pytest.fixture(scope="session")
def records_by_id(records) -> dict[str, dict]:
    return {nct(r): r for r in records}


@pytest.fixture(scope="session")
def sample_warehouse(tmp_path_factory) -> Path:
    """A warehouse holding the embedded sample. Read-only for tests: build your own to write. The workers of one
    `pytest -n` run share it: the first builds it (under a lock), the others read it."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        root = tmp_path_factory.mktemp("sample") / "warehouse"
        load_paths(Warehouse(root), [sample_path()], source="sample")
        return root
    shared = tmp_path_factory.getbasetemp().parent / "shared-sample"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        root = shared / "warehouse"
        if not (root / "current").exists():
            load_paths(Warehouse(root), [sample_path()], source="sample")
    return root


def write_ndjson(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def listing(root: Path) -> dict[str, tuple]:
    """Every file under a warehouse by size and modification time (links by target): what any write changes,
    read without hashing (for tests that check many times that nothing changed)."""
    files = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                files[key] = (os.readlink(path),)
            else:
                stat = path.stat()
                files[key] = (stat.st_size, stat.st_mtime_ns)
    return files


def fingerprint(root: Path) -> dict[str, str]:
    """Every file under a warehouse, by content (links by target)."""
    files = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            key = str(path.relative_to(root))
            files[key] = os.readlink(path) if path.is_symlink() else hashlib.sha256(path.read_bytes()).hexdigest()
    return files


@pytest.fixture(scope="session")
def sample_mirror(sample_warehouse):
    """One read-only Mirror of the sample for the test files that only read through it: what it prepares for one
    file's calls (a search's plan of each shape) serves the next file's. Its v2 search arguments table is made first,
    as a server's pool makes it, before anything is prepared."""
    from ctmirror import Mirror
    from ctmirror.server import v2

    with Mirror(sample_warehouse) as mirror:
        v2.make_search_tables(mirror)
        yield mirror
