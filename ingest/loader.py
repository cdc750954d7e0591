"""`ctmirror load` and `ctmirror rebuild`: files → raw/ → segments → a published state."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ctmirror.errors import InputError
from ctmirror.publish import publish, record_run
from ctmirror.warehouse import State, Warehouse
from ingest.normalize import LoadCounts, Normalizer
from ingest.raw_store import RawStore, utc_now


@dataclass
class LoadResult:
    run: dict
    counts: LoadCounts
    state: State


def sample_path() -> Path:
    """The embedded sample: real v2 study records shipped inside the package."""
    return Path(str(resources.files("ctmirror") / "sample" / "studies.ndjson.zst"))


def expand_inputs(paths: Iterable[Path]) -> list[Path]:
    """Files to receive, in a stable order: a folder gives every file below it (hidden ones skipped)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file()
                            and not any(part.startswith(".") for part in p.relative_to(path).parts))
            if not inside:
                raise InputError(f"{path}: the folder holds no files to load")
            files.extend(inside)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise InputError(f"{path}: not a regular file or folder")
        else:
            raise InputError(f"{path}: no such file or folder")
    return files


def load_paths(warehouse: Warehouse, paths: Iterable[Path], *, source: str = "file",
               on_record: Callable[[int], None] | None = None) -> LoadResult:
    files = expand_inputs(paths)  # every path checked before anything is received
    with warehouse.writing():
        started = utc_now()
        raw = RawStore(warehouse.root)
        for file in files:
            raw.receive_file(file, source=source)
        return _normalise_and_publish(warehouse, command="load", source=source,
                                      origin=", ".join(str(f) for f in files), started=started,
                                      on_record=on_record)


def rebuild(warehouse: Warehouse, *, on_record: Callable[[int], None] | None = None) -> LoadResult:
    """Regenerates every segment and table from raw/ alone, into a new generation of segments."""
    with warehouse.writing():
        started = utc_now()
        warehouse.start_generation()
        result = _normalise_and_publish(warehouse, command="rebuild", source="raw", origin="raw/",
                                        started=started, on_record=on_record)
        warehouse.adopt_generation()
        return result


def _normalise_and_publish(warehouse: Warehouse, *, command: str, source: str, origin: str, started: str,
                           on_record: Callable[[int], None] | None, extra: dict | None = None) -> LoadResult:
    normalizer = Normalizer(warehouse, on_record=on_record)
    try:
        counts = normalizer.run()
    finally:
        normalizer.close()
    run = {
        "run_id": uuid.uuid4().hex[:12], "command": command, "source": source, "origin": origin,
        "status": "completed", "started_at": started.rstrip("Z"), "finished_at": utc_now().rstrip("Z"),
        "data_timestamp": None, "records": counts.records, "versions_added": counts.versions_added,
        "studies_added": counts.studies_added, "studies_changed": counts.studies_changed,
        "unchanged": counts.unchanged, "quarantined": counts.quarantined, "removed": 0, "pages": None,
        "retries": None, "note": None, **(extra or {}),
    }
    record_run(warehouse, run)
    state = publish(warehouse, run=run)
    return LoadResult(run=run, counts=counts, state=state)


def summary_line(result: LoadResult) -> str:
    c = result.counts
    return (f"{c.records} records: {c.studies_added} new studies, {c.studies_changed} changed, "
            f"{c.unchanged} unchanged, {c.quarantined} quarantined; published state {result.state.state_id} "
            f"({result.state.meta['counts']['studies']} studies).")



