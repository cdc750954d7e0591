"""`ctmirror load` and `ctmirror rebuild`: files → raw/ → segments → a published state."""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from ctmirror.core.errors import InputError
from ctmirror.core.warehouse import State, Warehouse
from ingest.normalize import LoadCounts, pending_receipts
from ingest.publish import publish
from ingest.writer import WriterRun, writer_run


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
               on_record: Callable[[int], None] | None = None,
               on_phase: Callable[[str], None] | None = None) -> LoadResult:
    files = expand_inputs(paths)  # every path checked before anything is received
    with writer_run(warehouse, command="load", source=source, on_record=on_record, on_phase=on_phase) as run:
        pending = {(receipt.sha256, receipt.source): receipt for receipt, _ in pending_receipts(warehouse, run.raw)}
        for file in files:
            run.raw.receive_file(file, source=source, pending=pending)
        return _publish_load(run, run.normalizer.run(), origin=", ".join(str(f) for f in files))


def load_aact(warehouse: Warehouse, path: Path, *, dump_date: str | None = None,
              on_record: Callable[[int], None] | None = None,
              on_phase: Callable[[str], None] | None = None) -> LoadResult:
    """An AACT dump (zip or folder): checked whole first, so a dump that cannot be loaded leaves nothing behind;
    then kept in raw/ (a folder as a zip of its files) and loaded as versions with source `aact`."""
    from ingest.aact import dump_connection, dump_date_from_name, open_dump
    from ingest.normalize import study_structure_of

    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    dump_date = dump_date or dump_date_from_name(path)
    if dump_date is None:
        raise InputError(f"{path}: cannot tell the dump's date from its name; pass --dump-date YYYY-MM-DD")
    with writer_run(warehouse, command="load-aact", source="aact", on_record=on_record, on_phase=on_phase) as run:
        with dump_connection() as con, open_dump(path, study_structure_of(con)) as dump:
            dump.check()
            dump.read(con)  # raises before anything is kept if a refused row names no study
            with dump.reassembled() as candidates:  # the first chunk is put together while the dump is stored
                with _as_zip(path) as received:
                    receipt = run.raw.receive_file(received, source="aact", origin=str(path.resolve()),
                                                   context={"dump_date": dump_date})
                with run.normalizer.session() as feed:
                    feed.add(receipt, candidates)
        # The dump's tables are let go before publishing, which needs as much memory again.
        return _publish_load(run, feed.counts, origin=str(path), data_timestamp=dump_date)


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


def rebuild(warehouse: Warehouse, *, on_record: Callable[[int], None] | None = None,
            on_phase: Callable[[str], None] | None = None) -> LoadResult:
    """Regenerates every segment and table from raw/ alone, into a new generation of segments."""
    with writer_run(warehouse, command="rebuild", source="raw", on_record=on_record, on_phase=on_phase) as run:
        warehouse.start_generation()
        result = _publish_load(run, run.normalizer.run(), origin="raw/", publish_always=True)
        warehouse.adopt_generation()
        return result


def republish(warehouse: Warehouse, *, on_phase: Callable[[str], None] | None = None) -> State:
    """The current state's data published again as a new state, by this version of ctmirror: what a state
    published by another version needs before a Mirror reads it. Nothing is normalised again and no run is
    recorded; the new state carries the run of the one it replaces."""
    with warehouse.writing():
        current = warehouse.latest_state()  # restores a missing `current` link too
        return publish(warehouse, run=dict(current.meta.get("run") or {}), on_phase=on_phase, whole=True)


class NothingLoaded(InputError):
    """A load whose input held no study record, or only records that were quarantined: no study was added."""

    def __init__(self, message: str, *, hint: str, counts: LoadCounts) -> None:
        super().__init__(message, hint=hint)
        self.counts = counts


def _publish_load(run: WriterRun, counts: LoadCounts, *, origin: str, publish_always: bool = False,
                  **details: object) -> LoadResult:
    """Publishes what a load added: versions, or records quarantined for the first time. A load that added
    neither publishes nothing (the current state answers the same) and is only recorded. A load whose input held
    no record, or only bad ones, is an error (NothingLoaded) once that is done."""
    record = run.completed(origin=origin, counts=asdict(counts), **details)
    state, published = run.publish_if_new(record, always=publish_always)
    result = LoadResult(run=record, counts=counts, state=state, published=published)
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


def summary_line(result: LoadResult) -> str:
    c = result.counts
    outcome = (f"published state {result.state.state_id}" if result.published else
               f"nothing new, so nothing published: state {result.state.state_id} stays current")
    return (f"{c.records} records: {c.studies_added} new studies, {c.studies_changed} changed, "
            f"{c.unchanged} unchanged, {c.quarantined} quarantined; {outcome} "
            f"({result.state.meta['counts']['studies']} studies).")



