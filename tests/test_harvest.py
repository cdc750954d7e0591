"""The harvester against a real-HTTP fake of the v2 API holding the real sample records."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA, nct, write_ndjson
from fake_api import FakeApiServer, FakeRegistry, last_update

from ctmirror import Mirror
from ctmirror.core.errors import RetryableHarvestError, TerminalHarvestError
from ctmirror.core.record_files import RecordFiles
from ctmirror.core.warehouse import Warehouse
from ctmirror.read.status import warehouse_status
from ingest.harvest import SyncOptions, sync, sync_from_bulk
from ingest.http_client import RetryPolicy
from ingest.loader import load_paths

pytestmark = pytest.mark.slow  # a fake API on loopback, and SIGKILL tests in subprocesses

FAST_RETRY = RetryPolicy(attempts=6, base_delay=0.01, max_delay=0.05)
COMPARED = ["studies", "conditions", "keywords", "interventions", "arm_groups", "collaborators", "locations",
            "outcomes", "study_references", "mesh_terms", "browse_leaves", "nct_aliases"]


def options(server: FakeApiServer, **extra) -> SyncOptions:
    return SyncOptions(base_url=server.base_url, min_interval=0, timeout=2.0, retry=FAST_RETRY, **extra)


def tables(root: Path) -> dict[str, pl.DataFrame]:
    with Mirror(root) as m:
        found = {t: m.sql(f"SELECT * FROM {t} ORDER BY ALL") for t in COMPARED}
        found["study_versions"] = m.sql("SELECT nct_id, content_hash, record_bytes FROM study_versions ORDER BY ALL")
        found["records"] = pl.DataFrame(stored_records(m), schema=["nct_id", "content_hash", "record"], orient="row")
    return found


def stored_records(m: Mirror) -> list[tuple[str, str, bytes]]:
    """Every version's record as the segments' record files keep it, by NCT ID and content hash."""
    files = RecordFiles(m.warehouse.root)
    return [(v["nct_id"], v["content_hash"], files.read(v["record_file"], v["record_row"])) for v in m.rows(
        "SELECT nct_id, content_hash, record_file, record_row FROM study_version ORDER BY nct_id, content_hash")]


def sightings_per_study(root: Path) -> pl.DataFrame:
    with Mirror(root) as m:
        return m.sql("SELECT nct_id, count(*) AS n FROM sightings GROUP BY ALL ORDER BY ALL")


def assert_same_tables(a: Path, b: Path) -> None:
    left, right = tables(a), tables(b)
    for name in left:
        assert left[name].equals(right[name]), name


@pytest.fixture(scope="module")
def subset(records) -> list[dict]:
    """600 real records: enough for several pages at a page size of 200."""
    return records[::3][:600]


@pytest.fixture(scope="module")
def loaded_subset(tmp_path_factory, subset) -> Path:
    root = tmp_path_factory.mktemp("loaded") / "w"
    folder = tmp_path_factory.mktemp("in")
    load_paths(Warehouse(root), [write_ndjson(folder / "subset.ndjson", subset)])
    return root


def registry_of(records: list[dict], page_size: int = 200) -> FakeRegistry:
    return FakeRegistry(records={nct(r): copy.deepcopy(r) for r in records}, max_page_size=page_size)


def test_full_sync_equals_loading_the_same_records(tmp_path, records, sample_warehouse):
    registry = registry_of(records, page_size=1000)
    with FakeApiServer(registry) as server:
        result = sync(Warehouse(tmp_path / "w"), options(server))
    assert result.run["pages"] == 3 and result.run["studies_added"] == 2279
    assert result.run["data_timestamp"] == registry.data_timestamp
    assert 0 < result.publish_seconds and 0 < result.publish_cpu_seconds
    assert f"(publishing {result.publish_seconds:,.1f} s)" in result.summary
    assert_same_tables(tmp_path / "w", sample_warehouse)
    pages = [r for r in registry.requests if r.startswith("/api/v2/studies?")]
    assert all("pageSize=1000" in r and "countTotal=true" in r for r in pages)
    assert [r.split("&pageToken=")[0] for r in pages[1:]] == [pages[0]] * 2  # same parameters but the token


def test_a_full_last_page_with_a_token_leading_to_an_empty_page_ends_the_run(tmp_path, subset, loaded_subset):
    registry = registry_of(subset, page_size=200)  # 600 records: three full pages, then an empty one
    with FakeApiServer(registry) as server:
        result = sync(Warehouse(tmp_path / "w"), options(server))
    assert result.run["pages"] == 3
    assert len([r for r in registry.requests if r.startswith("/api/v2/studies?")]) == 4
    assert_same_tables(tmp_path / "w", loaded_subset)


@pytest.mark.parametrize("fault, settings", [
    ("429", {"retry_after": "1"}), ("429", {}), ("500", {}), ("503", {}), ("drop", {}), ("truncate", {}),
    ("slow", {"seconds": 3.0}), ("expire_tokens", {"after_pages": 2}),
], ids=["429-retry-after", "429", "500", "503", "dropped-connection", "truncated-json", "timeout", "expired-token"])
def test_each_fault_still_ends_with_the_right_warehouse(tmp_path, subset, loaded_subset, fault, settings):
    registry = registry_of(subset)
    registry.fail(fault, **settings)
    if fault != "expire_tokens":
        registry.fail(fault, **settings)  # twice in a row
    started = time.monotonic()
    with FakeApiServer(registry) as server:
        result = sync(Warehouse(tmp_path / "w"), options(server))
    assert not registry.faults, "the fault was never met"
    assert_same_tables(tmp_path / "w", loaded_subset)
    # each study counted once, though a restarted query received its first pages twice
    assert (result.run["records"], result.run["studies_added"], result.run["unchanged"]) == (600, 600, 0)
    if fault == "expire_tokens":
        assert "page token rejected" in result.run["note"] and result.run["pages"] > 3
    else:
        assert result.run["retries"] == 2
    if settings.get("retry_after"):
        assert time.monotonic() - started >= 2.0  # Retry-After: 1, honoured twice


def test_a_client_error_stops_with_the_url_and_message_and_the_next_run_resumes(tmp_path, subset, loaded_subset):
    registry = registry_of(subset)
    wh = Warehouse(tmp_path / "w")
    with FakeApiServer(registry) as server:
        bad = SyncOptions(base_url=server.base_url + "/nowhere", min_interval=0, retry=FAST_RETRY)
        with pytest.raises(TerminalHarvestError,
                           match=r"HTTP 404 from GET http://127\.0\.0\.1:\d+/nowhere/api/v2/version: no route"):
            sync(wh, bad)
        for _ in range(FAST_RETRY.attempts):  # the first page fails more often than the policy retries
            registry.fail("503")
        with pytest.raises(RetryableHarvestError, match="gave up after 6 attempts: HTTP 503"):
            sync(wh, options(server))
        assert wh.current_state() is None  # nothing was ever published: the failures are in runs.ndjson alone
        failed = [r for r in wh.recorded_runs() if r["status"] == "failed"]
        assert [r["command"] for r in failed] == ["sync", "sync"]
        assert "HTTP 404" in failed[0]["note"] and "gave up after 6 attempts" in failed[1]["note"]
        result = sync(wh, options(server))
    assert result.run["pages"] == 3
    assert_same_tables(wh.root, loaded_subset)
    with Mirror(wh.root) as m:  # once published, sync_runs holds the failures beside the success
        assert m.sql("SELECT status FROM sync_runs ORDER BY started_at")["status"].to_list() == \
            ["failed", "failed", "completed"]
        report = warehouse_status(m)
    assert report["last_success"]["command"] == "sync" and not report["last_run_failed"]
    assert "gave up" in report["last_failure"]["note"] and report["data_age_hours"] is not None


def test_a_failed_night_is_shown_by_status_and_a_night_without_changes_publishes_nothing(tmp_path, subset):
    registry = registry_of(subset)
    wh = Warehouse(tmp_path / "w")
    with FakeApiServer(registry) as server:
        sync(wh, options(server))
        first = wh.current_state().state_id
        quiet_night = sync(wh, options(server))
        assert wh.current_state().state_id == first and "nothing published" in quiet_night.summary
        for _ in range(FAST_RETRY.attempts):
            registry.fail("503")
        with pytest.raises(RetryableHarvestError):
            sync(wh, options(server))
    with Mirror(wh.root) as m:
        report = warehouse_status(m)
    assert report["last_run_failed"] and "HTTP 503" in report["last_failure"]["note"]
    assert report["last_success"]["finished_at"] < report["last_failure"]["finished_at"]
    env = {**os.environ, "CTMIRROR_WAREHOUSE": str(wh.root)}
    shown = subprocess.run([sys.executable, "-m", "ctmirror.cli", "status", "--check"], capture_output=True,
                           text=True, env=env)
    assert shown.returncode == 1 and "LAST FAILED  sync" in shown.stdout and "HTTP 503" in shown.stdout
    monitored = subprocess.run([sys.executable, "-m", "ctmirror.cli", "status", "--json"], capture_output=True,
                               text=True, env=env)
    assert monitored.returncode == 0 and json.loads(monitored.stdout)["last_run_failed"] is True


def test_an_answer_of_another_shape_stops_at_once_and_the_next_run_resumes(tmp_path, subset, loaded_subset):
    registry = registry_of(subset)
    wh = Warehouse(tmp_path / "w")
    with FakeApiServer(registry) as server:
        registry.fail("reshape")
        with pytest.raises(TerminalHarvestError, match=r"without a 'studies' list \(its keys: totalCount, trials\)"):
            sync(wh, options(server))
        assert len([r for r in registry.requests if r.startswith("/api/v2/studies?")]) == 1  # not retried
        result = sync(wh, options(server))
    assert result.run["pages"] == 3 and result.run["retries"] == 0
    assert_same_tables(wh.root, loaded_subset)


def test_data_changing_mid_harvest_is_noticed(tmp_path, subset):
    registry = registry_of(subset)
    changed_id = sorted(registry.records)[-1]

    def change(reg: FakeRegistry) -> None:
        record = copy.deepcopy(reg.records[changed_id])
        record["protocolSection"]["statusModule"]["lastUpdatePostDateStruct"]["date"] = "2026-11-25"
        record["protocolSection"]["identificationModule"]["briefTitle"] += " (updated)"
        reg.put(record)
        reg.data_timestamp = "2026-11-26T09:00:00"

    registry.fail("change_data", after_pages=1, mutate=change)
    with FakeApiServer(registry) as server:
        result = sync(Warehouse(tmp_path / "w"), options(server))
    assert "data timestamp changed during the harvest" in result.run["note"]
    assert result.run["data_timestamp"] == "2026-11-26T09:00:00"
    with Mirror(tmp_path / "w") as m:
        assert m.get_trial(changed_id).title.endswith("(updated)")


def test_incremental_sync_fetches_only_what_changed_and_marks_the_gone(tmp_path, subset):
    registry = registry_of(subset)
    wh = Warehouse(tmp_path / "w")
    with FakeApiServer(registry) as server:
        sync(wh, options(server))
        first_run_started = json.loads((wh.root / "sync" / "state.json").read_text())["next_since"]
        ids = sorted(i for i, r in registry.records.items() if "statusModule" in r["protocolSection"])
        edited = ids[10:13]
        for nct_id in edited:
            record = copy.deepcopy(registry.records[nct_id])
            record["protocolSection"]["statusModule"]["lastUpdatePostDateStruct"]["date"] = "2099-01-01"
            record["protocolSection"]["statusModule"]["overallStatus"] = "TERMINATED"
            record["protocolSection"]["statusModule"]["whyStopped"] = "Sponsor decision"
            registry.put(record)
        registry.remove(ids[50])
        registry.requests.clear()
        result = sync(wh, options(server, check_removed=True))
    assert result.run["versions_added"] == 3 and result.run["studies_changed"] == 3
    assert result.run["removed"] == 1
    first_page = [r for r in registry.requests if "filter.advanced" in r][0]
    assert "AREA%5BLastUpdatePostDate%5DRANGE%5B" in first_page
    since = first_page.split("RANGE%5B")[1][:10]
    assert since < first_run_started  # the last sync's start date minus one day
    with Mirror(wh.root) as m:
        assert sorted(m.sql("SELECT nct_id FROM studies WHERE overall_status = 'TERMINATED' AND why_stopped = "
                            "'Sponsor decision'")["nct_id"].to_list()) == edited
        gone = m.rows("SELECT nct_id, removed_from_registry_on FROM studies WHERE removed_from_registry_on IS NOT NULL")
        assert [g["nct_id"] for g in gone] == [ids[50]]
        assert m.sql("SELECT count(*) AS n FROM study_versions")["n"][0] == 603


def test_a_full_sync_marks_removed_and_aliased_studies_never_deleting_them(tmp_path, subset):
    registry = registry_of(subset)
    wh = Warehouse(tmp_path / "w")
    ids = sorted(registry.records)
    with FakeApiServer(registry) as server:
        sync(wh, options(server))
        registry.remove(ids[0])
        registry.remove(ids[1])
        registry.aliases[ids[1]] = ids[2]
        result = sync(wh, options(server, full=True))
    assert result.run["removed"] == 2 and "1 now aliases" in result.summary
    with Mirror(wh.root) as m:
        rows = m.rows("SELECT nct_id, merged_into_nct_id, removed_from_registry_on FROM studies "
                      "WHERE removed_from_registry_on IS NOT NULL ORDER BY nct_id")
        assert [(r["nct_id"], r["merged_into_nct_id"]) for r in rows] == [(ids[0], None), (ids[1], ids[2])]
        assert m.sql("SELECT count(*) AS n FROM studies")["n"][0] == 600  # marked, not deleted


# One kill in each phase of a sync: receiving, storing raw/, checkpointing, normalising, writing record files,
# publishing (bench/ kills it at every point, 117 of them).
CRASH_POINTS = ["page_received:2", "raw_written:3", "checkpoint_saved:2", "segment_file_written:4",
                "records_dropped_from_a_segment:1", "state_tables_written:1", "published:1"]


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_sigkill_anywhere_then_resume_equals_an_uninterrupted_run(tmp_path, subset, loaded_subset, point):
    registry = registry_of(subset)
    with FakeApiServer(registry) as server:
        command = [sys.executable, "-m", "ctmirror.cli", "-q", "-w", str(tmp_path / "w"), "sync", "--base-url",
                   server.base_url, "--interval", "0"]
        killed = subprocess.run(command, env={**os.environ, "CTMIRROR_CRASH_AT": point}, capture_output=True,
                                text=True, timeout=300)
        assert killed.returncode == -9, killed.stderr
        if not point.startswith(("state_tables_written", "published")):  # killed while normalising
            assert list((tmp_path / "w").glob(".scratch-*")), "the killed writer's scratch is in the warehouse"
        resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr
    assert not list((tmp_path / "w").glob(".scratch-*"))  # swept by the next writer, then its own removed
    assert_same_tables(tmp_path / "w", loaded_subset)
    # each study seen once, however the run was killed and resumed (a page stored before the kill is not fetched
    # and counted again)
    assert sightings_per_study(tmp_path / "w").equals(sightings_per_study(loaded_subset))
    with Mirror(tmp_path / "w") as m:
        assert m.rows("SELECT records, studies_added, unchanged FROM sync_runs") == \
            [{"records": 600, "studies_added": 600, "unchanged": 0}]


def test_a_reader_never_sees_a_partial_state_during_a_sync(tmp_path, subset, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "first.ndjson", subset[:100])])
    registry = registry_of(subset, page_size=100)
    errors, seen = [], set()
    done = threading.Event()

    def read_in_a_loop() -> None:
        while not done.is_set():
            try:
                with Mirror(wh.root) as m:
                    studies = m.sql("SELECT count(*) AS n FROM studies")["n"][0]
                    cards = m.sql("SELECT count(*) AS n FROM trial_card WHERE is_current")["n"][0]
                    versions = m.sql("SELECT count(DISTINCT nct_id) AS n FROM study_versions")["n"][0]
                    assert studies == cards == versions, (studies, cards, versions)
                    seen.add(studies)
            except Exception as exc:  # noqa: BLE001 - any error is the failure we look for
                errors.append(repr(exc))

    reader = threading.Thread(target=read_in_a_loop)
    reader.start()
    try:
        with FakeApiServer(registry) as server:
            subprocess.run([sys.executable, "-m", "ctmirror.cli", "-q", "-w", str(wh.root), "sync", "--base-url",
                            server.base_url, "--interval", "0"], check=True, timeout=300)
        time.sleep(0.3)
    finally:
        done.set()
        reader.join()
    assert errors == []
    assert seen == {100, 600}


def test_bulk_bootstrap_then_incremental(tmp_path):
    wh = Warehouse(tmp_path / "w")
    result = sync_from_bulk(wh, str(DATA / "bulk" / "ctg-studies-erectile-dysfunction.json.zip"))
    assert result.run["studies_added"] == 635
    state = json.loads((wh.root / "sync" / "state.json").read_text())
    with Mirror(wh.root) as m:
        newest = m.sql("SELECT max(last_update_post_date) AS d FROM studies")["d"][0]
        bulk_ids = m.sql("SELECT nct_id FROM studies ORDER BY nct_id")["nct_id"].to_list()
    assert state["next_since"] == newest.isoformat()
    with Mirror(wh.root) as m:
        records = [json.loads(record) for _, _, record in stored_records(m)]
    registry = registry_of(records)
    newer = copy.deepcopy(registry.records[bulk_ids[0]])
    newer["protocolSection"]["statusModule"]["lastUpdatePostDateStruct"]["date"] = "2099-01-01"
    registry.put(newer)
    with FakeApiServer(registry) as server:
        after = sync(wh, options(server))
    assert after.run["pages"] == 1 and after.run["versions_added"] == 1
    assert [last_update(r) for r in [newer]] == ["2099-01-01"]


def test_retries_say_what_is_happening_as_they_happen(tmp_path, subset):
    from ingest.harvest import Progress

    class Notes(Progress):
        def __init__(self) -> None:
            self.notes: list[str] = []

        def note(self, message: str) -> None:
            self.notes.append(message)

    registry = registry_of(subset[:100])
    registry.fail("503")
    registry.fail("drop")
    notes = Notes()
    with FakeApiServer(registry) as server:
        sync(Warehouse(tmp_path / "w"), options(server), notes)
    retries = [n for n in notes.notes if "retry" in n]
    assert len(retries) == 2, notes.notes
    assert retries[0].startswith("HTTP 503 from GET ") and "; retry 1 of 5 in 0 s; check the network or --base-url" \
        in retries[0]
    assert "connection failed" in retries[1] and "; retry 2 of 5 in" in retries[1]
