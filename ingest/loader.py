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
                                        started=started, on_record=on_record)
        warehouse.adopt_generation()
        return result


def republish(warehouse: Warehouse) -> State:
    """The current state's data published again as a new state, by this version of ctmirror: what a state
    published by another version needs before a Mirror reads it. Nothing is normalised again and no run is
    recorded; the new state carries the run of the one it replaces."""
    with warehouse.writing():
        current = warehouse.state()
        return publish(warehouse, run=dict(current.meta.get("run") or {}))


def _normalise_and_publish(warehouse: Warehouse, *, command: str, source: str, origin: str, started: str,
                           on_record: Callable[[int], None] | None, extra: dict | None = None) -> LoadResult:
    normalizer = Normalizer(warehouse, on_record=on_record)
    try:
        counts = normalizer.run()
        return _record_and_publish(normalizer, counts, command=command, source=source, origin=origin,
                                   started=started, extra=extra)
    finally:
        normalizer.close()


def _record_and_publish(normalizer: Normalizer, counts: LoadCounts, *, command: str, source: str, origin: str,
                        started: str, extra: dict | None) -> LoadResult:
    warehouse = normalizer.warehouse
    run = completed_run(run_id=uuid.uuid4().hex[:12], command=command, source=source, origin=origin,
                        started=started, finished=utc_now(), counts=asdict(counts), **(extra or {}))
    record_run(warehouse, run)
    state = publish(warehouse, run=run, con=normalizer.con)
    return LoadResult(run=run, counts=counts, state=state)


def summary_line(result: LoadResult) -> str:
    c = result.counts
    return (f"{c.records} records: {c.studies_added} new studies, {c.studies_changed} changed, "
            f"{c.unchanged} unchanged, {c.quarantined} quarantined; published state {result.state.state_id} "
            f"({result.state.meta['counts']['studies']} studies).")



