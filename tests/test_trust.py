"""Trust: the same answers from anywhere, read surfaces that cannot write or read outside their state, cursors
that cannot be forged, and damage that says how to recover."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import fingerprint, listing, nct, write_ndjson

from ctmirror import InvalidArgument, Mirror
from ctmirror.core.errors import CtmirrorError, StateNotFound, WarehouseError
from ctmirror.core.record_files import RecordFiles
from ctmirror.core.warehouse import Warehouse
from ingest.loader import load_paths, republish


def ctmirror(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    repo = Path(__file__).resolve().parent.parent
    environment = {**os.environ, "PYTHONPATH": f"{repo}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", **(env or {})}
    environment.pop("CTMIRROR_WAREHOUSE", None)
    return subprocess.run([sys.executable, "-m", "ctmirror.cli", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def small(tmp_path_factory, records) -> Path:
    """A warehouse of 300 real studies, built with a relative --warehouse path from its parent folder."""
    parent = tmp_path_factory.mktemp("small")
    source = write_ndjson(parent / "in.ndjson", records[:300])
    done = ctmirror("-q", "load", str(source), cwd=parent)  # the default ./warehouse, as a new user types it
    assert done.returncode == 0, done.stderr
    return parent / "warehouse"


def copy_of(warehouse: Path, target: Path) -> Path:
    shutil.copytree(warehouse, target, symlinks=True)
    return target


# ---- answers never depend on where the warehouse is opened from ------------------------------------------------
@pytest.mark.slow
def test_the_same_answers_from_three_folders_and_after_a_move(tmp_path, small, sample_warehouse):
    warehouse = copy_of(small, tmp_path / "copied" / "warehouse")
    decoy = tmp_path / "decoy"  # a folder with a warehouse of its own at ./warehouse
    copy_of(sample_warehouse, decoy / "warehouse")
    query = "SELECT count(*) AS n, min(nct_id) AS first FROM studies"
    answers = []
    for cwd in (tmp_path, decoy, warehouse):
        done = ctmirror("-w", str(warehouse), "sql", query, "--format", "json", cwd=cwd)
        assert done.returncode == 0, done.stderr
        answers.append(json.loads(done.stdout))
    assert answers[0] == answers[1] == answers[2] == [{"n": 300, "first": answers[0][0]["first"]}]
    with Mirror(warehouse) as m:
        before = (m.get_landscape("cancer").model_dump(), m.sql(query).to_dicts())
    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    os.rename(warehouse, moved)
    with Mirror(moved) as m:
        assert (m.get_landscape("cancer").model_dump(), m.sql(query).to_dicts()) == before
    done = ctmirror("-w", str(moved), "status", "--json", cwd=decoy)
    assert json.loads(done.stdout)["studies"] == 300


@pytest.mark.slow
def test_a_snapshot_answers_the_same_after_being_moved(tmp_path, small):
    out = tmp_path / "snap"
    done = ctmirror("-w", str(small), "snapshot", "--as-of", "2015-01-01", "--out", str(out))
    assert done.returncode == 0, done.stderr
    with Mirror(out) as m:
        before = m.sql("SELECT nct_id, overall_status FROM studies ORDER BY nct_id").to_dicts()
    os.rename(out, tmp_path / "moved-snap")
    with Mirror(tmp_path / "moved-snap") as m:
        assert m.sql("SELECT nct_id, overall_status FROM studies ORDER BY nct_id").to_dicts() == before
        assert m.as_of.isoformat() == "2015-01-01"
    # its records, from its own record file: the warehouse's, byte for byte
    snapshot_records, warehouse_records = stored_records(tmp_path / "moved-snap"), stored_records(small)
    assert snapshot_records and None not in snapshot_records.values()
    assert all(warehouse_records[version] == text for version, text in snapshot_records.items())


def stored_records(root) -> dict[tuple[str, str], bytes | None]:
    """Every version a warehouse or snapshot holds, by (NCT ID, content hash): its record as stored."""
    with Mirror(root) as m:
        rows = m.rows("SELECT nct_id, content_hash, record_file, record_row FROM study_version")
    files = RecordFiles(root)
    return {(r["nct_id"], r["content_hash"]): files.read(r["record_file"], r["record_row"]) for r in rows}


# ---- read-only by construction -----------------------------------------------------------------------------------
REFUSED = [
    "SELECT content FROM read_blob('/etc/passwd')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM glob('/root/*')",
    "SELECT * FROM glob('{warehouse}/../*')",
    "SELECT * FROM read_parquet('{outside}')",
    "SELECT * FROM read_parquet('http://127.0.0.1:9/x.parquet')",
    "SELECT * FROM read_text('{warehouse}/raw/manifest.ndjson')",
    "ATTACH '{tmp}/other.duckdb' AS other",
    "INSTALL fts",
    "LOAD fts",
    "SET memory_limit = '30MB'",
    "SET VARIABLE ctmirror_root = '/'",
    "RESET enable_external_access",
    "PRAGMA version",
    "PRAGMA memory_limit = '30MB'",
    "CALL pragma_version()",
    "COPY (SELECT 1) TO '{tmp}/stolen.csv'",
    "COPY (SELECT * FROM conditions) TO '{state}/tables/conditions/current.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{tmp}/dump'",
    "CREATE TEMP TABLE stopped_card AS SELECT 1",
    "CREATE MACRO get_terminated_page(a) AS TABLE SELECT 1",
    "SELECT 1; SELECT 2",
    "SELECT 1 /* harmless */; COPY (SELECT 1) TO '{tmp}/stolen.csv'",
    "/* SELECT */ COPY (SELECT 1) TO '{tmp}/stolen.csv'",
    "-- SELECT only\nATTACH '{tmp}/other.duckdb' AS other",
    "DETACH catalog",
    "USE memory",
    "CHECKPOINT",
    "SELECT 1 -- " + "x" * 10_000_000,
]


@pytest.fixture(scope="module")
def outside_parquet(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("outside") / "secret.parquet"
    duckdb.execute(f"COPY (SELECT 'secret' AS s) TO '{path}' (FORMAT parquet)")
    return path


def _statement(attempt: str, tmp: Path, warehouse: Path, outside: Path) -> str:
    state = Warehouse(warehouse).state().path
    return attempt.format(tmp=tmp, warehouse=warehouse, outside=outside, state=state)


@pytest.mark.parametrize("attempt", REFUSED, ids=lambda a: a[:60])
def test_mirror_sql_refuses_and_changes_nothing(tmp_path, sample_warehouse, outside_parquet, attempt):
    before = listing(sample_warehouse)
    with Mirror(sample_warehouse) as m, Mirror(sample_warehouse) as other:
        with pytest.raises(CtmirrorError) as refused:
            m.sql(_statement(attempt, tmp_path, sample_warehouse, outside_parquet))
        assert "\n" not in str(refused.value).strip() and str(refused.value)
        # the other Mirror, and this one's methods, answer as before
        assert other.sql("SELECT current_setting('memory_limit') AS v")["v"][0] != "30.0 MiB"
        assert m.get_trial("NCT00711542") == other.get_trial("NCT00711542") is not None
        assert m.sql("SELECT count(*) AS n FROM studies")["n"][0] == 2279
    assert listing(sample_warehouse) == before
    assert not (tmp_path / "stolen.csv").exists() and not (tmp_path / "dump").exists()
    assert not (tmp_path / "other.duckdb").exists()


# The CLI runs one process per attempt: a sample of the kinds above keeps the suite fast.
@pytest.mark.slow
@pytest.mark.parametrize("attempt", [REFUSED[i] for i in (0, 2, 4, 5, 7, 10, 13, 17, 18, 21, 23)],
                         ids=lambda a: a[:60])
def test_ctmirror_sql_refuses_in_one_line_and_changes_nothing(tmp_path, small, outside_parquet, attempt):
    before = fingerprint(small)
    done = ctmirror("-w", str(small), "sql", "--", _statement(attempt, tmp_path, small, outside_parquet))
    assert done.returncode == 2, done.stdout
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and all(line.startswith(("error: ", "hint: ")) for line in lines)
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert fingerprint(small) == before


def test_reading_a_file_outside_says_so(sample_warehouse):
    with Mirror(sample_warehouse) as m, pytest.raises(CtmirrorError, match="outside the warehouse"):
        m.sql("SELECT * FROM read_csv('/etc/passwd')")


def test_a_query_holding_a_setting_still_answers_on_the_same_mirror(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        first = m.search_trials("pembrolizumab", "cancer")
        with pytest.raises(CtmirrorError):
            m.sql("SET threads = 1")
        assert m.search_trials("pembrolizumab", "cancer") == first
        assert m.sql("SELECT now() IS NOT NULL AS ok")["ok"][0]  # TIMESTAMPTZ needs pytz


@pytest.mark.slow
def test_now_and_other_timestamptz_work_in_the_cli(small):
    done = ctmirror("-w", str(small), "sql", "SELECT now() > TIMESTAMPTZ '2020-01-01 00:00:00+00' AS ok",
                    "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"ok": True}]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["{warehouse}/out.csv", "{warehouse}/states/x.json",
                                    "{warehouse}/tables/studies/current.parquet"])
def test_out_refuses_any_path_inside_a_warehouse(tmp_path, small, target):
    before = fingerprint(small)
    path = target.format(warehouse=small)
    done = ctmirror("-w", str(small), "sql", "SELECT 1 AS x", "--format", "csv", "--out", path)
    assert done.returncode == 2 and "inside the warehouse" in done.stderr
    done = ctmirror("-w", str(small), "report", "landscape", "cancer", "--out", path)
    assert done.returncode == 2 and "inside the warehouse" in done.stderr
    assert fingerprint(small) == before
    done = ctmirror("-w", str(small), "sql", "SELECT 1 AS x", "--format", "csv", "--out", str(tmp_path / "x.csv"))
    assert done.returncode == 0 and (tmp_path / "x.csv").read_text() == "x\n1\n"


# ---- cursors --------------------------------------------------------------------------------------------------
def _edit_cursor(cursor: str, **changes) -> str:
    payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    payload.update(changes)
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


@pytest.mark.slow
def test_a_forged_or_foreign_cursor_is_invalid_input(tmp_path, small, records):
    other = tmp_path / "other"
    load_paths(Warehouse(other), [write_ndjson(tmp_path / "o.ndjson", records[:300])])
    with Mirror(small) as m, Mirror(other) as o:
        first = m.search(condition="cancer", page_size=5)
        cursor = first.pagination.cursor
        assert m.search(condition="cancer", page_size=5, cursor=cursor).items  # the real one works
        forged = [_edit_cursor(cursor, s=f"../../{other.name}/states/000001"),
                  _edit_cursor(cursor, s="000001/../000001"), _edit_cursor(cursor, o=0),
                  _edit_cursor(cursor, h="0" * 32), cursor[:-3], "x" * 5000]
        for bad in forged:
            with pytest.raises(InvalidArgument) as refused:
                m.search(condition="cancer", page_size=5, cursor=bad)
            assert refused.value.envelope()["error"]["code"] == "INVALID_INPUT"
        # the same cursor on another warehouse, whose state has the same ID, is refused
        with pytest.raises(InvalidArgument, match="not issued by this warehouse"):
            o.search(condition="cancer", page_size=5, cursor=cursor)
    # a copy of the warehouse accepts its own cursors (replicas answer alike)
    with Mirror(copy_of(small, tmp_path / "replica")) as replica:
        assert replica.search(condition="cancer", page_size=5, cursor=cursor) == \
            Mirror(small).search(condition="cancer", page_size=5, cursor=cursor)


def test_a_state_id_is_never_a_path(sample_warehouse):
    for bad in ("../states/000001", "/etc", "000001/..", ""):
        with pytest.raises(StateNotFound, match="not a state ID"):
            Mirror(sample_warehouse, state=bad)


# ---- damage says how to recover --------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_truncated_parquet_file_says_rebuild_and_rebuild_repairs_it(tmp_path, small):
    warehouse = copy_of(small, tmp_path / "w")
    damaged = Warehouse(warehouse).state().table_files("conditions")[0]
    data = damaged.read_bytes()
    damaged.unlink()  # a copy of its own, not the segment's file it was linked to
    damaged.write_bytes(data[: len(data) // 2])
    done = ctmirror("-w", str(warehouse), "sql", "SELECT count(*) FROM conditions")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith("error: ") and "damaged" in done.stderr
    assert "hint: run `ctmirror rebuild`" in done.stderr and "Traceback" not in done.stderr
    assert ctmirror("-q", "-w", str(warehouse), "rebuild").returncode == 0
    done = ctmirror("-w", str(warehouse), "sql", "SELECT count(DISTINCT nct_id) AS n FROM conditions", "--format",
                    "json")
    assert done.returncode == 0 and json.loads(done.stdout)[0]["n"] > 250


@pytest.mark.slow
def test_a_missing_current_link_says_republish_and_republish_restores_it(tmp_path, small):
    warehouse = copy_of(small, tmp_path / "w")
    (warehouse / "current").unlink()
    done = ctmirror("-w", str(warehouse), "status")
    assert done.returncode == 2 and "current" in done.stderr and "ctmirror republish" in done.stderr
    assert "load --sample" not in done.stderr
    assert ctmirror("-q", "-w", str(warehouse), "republish").returncode == 0
    with Mirror(warehouse) as m:
        assert m.sql("SELECT count(*) AS n FROM studies")["n"][0] == 300


@pytest.mark.slow
def test_a_folder_that_is_not_there_says_which_and_what_to_do(tmp_path):
    done = ctmirror("-w", str(tmp_path / "nowhere"), "sql", "SELECT 1")
    assert done.returncode == 2 and "no such folder" in done.stderr and "--warehouse" in done.stderr


@pytest.mark.slow
def test_a_torn_runs_file_is_survived_and_a_bad_line_named(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:20])])
    runs = wh.root / "runs.ndjson"
    with open(runs, "a") as f:
        f.write('{"run_id": "torn-append", "comm')  # a crash mid-append
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", records[20:40])])
    with Mirror(wh.root) as m:
        assert m.sql("SELECT run_id FROM sync_runs")["run_id"].to_list() == [
            json.loads(line)["run_id"] for line in runs.read_text().splitlines()]
        assert m.sql("SELECT count(*) AS n FROM sync_runs")["n"][0] == 2
    assert runs.read_text().endswith("\n") and "torn-append" not in runs.read_text()
    lines = runs.read_text().splitlines()
    runs.write_text(lines[0] + "\nnot json\n" + lines[1] + "\n")
    with pytest.raises(WarehouseError, match=r"runs\.ndjson, line 2: not a run record"):
        load_paths(wh, [write_ndjson(tmp_path / "c.ndjson", records[40:60])])


@pytest.mark.slow
def test_a_run_killed_while_publishing_is_not_recorded_as_completed(tmp_path, records):
    root = tmp_path / "w"
    source = write_ndjson(tmp_path / "a.ndjson", records[:30])
    killed = ctmirror("-q", "-w", str(root), "load", str(source), env={"CTMIRROR_CRASH_AT": "state_tables_written:1"})
    assert killed.returncode == -9
    assert not (root / "runs.ndjson").exists() or (root / "runs.ndjson").read_text() == ""
    assert ctmirror("-q", "-w", str(root), "load", str(source)).returncode == 0  # resumes: the records are in raw/
    with Mirror(root) as m:
        assert m.sql("SELECT count(*) AS n FROM studies")["n"][0] == 30
        assert m.sql("SELECT count(*) AS n FROM sync_runs")["n"][0] == 1


@pytest.mark.slow
def test_a_run_killed_after_publishing_is_recorded_by_the_next_writer(tmp_path, records):
    root = tmp_path / "w"
    killed = ctmirror("-q", "-w", str(root), "load", str(write_ndjson(tmp_path / "a.ndjson", records[:30])),
                      env={"CTMIRROR_CRASH_AT": "published:1"})
    assert killed.returncode == -9
    load_paths(Warehouse(root), [write_ndjson(tmp_path / "b.ndjson", records[30:40])])
    with Mirror(root) as m:
        assert m.sql("SELECT count(*) AS n FROM sync_runs")["n"][0] == 2


@pytest.mark.slow
def test_a_state_pruned_under_an_open_mirror_says_so(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:20])])
    with Mirror(wh.root) as m:
        load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", records[20:40])])
        shutil.rmtree(m.state.path)  # what pruning does once more states are published
        with pytest.raises(StateNotFound, match="was pruned while this Mirror had it open"):
            m.sql("SELECT count(*) FROM conditions")
        with pytest.raises(StateNotFound, match="was pruned"):
            m.rows("SELECT nct_id FROM studies WHERE phase IS NOT NULL")
    with Mirror(wh.root) as fresh:
        assert fresh.sql("SELECT count(*) AS n FROM studies")["n"][0] == 40


# ---- writers: nothing recorded twice, nothing left behind ------------------------------------------------------
@pytest.mark.slow
def test_a_load_that_adds_nothing_publishes_nothing(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    source = write_ndjson(tmp_path / "a.ndjson", records[:20])
    first = load_paths(wh, [source])
    again = load_paths(wh, [source])
    assert not again.published and again.state.state_id == first.state.state_id
    assert [s.state_id for s in wh.states()] == [first.state.state_id]
    done = ctmirror("-w", str(wh.root), "load", str(source))
    assert done.returncode == 0 and "nothing new" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("content", [b"PK\x03\x04 this is no zip at all", b"\x00\xff garbage \x13" * 100, b""],
                         ids=["broken-zip", "garbage", "empty"])
def test_an_unreadable_input_exits_non_zero(tmp_path, small, content):
    warehouse = copy_of(small, tmp_path / "w")
    states = [s.state_id for s in Warehouse(warehouse).states()]
    (tmp_path / "input.zip").write_bytes(content)
    done = ctmirror("-w", str(warehouse), "load", str(tmp_path / "input.zip"))
    assert done.returncode == 2 and done.stderr.splitlines()[-2].startswith("error: ")
    assert "Traceback" not in done.stderr
    with Mirror(warehouse) as m:
        assert m.sql("SELECT count(*) AS n FROM studies")["n"][0] == 300
    done = ctmirror("-w", str(warehouse), "load", str(tmp_path / "input.zip"))  # again: no new state at all
    assert done.returncode == 2
    assert len(Warehouse(warehouse).states()) <= len(states) + 1


@pytest.mark.slow
def test_quarantine_keeps_a_readable_nct_id_and_a_reload_adds_no_row(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "good.ndjson", records[:5])])
    broken = json.dumps(records[5])[:400]
    assert '"nctId"' in broken
    bad = tmp_path / "bad.ndjson"
    bad.write_text(json.dumps(records[6]) + "\n" + broken + "\n")
    load_paths(wh, [bad])
    load_paths(wh, [bad])
    with Mirror(wh.root) as m:
        rows = m.rows("SELECT nct_id, reason FROM quarantine")
    assert rows == [{"nct_id": nct(records[5]), "reason": rows[0]["reason"]}]


@pytest.mark.slow
def test_a_failed_writer_leaves_nothing_behind_and_its_input_is_received_once(tmp_path, records, monkeypatch):
    from ingest import normalize

    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])])
    source = write_ndjson(tmp_path / "b.ndjson", records[10:30])
    original = normalize.Normalizer._flush

    def disk_full(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(normalize.Normalizer, "_flush", disk_full)
    with pytest.raises(OSError, match="No space left"):
        load_paths(wh, [source])
    assert not list(wh.root.glob(".scratch-*")) and not list(wh.segments_dir.glob(".tmp-*"))
    monkeypatch.setattr(normalize.Normalizer, "_flush", original)
    with pytest.raises(OSError):
        monkeypatch.setattr(normalize.Normalizer, "_flush", disk_full)
        load_paths(wh, [source])
    monkeypatch.setattr(normalize.Normalizer, "_flush", original)
    result = load_paths(wh, [source])
    manifest = [json.loads(line) for line in (wh.root / "raw" / "manifest.ndjson").read_text().splitlines()]
    assert len(manifest) == 2  # the first file, and the second once however often it failed
    assert result.counts.records == 20 and result.counts.versions_added == 20
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) AS n FROM sightings")["n"][0] == 30


@pytest.mark.slow
def test_a_snapshot_folder_appears_only_when_complete(tmp_path, small, monkeypatch):
    from ingest import snapshot

    out = tmp_path / "snap"
    original = snapshot.build_catalog

    def checking(*args, **kwargs):
        assert not out.exists(), "the snapshot's folder appeared before its catalog was written"
        return original(*args, **kwargs)

    monkeypatch.setattr(snapshot, "build_catalog", checking)
    snapshot.build_snapshot(Warehouse(small), __import__("datetime").date(2016, 1, 1), out)
    assert (out / "catalog.duckdb").exists() and (out / "snapshot.json").exists()

    def failing(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshot, "build_catalog", failing)
    with pytest.raises(OSError):
        snapshot.build_snapshot(Warehouse(small), __import__("datetime").date(2016, 1, 1), tmp_path / "snap2")
    assert not (tmp_path / "snap2").exists() and not list(tmp_path.glob(".tmp-snap2*"))


@pytest.mark.slow
def test_republish_uses_the_newest_kept_state_when_current_is_broken(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])])
    os.replace(wh.root / "current", wh.root / "gone")
    (wh.root / "gone").unlink()
    os.symlink("states/999999", wh.root / "current")  # points at nothing
    with pytest.raises(WarehouseError, match="points at no state, though states 000001 are kept") as broken:
        Mirror(wh.root)
    assert "ctmirror republish" in broken.value.hint
    republish(wh)
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) AS n FROM studies")["n"][0] == 10


@pytest.mark.slow
def test_every_appended_file_survives_a_torn_last_line(tmp_path, records):
    from ctmirror.core.warehouse import append_lines

    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])])
    manifest = wh.root / "raw" / "manifest.ndjson"
    removals = wh.root / "sync" / "removals.ndjson"
    removals.parent.mkdir(exist_ok=True)
    removals.write_text('{"nct_id": "NCT00000001", "removed_on": "2020-01-01", "detected_at": "2020-01-01 00:00:00", '
                        '"run_id": "r", "merged_into": null}\n{"nct_id": "NCT0000')  # killed mid-append
    with open(manifest, "a") as f:
        f.write('{"receipt_id": 99, "sha2')
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", records[10:20])])
    assert all(json.loads(line) for line in manifest.read_text().splitlines())  # the torn receipt was cut off
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) AS n FROM studies")["n"][0] == 20
        assert m.sql("SELECT nct_id FROM registry_removals")["nct_id"].to_list() == ["NCT00000001"]
    first = removals.read_text().splitlines()[0]
    append_lines(removals, [first])  # the same removal again, as a resumed sync writes it
    load_paths(wh, [write_ndjson(tmp_path / "c.ndjson", records[20:25])])
    with Mirror(wh.root) as m:
        assert m.sql("SELECT nct_id FROM registry_removals")["nct_id"].to_list() == ["NCT00000001"]
    append_lines(removals, ['{"nct_id": "NCT00000002"}'])
    assert removals.read_text().splitlines()[-2:] == [first, '{"nct_id": "NCT00000002"}']


@pytest.mark.slow
def test_status_of_a_snapshot_says_its_cutoff_and_source(tmp_path, small):
    out = tmp_path / "snap"
    assert ctmirror("-w", str(small), "snapshot", "--as-of", "2016-01-01", "--out", str(out)).returncode == 0
    shown = ctmirror("-w", str(out), "status")
    assert shown.returncode == 0, shown.stderr
    assert "snapshot     strict as of 2016-01-01, of state 000001" in shown.stdout
    report = json.loads(ctmirror("-w", str(out), "status", "--json").stdout)
    assert report["snapshot"]["cutoff"] == "2016-01-01" and report["snapshot"]["source_state"] == "000001"
    assert json.loads(ctmirror("-w", str(small), "status", "--json").stdout)["snapshot"] is None
