"""`ctmirror load` and `ctmirror rebuild`: files → raw/ → segments → a published state."""

from __future__ import annotations

import shutil
import tempfile
import uuid
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from ctmirror.errors import InputError
from ctmirror.publish import completed_run, publish, record_run
from ctmirror.warehouse import State, Warehouse
from ingest.normalize import LoadCounts, Normalizer, pending_receipts
from ingest.raw_store import RawStore, utc_now


@dataclass
class LoadResult:
    run: dict
    counts: LoadCounts
    state: State
    published: bool = True  # False: nothing new, `state` is the current state as it was


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
        pending = {(receipt.sha256, receipt.source): receipt for receipt, _ in pending_receipts(warehouse, raw)}
        for file in files:
            raw.receive_file(file, source=source, pending=pending)
        return _normalise_and_publish(warehouse, command="load", source=source,
                                      origin=", ".join(str(f) for f in files), started=started,
                                      on_record=on_record)


def load_aact(warehouse: Warehouse, path: Path, *, dump_date: str | None = None,
              on_record: Callable[[int], None] | None = None) -> LoadResult:
    """An AACT dump (zip or folder): checked whole first, so a dump that cannot be loaded leaves nothing behind;
    then kept in raw/ (a folder as a zip of its files) and loaded as versions with source `aact`."""
    from ingest.aact import dump_connection, dump_date_from_name, open_dump
    from ingest.normalize import study_structure_of

    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    dump_date = dump_date or dump_date_from_name(path)
    if dump_date is None:
        raise InputError(f"{path}: cannot tell the dump's date from its name; pass --dump-date YYYY-MM-DD")
    with warehouse.writing():
        normalizer: Normalizer | None = None
        try:
            with dump_connection() as con, open_dump(path, study_structure_of(con)) as dump:
                dump.check()
                dump.read(con)  # raises before anything is kept if a refused row names no study
                started = utc_now()
                with dump.reassembled() as candidates:  # the first chunk is put together while the dump is stored
                    raw = RawStore(warehouse.root)
                    with _as_zip(path) as received:
                        receipt = raw.receive_file(received, source="aact", origin=str(path.resolve()),
                                                   context={"dump_date": dump_date})
                    normalizer = Normalizer(warehouse, on_record=on_record)
                    with normalizer.session() as feed:
                        feed.add(receipt, candidates)
            # The dump's tables are let go before publishing, which needs as much memory again (100,224 studies:
            # publishing peaked at 4.3 GB of RSS with them held, 2.3 GB without).
            return _record_and_publish(normalizer, feed.counts, command="load-aact", source="aact",
                                       origin=str(path), started=started, extra={"data_timestamp": dump_date})
        finally:
            if normalizer is not None:
                normalizer.close()


@contextmanager
def _as_zip(path: Path) -> Iterator[Path]:
    """A zip as it is; a folder as a zip of its files (stored in name order, with fixed times, so the same
    files give the same bytes and one blob in raw/)."""
    if not path.is_dir():
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="ctmirror-aact-") as scratch:
        target = Path(scratch) / f"{path.name}.zip"
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                info = zipfile.ZipInfo(str(file.relative_to(path)), date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(file, "rb") as src, archive.open(info, "w") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
        yield target


def rebuild(warehouse: Warehouse, *, on_record: Callable[[int], None] | None = None) -> LoadResult:
    """Regenerates every segment and table from raw/ alone, into a new generation of segments."""
    with warehouse.writing():
        started = utc_now()
        warehouse.start_generation()
        result = _normalise_and_publish(warehouse, command="rebuild", source="raw", origin="raw/",
                                        started=started, on_record=on_record, publish_always=True)
        warehouse.adopt_generation()
        return result


def republish(warehouse: Warehouse) -> State:
    """The current state's data published again as a new state, by this version of ctmirror: what a state
    published by another version needs before a Mirror reads it. Nothing is normalised again and no run is
    recorded; the new state carries the run of the one it replaces."""
    with warehouse.writing():
        current = warehouse.latest_state()  # restores a missing `current` link too
        return publish(warehouse, run=dict(current.meta.get("run") or {}))


def _normalise_and_publish(warehouse: Warehouse, *, command: str, source: str, origin: str, started: str,
                           on_record: Callable[[int], None] | None, extra: dict | None = None,
                           publish_always: bool = False) -> LoadResult:
    normalizer = Normalizer(warehouse, on_record=on_record)
    try:
        counts = normalizer.run()
        return _record_and_publish(normalizer, counts, command=command, source=source, origin=origin,
                                   started=started, extra=extra, publish_always=publish_always)
    finally:
        normalizer.close()


class NothingLoaded(InputError):
    """A load whose input held no study record, or only records that were quarantined: no study was added."""

    def __init__(self, message: str, *, hint: str, counts: LoadCounts) -> None:
        super().__init__(message, hint=hint)
        self.counts = counts


def _record_and_publish(normalizer: Normalizer, counts: LoadCounts, *, command: str, source: str, origin: str,
                        started: str, extra: dict | None, publish_always: bool = False) -> LoadResult:
    """Publishes what a load added: versions, or records quarantined for the first time. A load that added
    neither publishes nothing (the current state answers the same) and is only recorded. A load whose input held
    no record, or only bad ones, is an error (NothingLoaded) once that is done."""
    warehouse = normalizer.warehouse
    run = completed_run(run_id=uuid.uuid4().hex[:12], command=command, source=source, origin=origin,
                        started=started, finished=utc_now(), counts=asdict(counts), **(extra or {}))
    if counts.versions_added or counts.quarantine_rows_added or publish_always or _unpublished(warehouse):
        result = LoadResult(run=run, counts=counts, state=publish(warehouse, run=run, con=normalizer.con))
    else:
        record_run(warehouse, run)
        result = LoadResult(run=run, counts=counts, state=warehouse.latest_state(), published=False)
    if counts.records == 0:
        raise NothingLoaded(f"no study record found in {origin}; nothing was added",
                            hint="check the file: ctmirror reads v2 study JSON (NDJSON, API pages, single "
                                 "studies, or .zip/.gz/.zst of them)", counts=counts)
    if counts.quarantined == counts.records:
        first = counts.problems[0] if counts.problems else "see SELECT * FROM quarantine"
        raise NothingLoaded(f"all {counts.records:,} records of {origin} were quarantined (first: {first}); "
                            "no study was added", hint="fix the records and load the file again; what was "
                            "rejected is kept in raw/ and listed in the quarantine table", counts=counts)
    return result


def _unpublished(warehouse: Warehouse) -> bool:
    """Whether a segment holds versions or quarantined records that no published state shows (a writer killed
    between normalising and publishing): the next load publishes them even if it adds nothing itself."""
    current = warehouse.current_state()
    shown = set(current.meta.get("segments", [])) if current is not None else set()
    if current is not None and current.meta.get("generation", warehouse.generation) != warehouse.generation:
        shown = set()
    for segment in warehouse.segments():
        counts = segment.meta.get("counts", {})
        added = counts.get("versions_added") or counts.get("quarantine_rows_added", counts.get("quarantined"))
        if segment.segment_id not in shown and added:
            return True
    return False


def summary_line(result: LoadResult) -> str:
    c = result.counts
    outcome = (f"published state {result.state.state_id}" if result.published else
               f"nothing new, so nothing published: state {result.state.state_id} stays current")
    return (f"{c.records} records: {c.studies_added} new studies, {c.studies_changed} changed, "
            f"{c.unchanged} unchanged, {c.quarantined} quarantined; {outcome} "
            f"({result.state.meta['counts']['studies']} studies).")



