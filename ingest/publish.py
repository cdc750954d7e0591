"""Publishing: from all segments, the current version of each study, written as a new state."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import duckdb
import polars
import pyarrow
import pyarrow.parquet

from ctmirror.core.duck import all_cores, new_connection, quiet, side_by_side, write_parquet, writer_lanes
from ctmirror.core.errors import WarehouseError
from ctmirror.core.raw_store import RawStore, fsync_dir, utc_now
from ctmirror.core.record_files import (
    DICTIONARY,
    DICTIONARY_SAMPLES,
    REBUILD_HINT,
    RawMember,
    has_record_file,
    lost_record_file,
    record_files_of,
    train_dictionary,
    write_record_file,
)
from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.warehouse import (
    CURRENT_ROWS_FILE,
    DEFAULT_KEEP_STATES,
    Segment,
    State,
    Warehouse,
    append_lines,
    atomic_write_bytes,
)
from ingest.catalog import NEW_VERSION_INPUTS, VERSIONED_INDEX_INPUTS, CatalogPatch, build_catalog, index_fingerprint
from ingest.crash import crash_point
from ingest.normalize import SEARCH_TERM_AREAS, WORD_BOUNDARIES, normalised_tables, slowest_first, table_key
from ingest.thesaurus import thesaurus_files

# Tables every state carries whole, as all versions or all rows, read where the segments keep them.
HISTORY_TABLES = ("study_versions", "quarantine", "sightings")
# Tables the catalog's index is built from, and nothing else reads: a state does not copy them (a large part of
# publishing); their views read the current versions' rows straight from the segments.
INDEX_INPUT_TABLES = ("search_terms", "places", "study_details", "condition_links")
# Columns of `studies` that older segments lack (the as-of rules read them): such a segment is renormalised.
STUDIES_COLUMNS_SINCE = ("status_verified_date", "last_update_submit_date")
SLOWEST_TO_PUBLISH = ("locations", "studies", "outcomes", "browse_leaves", "mesh_terms")


def check_segments(segments: list) -> None:
    """Every segment must hold every table this version normalises: one written by an older ctmirror, before a
    table existed, has to be renormalised from raw/ (nothing is lost: raw/ is the source of truth)."""
    for segment in segments:
        missing = [t for t in (*normalised_tables(), "quarantine", "sightings") if not segment.table_file(t).exists()]
        if not missing:
            columns = set(pyarrow.parquet.read_schema(segment.table_file("studies")).names)
            missing = [f"studies.{c}" for c in STUDIES_COLUMNS_SINCE if c not in columns]
        if segment.meta.get("word_boundaries", 1) < WORD_BOUNDARIES:
            missing.append("search texts split at every Unicode word boundary, possessives joined to their words")
        areas = segment.meta.get("search_term_areas", 1)
        if areas < 2:
            missing.append("search texts of the lead sponsor, collaborators, outcome measures and intervention "
                           "descriptions, and of the sites' facilities and ZIP codes")
        if areas < SEARCH_TERM_AREAS:
            missing.append("search texts of the enumerations (intervention and arm group types, phases, age groups, "
                           "study type, the design's)")
        if missing:
            raise WarehouseError(
                f"segment {segment.segment_id} was written by an older ctmirror: it has no {', '.join(missing)}",
                hint="run `ctmirror rebuild` once: it renormalises every record from raw/ (no network)")


def publish(warehouse: Warehouse, *, run: dict, keep: int = DEFAULT_KEEP_STATES,
            con: duckdb.DuckDBPyConnection | None = None, on_phase: Callable[[str], None] | None = None,
            whole: bool = False) -> State:
    """A new state from every segment. `con`: the connection the writer normalised on, if it has one (see
    `Normalizer.con`); publishing on it, rather than on a new DuckDB, reuses memory that DuckDB has faulted in
    already, where a new one would fault in every block it uses afresh. on_phase: told of each step as it
    starts ('publishing: ...'). whole: build the catalog's index whole even where the previous state's could be
    patched (catalog_patch)."""
    if con is None:
        scratch = warehouse.new_scratch_dir()  # DuckDB's spill, inside the warehouse
        try:
            with closing(new_connection(scratch)) as own:
                return publish(warehouse, run=run, keep=keep, con=own, on_phase=on_phase, whole=whole)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    phase = on_phase or (lambda _step: None)
    segments = warehouse.segments()
    check_segments(segments)
    state_id, path = warehouse.new_state_dir()
    write_record_files(warehouse, segments, on_phase=phase, state_id=state_id)
    drop_stored_records(con, segments, on_phase=phase, state_id=state_id)
    phase(f"publishing state {state_id}: reading every version of {_plural(len(segments), 'segment')}")
    with all_cores(con), ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctmirror-copy") as copier:
        load_all_versions(con, segments)
        con.execute(read_sql("publish/current_versions.sql"))
        _load_removals(con, warehouse, segments)
        counts = dict(zip(
            ("studies", "versions", "quarantined"),
            con.execute(read_sql("publish/queries.sql", "state_counts"),
                        {"quarantine": [str(s.table_file("quarantine")) for s in segments]}).fetchone(),
        ))
        thesaurus = thesaurus_files(warehouse.root)
        fingerprint = index_fingerprint(thesaurus)
        patch = None if whole else catalog_patch(con, warehouse, segments, counts["studies"], fingerprint)
        # the previous catalog copied while the current rows are written: a file copy, the disk's work, not a core's
        copying = None if patch is None else copier.submit(shutil.copyfile, patch.previous, path / "catalog.duckdb")
        linked, filtered = _split_segments(con, segments)
        views: dict[str, list[Path]] = {}
        copies: dict[str, tuple[str, list[Segment]]] = {"studies": ("publish/current_studies.sql", segments)}
        for table in current_tables():
            folder = path / "tables" / table
            folder.mkdir()
            views[table] = [_link(segment.table_file(table), folder / f"{_segment_name(segment)}.parquet")
                            for segment in linked]
            if filtered or not linked:
                copies[table] = ("publish/current_rows.sql", filtered or segments)
        index_inputs = {t: [s.table_file(t) for s in segments] for t in INDEX_INPUT_TABLES}

        keys_query = read_sql("publish/queries.sql", "current_version_keys")
        current_keys = (polars.from_arrow(con.execute(keys_query).to_arrow_table())
                        if any(query == "publish/current_rows.sql" for query, _ in copies.values()) else None)

        def write_current(table: str) -> Path:
            # on a cursor each, side by side (see writer_lanes)
            query, sources = copies[table]
            target = _current_rows_file(path, table)
            files = [s.table_file(table) for s in sources]
            if current_keys is not None and query == "publish/current_rows.sql" and _one_schema(files):
                return _write_current_rows(files, current_keys, target)
            cursor = quiet(con.cursor())
            try:  # in the files' order (publish/current_rows.sql says why)
                write_parquet(cursor, read_sql(query), {"files": [str(f) for f in files]}, target)
            finally:
                cursor.close()
            return target

        order = slowest_first(list(copies), SLOWEST_TO_PUBLISH)
        phase(f"publishing state {state_id}: writing the current rows of {_plural(len(order), 'table')}")
        writers = ThreadPoolExecutor(max_workers=writer_lanes(), thread_name_prefix="ctmirror-publish")
        with (side_by_side(con) if len(copies) > 1 else all_cores(con)), writers as pool:
            written = list(pool.map(write_current, order))
        for table, target in zip(order, written):
            views[table] = [*views.get(table, []), target]
        views["registry_removals"] = [_write_table(path, "registry_removals", con.table("registry_removals"))]
        for table in HISTORY_TABLES:
            views[table] = [s.table_file(table) for s in segments]
        views["sync_runs"] = [_write_table(path, "sync_runs", con.sql(
            read_sql("publish/sync_runs.sql"), params={"runs": str(_state_runs(warehouse, path, run))}))]
        crash_point("state_tables_written")
        patch_failed = None
        if copying is not None:
            try:
                copying.result()
            except OSError as exc:  # no room for the copy, say: building the catalog whole needs no copy
                patch, patch_failed = None, f"copying the previous catalog: {exc}"[:500]
        catalog_args = dict(current_rows=index_inputs, con=con, thesaurus=thesaurus,
                            versions={t: [s.table_file(t) for s in segments] for t in VERSIONED_INDEX_INPUTS},
                            on_index=lambda table, done, total: phase(
                                f"publishing state {state_id}: index {done} of {total} ({table})"))
        if patch is not None:
            phase(f"publishing state {state_id}: the previous index, with the rows of "
                  f"{len(patch.changed):,} {'study' if len(patch.changed) == 1 else 'studies'} replaced")
            try:
                build_catalog(path / "catalog.duckdb", warehouse.root, views, **catalog_args, patch=patch)
            except (duckdb.Error, WarehouseError) as exc:  # a damaged previous catalog: not a reason to stop
                phase(f"publishing state {state_id}: the previous index could not be patched ({exc}); "
                      f"building it whole")
                patch, patch_failed = None, str(exc).splitlines()[0][:500]
        if patch is None:
            build_catalog(path / "catalog.duckdb", warehouse.root, views, **catalog_args)
        phase(f"publishing state {state_id}: making it current")
    meta = {
        "state_id": state_id,
        "published_at": utc_now(),
        "generation": warehouse.generation,
        "segments": [s.segment_id for s in segments],
        "index_fingerprint": fingerprint,
        "index": ({"built": "whole"} if patch is None else {"patched": len(patch.changed),
                                                            "patched_since_whole": patch.since_whole})
                 | ({"patch_failed": patch_failed} if patch_failed else {}),
        "counts": counts,
        "run": run,
    }
    state = warehouse.commit_state(state_id, path, meta, keep)
    crash_point("published")
    record_run(warehouse, run)  # only now has it completed (a crash before this: see _state_runs)
    return state


# A publish patches the previous state's index (rather than build it whole) while the studies patched since it
# was last built whole, these included, are at most this share of all: beyond it, replacing their rows costs
# about what building every row does, and a patched table holds the replaced rows' deletions and, after its
# other rows, the new ones, which a whole build clears.
PATCH_SHARE = 0.1


def catalog_patch(con: duckdb.DuckDBPyConnection, warehouse: Warehouse, segments: list[Segment], studies: int,
                  fingerprint: str) -> CatalogPatch | None:
    """What this publish can start its catalog from: the current state's, if it was built by this code (the SQL
    whose index_fingerprint() is `fingerprint`) from the same generation's segments, all of which this state
    reads; then the studies to replace are those with a version in a segment it did not read, and those either
    state knows the registry removed (a removal, or a sighting after one, changes their rows). None where it
    cannot be, or where the studies patched since the last whole build would be more than PATCH_SHARE of all."""
    previous = warehouse.current_state()
    if previous is None or previous.meta.get("index_fingerprint") != fingerprint \
            or previous.meta.get("generation") != warehouse.generation:
        return None
    read_before = set(previous.meta.get("segments") or [])
    removals_before = _current_rows_file(previous.path, "registry_removals", make=False)
    catalog = previous.path / "catalog.duckdb"
    if not read_before <= {s.segment_id for s in segments} or not catalog.exists() or not removals_before.exists():
        return None
    unread = [s for s in segments if s.segment_id not in read_before]
    new = [str(s.table_file("study_versions")) for s in unread]
    changed = {nct_id for (nct_id,) in con.execute(read_sql("publish/patch/removed_studies.sql"),
                                                   {"before": str(removals_before)}).fetchall()}
    if new:
        changed.update(nct_id for (nct_id,) in con.execute(read_sql("publish/patch/queries.sql", "new_version_studies"),
                                                           {"files": new}).fetchall())
    since_whole = (previous.meta.get("index") or {}).get("patched_since_whole", 0)
    if since_whole + len(changed) > PATCH_SHARE * studies:
        return None
    return CatalogPatch(previous=catalog, changed=sorted(changed),
                        new_files={t: [s.table_file(t) for s in unread] for t in NEW_VERSION_INPUTS},
                        since_whole=since_whole + len(changed))


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def current_tables() -> list[str]:
    """The normalised tables a state holds the current rows of, besides `studies` (which a state always writes,
    with what it knows of removals)."""
    return [t for t in normalised_tables() if t not in ("studies", "study_versions", *INDEX_INPUT_TABLES)]


def _segment_name(segment: Segment) -> str:
    return f"{segment.path.parent.name}-{segment.segment_id}"


def _split_segments(con, segments: list[Segment]) -> tuple[list[Segment], list[Segment]]:
    """(linked, filtered): segments all of whose versions are current, whose files are the state's rows as they
    are; and segments holding a superseded version, whose current rows are copied. A segment that added no
    version is neither: it has no rows in any current table."""
    stale_by_file = dict(con.execute(read_sql("publish/segment_currency.sql")).fetchall())
    linked, filtered = [], []
    for segment in segments:
        stale = stale_by_file.get(str(segment.table_file("study_versions")))
        if stale is not None:
            (filtered if stale else linked).append(segment)
    return linked, filtered


def _link(source: Path, target: Path) -> Path:
    """The segment's file in the state's folder without copying it: a hard link (segments are never modified, and
    a link outlives a rebuild's removal of the old generation); a copy where the file system has no hard links."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
    return target


def _current_rows_file(path: Path, table: str, make: bool = True) -> Path:
    """Where a state keeps the rows publish wrote for a table, its folder made (with `make`)."""
    target = path / "tables" / table / CURRENT_ROWS_FILE
    if make:
        target.parent.mkdir(exist_ok=True)
    return target


def _one_schema(files: list[Path]) -> bool:
    """Whether the files' columns are the same (an older segment's may lack one: DuckDB's union_by_name then
    lines them up)."""
    return len({tuple(pyarrow.parquet.read_schema(f)) for f in files}) == 1


def _write_current_rows(files: list[Path], current_keys: polars.DataFrame, target: Path) -> Path:
    """publish/current_rows.sql's rows (those of current versions, in the files' order) written by polars, whose
    Parquet writer takes about 30% less CPU than DuckDB's for files of the same size: most of a night's publish is
    writing every current row again. The same bytes whatever polars' threads (streamed, in order)."""
    (polars.scan_parquet(files)
     .join(current_keys.lazy(), on=["nct_id", "content_hash"], how="semi", maintain_order="left")
     .sink_parquet(target, compression="zstd", compression_level=1, statistics=True))
    return target


def _write_table(path: Path, table: str, relation) -> Path:
    target = _current_rows_file(path, table)
    relation.write_parquet(str(target), compression="zstd")
    return target


def write_record_files(warehouse: Warehouse, segments: list[Segment], *, on_phase: Callable[[str], None],
                       state_id: str) -> None:
    """The record file of every segment that has none yet (ctmirror/core/record_files.py): new segments, or all of
    them once after an upgrade or a rebuild. The generation's dictionary is trained first, on its first records.
    A record that is a whole member of a zip in raw/ is referred to there, not compressed again."""
    missing = [s for s in segments if not has_record_file(s.path)]
    if not missing:
        return
    blobs = {r.receipt_id: f"raw/{r.blob}" for r in RawStore(warehouse.root).receipts()}
    files = record_files_of(warehouse.root)  # the process's readers: each zip opened once
    on_phase(f"publishing state {state_id}: record files of {_plural(len(missing), 'segment')}")
    dictionary_file = missing[0].path.parent / DICTIONARY
    if not dictionary_file.exists():
        samples: list[bytes] = []
        for segment in missing:
            samples.extend(files.read_member(r) if isinstance(r, RawMember) else bytes(r)
                           for r in _records_of(segment, blobs, limit=DICTIONARY_SAMPLES - len(samples)))
            if len(samples) >= DICTIONARY_SAMPLES:
                break
        trained = train_dictionary(samples)
        if trained:
            atomic_write_bytes(dictionary_file, trained)
    dictionary = dictionary_file.read_bytes() if dictionary_file.exists() else b""
    with ThreadPoolExecutor(max_workers=writer_lanes(), thread_name_prefix="ctmirror-records") as pool:
        list(pool.map(lambda segment: write_record_file(segment.path, _records_of(segment, blobs), dictionary),
                      missing))
        crash_point("record_files_written")


def drop_stored_records(con: duckdb.DuckDBPyConnection, segments: list[Segment], *,
                        on_phase: Callable[[str], None], state_id: str) -> None:
    """Each segment's records out of its study_versions.parquet once its record file holds them: a segment keeps
    each record once (the Parquet copy was 1.75 GB of 600,000 studies). The file is replaced whole, its other
    columns and rows as they were, so the record file's row i stays the file's row i."""
    holding = holding_records(segments)
    if not holding:
        return
    on_phase(f"publishing state {state_id}: the records out of study_versions in {_plural(len(holding), 'segment')}")
    for segment in holding:
        assert has_record_file(segment.path), segment.path  # write_record_files ran first
        target = segment.table_file("study_versions")
        columns = pyarrow.parquet.read_schema(target).names
        partial = target.with_name(f".tmp-{target.name}")
        query = "without_records" if "record_bytes" in columns else "without_records_sized"
        write_parquet(con, read_sql("publish/queries.sql", query), {"file": str(target)}, partial)
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        os.replace(partial, target)
        fsync_dir(segment.path)
        crash_point("records_dropped_from_a_segment")


def holding_records(segments: list[Segment]) -> list[Segment]:
    """The segments whose study_versions.parquet still holds their records (`raw`): new ones, or an older
    ctmirror's."""
    return [s for s in segments if "raw" in pyarrow.parquet.read_schema(s.table_file("study_versions")).names]


def _records_of(segment: Segment, blobs: dict[int, str], limit: int | None = None):
    """The records of a segment's study_versions.parquet, in file order, as memoryviews of Arrow's buffers (one
    record batch at a time: bounded memory, and no copy into Python strings); a record that is a whole zip member
    (not in the file) as a RawMember of its receipt's blob (`blobs`: each receipt's, from the warehouse root)."""
    file = pyarrow.parquet.ParquetFile(segment.table_file("study_versions"))
    if "raw" not in file.schema_arrow.names:  # dropped once its record file held them, which is now gone
        raise lost_record_file(f"segment {segment.segment_id}")
    left = file.metadata.num_rows if limit is None else limit
    in_zips = "raw_member" in file.schema_arrow.names
    columns = ["raw", "raw_member", "receipt_id"] if in_zips else ["raw"]
    for batch in file.iter_batches(batch_size=256, columns=columns, use_threads=False):
        texts = batch.column(0)
        members = batch.column(1).to_pylist() if in_zips else [None] * len(texts)
        receipts = batch.column(2).to_pylist() if in_zips else None
        nulls = texts.is_null().to_pylist() if texts.null_count else []
        if any(null and member is None for null, member in zip(nulls, members)):
            raise WarehouseError(f"segment {segment.segment_id}: a version without its record",
                                 hint=REBUILD_HINT)
        width = "q" if pyarrow.types.is_large_string(texts.type) else "i"
        offsets = memoryview(texts.buffers()[1]).cast("B").cast(width)[texts.offset:texts.offset + len(texts) + 1]
        data = memoryview(texts.buffers()[2] or b"")
        for i in range(min(len(texts), left)):
            if members[i]:
                yield RawMember(blobs[receipts[i]], *members[i])  # type: ignore[index]
            else:
                yield data[offsets[i]:offsets[i + 1]]
        left -= min(len(texts), left)
        if left <= 0:
            return


def load_all_versions(con, segments: list) -> None:
    con.execute(read_sql("publish/all_versions.sql"),
                {"files": [str(s.table_file("study_versions")) for s in segments]})


def write_ordered(con, table: str, query: str, params: dict, target: Path) -> None:
    """One table's rows, in the order of its key (its file's `-- key:` line), as zstd Parquet."""
    ordered = f"{query.rstrip()}\nORDER BY {', '.join(table_key(table))}"  # identifiers from our own files
    write_parquet(con, ordered, params, target)


def _load_removals(con, warehouse: Warehouse, segments: list) -> None:
    removals = warehouse.root / "sync" / "removals.ndjson"
    if removals.exists():
        con.execute(read_sql("publish/registry_removals.sql"), {"removals": str(removals)})
    else:
        con.execute(read_sql("publish/queries.sql", "no_registry_removals"))
    con.execute(read_sql("publish/active_removals.sql"),
                {"sightings": [str(s.table_file("sightings")) for s in segments]})


RUN_COUNTS = ("records", "versions_added", "studies_added", "studies_changed", "quarantined")


def completed_run(*, run_id: str, command: str, source: str, origin: str, started: str, finished: str,
                  counts: dict[str, int], **details: object) -> dict:
    """A completed run as sync_runs records it. counts: RUN_COUNTS; `unchanged` is what is left of the records
    (neither a new version nor quarantined). details: the columns a kind of run knows (data_timestamp, removed,
    pages, retries, note); the others are empty."""
    run = {"run_id": run_id, "command": command, "source": source, "origin": origin, "status": "completed",
           "started_at": started.rstrip("Z"), "finished_at": finished.rstrip("Z"),
           **{key: int(counts[key]) for key in RUN_COUNTS},
           "unchanged": counts["records"] - counts["versions_added"] - counts["quarantined"],
           "data_timestamp": None, "removed": 0, "pages": None, "retries": None, "note": None}
    run.update(details)
    return run


def read_runs(warehouse: Warehouse) -> list[dict]:
    """The completed runs of runs.ndjson. A torn last line (a crash mid-append) is not a run and is left out;
    any other unreadable line stops the writer, naming the file and line."""
    runs_file = warehouse.root / "runs.ndjson"
    if not runs_file.exists():
        return []
    text = runs_file.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    runs = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            run = json.loads(line)
            if not isinstance(run, dict) or "run_id" not in run:
                raise ValueError("not a run record")
        except ValueError as exc:
            if number == len(lines):  # no newline after it: an append that never finished
                continue
            raise WarehouseError(f"{runs_file}, line {number}: not a run record ({exc})",
                                 hint="delete that line (each state's runs.ndjson keeps the runs it knew), "
                                      "then run the command again") from None
        runs.append(run)
    return runs


def record_run(warehouse: Warehouse, run: dict) -> None:
    """Appends a completed run to runs.ndjson, which the next publish turns into the sync_runs table. Idempotent
    by run_id. A torn last line is cut off first, so the new line is whole."""
    if any(known.get("run_id") == run["run_id"] for known in read_runs(warehouse)):
        return
    append_lines(warehouse.root / "runs.ndjson", [json.dumps(run, sort_keys=True)])


def _state_runs(warehouse: Warehouse, path: Path, run: dict) -> Path:
    """The runs a new state's sync_runs holds, written to its own folder: every recorded run, the one this
    state publishes, and the run of the current state if a crash came between publishing it and recording it."""
    current = warehouse.current_state()
    if current is not None and (current.meta.get("run") or {}).get("run_id"):
        record_run(warehouse, current.meta["run"])
    runs = read_runs(warehouse)
    if run.get("run_id") and all(known.get("run_id") != run["run_id"] for known in runs):
        runs.append(run)
    target = path / "runs.ndjson"
    target.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in runs), encoding="utf-8")
    return target
