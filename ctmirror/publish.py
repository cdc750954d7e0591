"""Publishing: from all segments, the current version of each study, written as a new state."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ctmirror.catalog import build_catalog
from ctmirror.sqlfiles import read_sql
from ctmirror.errors import WarehouseError
from ctmirror.warehouse import DEFAULT_KEEP_STATES, State, Warehouse
from ingest.crash import crash_point
from ingest.normalize import (
    PARALLEL_WRITERS, new_connection, normalised_tables, quiet, side_by_side, slowest_first, table_key,
    write_parquet,
)
from ingest.raw_store import utc_now

# Tables every state carries whole, as all versions or all rows, read where the segments keep them.
HISTORY_TABLES = ("study_versions", "quarantine", "sightings")
# Tables the catalog's index is built from, and nothing else reads: a state does not copy them (that was a
# fifth of publishing); their views read the current versions' rows straight from the segments.
INDEX_INPUT_TABLES = ("search_terms", "places", "study_details", "condition_links")
SLOWEST_TO_PUBLISH = ("locations", "studies", "outcomes", "browse_leaves", "mesh_terms")


def check_segments(segments: list) -> None:
    """Every segment must hold every table this version normalises: one written by an older ctmirror, before a
    table existed, has to be renormalised from raw/ (nothing is lost: raw/ is the source of truth)."""
    for segment in segments:
        missing = [t for t in (*normalised_tables(), "quarantine", "sightings") if not segment.table_file(t).exists()]
        if missing:
            raise WarehouseError(
                f"segment {segment.segment_id} was written by an older ctmirror: it has no {', '.join(missing)}",
                hint="run `ctmirror rebuild` once: it renormalises every record from raw/ (no network)")


def publish(warehouse: Warehouse, *, run: dict, keep: int = DEFAULT_KEEP_STATES) -> State:
    segments = warehouse.segments()
    check_segments(segments)
    state_id, path = warehouse.new_state_dir()
    con = new_connection()
    try:
        load_all_versions(con, segments)
        con.execute(read_sql("publish/current_versions.sql"))
        _load_removals(con, warehouse, segments)
        views: dict[str, list[Path]] = {}
        current = [t for t in normalised_tables() if t not in ("study_versions", *INDEX_INPUT_TABLES)]
        for table in current:
            views[table] = [path / "tables" / f"{table}.parquet"]
        index_inputs = {t: [s.table_file(t) for s in segments] for t in INDEX_INPUT_TABLES}

        def write_current(table: str) -> None:
            # on a cursor each, side by side (see PARALLEL_WRITERS)
            cursor = quiet(con.cursor())
            try:
                query = read_sql("publish/current_studies.sql" if table == "studies" else "publish/current_rows.sql")
                write_ordered(cursor, table, query, {"files": [str(s.table_file(table)) for s in segments]},
                              views[table][0])
            finally:
                cursor.close()

        writers = ThreadPoolExecutor(max_workers=PARALLEL_WRITERS, thread_name_prefix="ctmirror-publish")
        with side_by_side(con), writers as pool:
            list(pool.map(write_current, slowest_first(current, SLOWEST_TO_PUBLISH)))
        removals_file = path / "tables" / "registry_removals.parquet"
        con.table("registry_removals").write_parquet(str(removals_file), compression="zstd")
        views["registry_removals"] = [removals_file]
        for table in HISTORY_TABLES:
            views[table] = [s.table_file(table) for s in segments]
        runs_file = path / "tables" / "sync_runs.parquet"
        con.sql(read_sql("publish/sync_runs.sql"), params={"runs": str(warehouse.root / "runs.ndjson")}
                ).write_parquet(str(runs_file), compression="zstd")
        views["sync_runs"] = [runs_file]
        counts = dict(zip(
            ("studies", "versions", "quarantined"),
            con.execute(read_sql("publish/state_counts.sql"),
                        {"quarantine": [str(s.table_file("quarantine")) for s in segments]}).fetchone(),
        ))
    finally:
        con.close()
    crash_point("state_tables_written")
    build_catalog(path / "catalog.duckdb", views, current_rows=index_inputs)
    meta = {
        "state_id": state_id,
        "published_at": utc_now(),
        "generation": warehouse.generation,
        "segments": [s.segment_id for s in segments],
        "counts": counts,
        "run": run,
    }
    state = warehouse.commit_state(state_id, path, meta, keep)
    crash_point("published")
    return state


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
        con.execute(read_sql("publish/no_registry_removals.sql"))
    con.execute(read_sql("publish/active_removals.sql"),
                {"sightings": [str(s.table_file("sightings")) for s in segments]})


def record_run(warehouse: Warehouse, run: dict) -> None:
    """Appends a run to runs.ndjson, which the next publish turns into the sync_runs table. Idempotent by
    run_id, so a run resumed after a crash past this point is recorded once."""
    runs = warehouse.root / "runs.ndjson"
    if runs.exists() and any(json.loads(line).get("run_id") == run["run_id"]
                             for line in runs.read_text(encoding="utf-8").splitlines() if line.strip()):
        return
    with open(warehouse.root / "runs.ndjson", "a", encoding="utf-8") as f:
        f.write(json.dumps(run, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())
