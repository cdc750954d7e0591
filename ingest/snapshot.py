"""Frozen "as of" snapshots: the warehouse as the registry stood on a cutoff date, standing alone.

A snapshot is a folder `Mirror(folder)` opens like a warehouse: tables/*.parquet, catalog.duckdb with the
same views, index and methods, and snapshot.json (cutoff, mode, source state, data timestamp, row counts,
content hash). The segments hold normalised rows for every version ever seen, so a snapshot is a publish whose
version map is chosen by the cutoff (sql/asof/version_map.sql) and whose studies follow the leakage rules of
sql/asof/studies.sql. Parquet files are written single-threaded and key-ordered, so the same warehouse state
and cutoff give byte-identical files and the same content hash, in any process.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from datetime import date
from pathlib import Path

from ctmirror.core.duck import new_connection
from ctmirror.core.errors import InvalidArgument, WarehouseError
from ctmirror.core.raw_store import utc_now
from ctmirror.core.record_files import (
    DICTIONARY,
    OFFSETS,
    RECORDS,
    lost_record_file,
    record_files_of,
    write_record_file,
)
from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.warehouse import State, Warehouse, atomic_write_bytes, atomic_write_text
from ingest.catalog import build_catalog
from ingest.normalize import normalised_tables
from ingest.publish import HISTORY_TABLES, check_segments, holding_records, load_all_versions, write_ordered
from ingest.thesaurus import thesaurus_files

MODES = ("strict", "exact")  # exact: strict, and only the studies whose version of the cutoff day is held
SNAPSHOT_FORMAT = 1


def build_snapshot(warehouse: Warehouse, cutoff: date, out: Path, *, state: State | None = None,
                   exact_only: bool = False) -> dict:
    """Writes the strict as-of snapshot of `state` (default: the current one) at `cutoff` into `out`, which
    must not exist (it is written beside and renamed into place whole). Returns the manifest. exact_only: only
    the studies whose version of that day is held (mode "exact"; the manifest's left_out counts the others)."""
    state = state or warehouse.state()
    out = Path(out)
    if out.exists():
        raise InvalidArgument(f"{out} exists already: snapshots are never overwritten", invalid_input=str(out),
                              recovery_hint="choose a new --out folder, or delete the old snapshot first")
    root = warehouse.root.resolve()
    if out.resolve() == root or root in out.resolve().parents:
        raise InvalidArgument(f"{out} is inside the warehouse {root}: a snapshot there could be pruned or read as "
                              "the warehouse's own files", invalid_input=str(out),
                              recovery_hint="write the snapshot to a folder outside the warehouse")
    segments = [s for s in warehouse.segments() if s.segment_id in set(state.meta["segments"])]
    check_segments(segments)
    if holding_records(segments):
        raise WarehouseError("the warehouse was last published by an older ctmirror, which kept each record twice",
                             hint="run `ctmirror republish` once, then make the snapshot")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".tmp-{out.name}-", dir=out.parent))
    try:
        manifest = _write(work, segments, cutoff, state, warehouse.root, exact_only)
        # Complete before it appears: the catalog names its files relative to the folder, which is then renamed.
        build_catalog(work / "catalog.duckdb", work,
                      {t: [work / "tables" / f"{t}.parquet"] for t in manifest["row_counts"]}, recorded_root=out,
                      thesaurus=thesaurus_files(warehouse.root))
        os.replace(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return manifest


def _write_records(con, work: Path, segments: list, root: Path) -> None:
    """The snapshot's own record file (tables/records.zst, with the generation's dictionary beside it), its rows
    in the order of its study_versions, read from the segments' record files: it stands alone, as a published
    warehouse does, and the same records make the same bytes."""
    tables = work / "tables"
    generation_dictionary = segments[0].path.parent / DICTIONARY if segments else None
    dictionary = generation_dictionary.read_bytes() if generation_dictionary and generation_dictionary.exists() else b""
    if dictionary:
        atomic_write_bytes(work / DICTIONARY, dictionary)
    files = record_files_of(root)
    cursor = con.execute(read_sql("asof/record_sources.sql"), {
        "snapshot_file": str(tables / "study_versions.parquet"),
        "files": [str(s.table_file("study_versions")) for s in segments]})

    def records():
        while batch := cursor.fetchmany(2048):
            for path, row in batch:
                text = files.read(os.path.relpath(path, root), row)
                if text is None:
                    raise lost_record_file(os.path.dirname(path))
                yield text

    write_record_file(tables, records(), dictionary)


def _write(work: Path, segments: list, cutoff: date, state: State, root: Path, exact_only: bool) -> dict:
    tables = work / "tables"
    tables.mkdir()
    con = new_connection(threads=1)  # one writer thread: row groups, hence bytes, never depend on scheduling
    try:
        load_all_versions(con, segments)
        con.execute(read_sql("asof/version_map.sql"), {"cutoff": cutoff})
        # of the strict map: (exact, studies)
        exact = con.execute(read_sql("asof/queries.sql", "exact_counts")).fetchone()
        if exact_only:
            con.execute(read_sql("asof/queries.sql", "exact_only"))
        for table in normalised_tables():
            files = [str(s.table_file(table)) for s in segments]
            if table == "studies":
                query, params = read_sql("asof/studies.sql"), {"files": files, "cutoff": cutoff}
            elif table in ("study_references", "study_versions"):
                query, params = read_sql(f"asof/{table}.sql"), {"files": files}
            else:
                query, params = read_sql("publish/current_rows.sql"), {"files": files}
            write_ordered(con, table, query, params, tables / f"{table}.parquet")
        # Our own clock's records (what we received, when, what a sync found gone) stay out: a snapshot is
        # the registry's state only.
        for table in (*HISTORY_TABLES[1:], "sync_runs"):
            con.sql(read_sql(f"asof/empty_{table}.sql")).write_parquet(str(tables / f"{table}.parquet"))
        con.execute(read_sql("publish/queries.sql", "no_registry_removals"))
        con.table("registry_removals").write_parquet(str(tables / "registry_removals.parquet"))
        counts = {p.stem: con.execute(read_sql("asof/queries.sql", "row_count"), {"file": str(p)}).fetchone()[0]
                  for p in sorted(tables.glob("*.parquet"))}
        _write_records(con, work, segments, root)
    finally:
        con.close()
    digest = hashlib.sha256()
    for path in [*sorted(tables.glob("*.parquet")), tables / RECORDS, tables / OFFSETS, work / DICTIONARY]:
        if path.exists():
            digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    manifest = {
        "format": SNAPSHOT_FORMAT, "cutoff": cutoff.isoformat(), "mode": "exact" if exact_only else "strict",
        "source_state": state.state_id, "source_published_at": state.meta.get("published_at"),
        "source_data_timestamp": (state.meta.get("run") or {}).get("data_timestamp"),
        "studies": exact[0] if exact_only else exact[1], "exact_studies": exact[0], "row_counts": counts,
        **({"left_out": exact[1] - exact[0]} if exact_only else {}),
        "content_hash": digest.hexdigest(), "created_at": utc_now(),
    }
    atomic_write_text(work / "snapshot.json", json.dumps(manifest, indent=2, sort_keys=True))
    # Mirror opens a snapshot like a published state: it reads state.json and catalog.duckdb.
    atomic_write_text(work / "state.json", json.dumps({"state_id": f"snapshot-{cutoff.isoformat()}",
                                                      "snapshot": manifest}, indent=2, sort_keys=True))
    return manifest
