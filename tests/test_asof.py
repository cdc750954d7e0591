"""Leakage-safe "as of" answers, frozen snapshots, pinning, history and batches, on the real sample."""

from __future__ import annotations

import copy
import json
import os
import random
import re
import subprocess
import sys
from datetime import date, timedelta

import pytest
from conftest import nct, write_ndjson
from fake_api import FakeApiServer, FakeRegistry

from ctmirror import InvalidArgument, Mirror
from ctmirror.core.errors import StateNotFound, TerminalHarvestError
from ctmirror.core.warehouse import Warehouse
from ctmirror.read import answers
from ingest.history import fetch_history
from ingest.loader import load_paths
from ingest.snapshot import build_snapshot


def day(record: dict, struct: str) -> str | None:
    value = record["protocolSection"].get("statusModule", {}).get(struct)
    value = value.get("date") if isinstance(value, dict) else value
    return None if value is None else (value + "-01-01"[len(value) - 4:])[:10] if len(value) < 10 else value


def terminated_later(records: list[dict]) -> tuple[dict, date]:
    """A real TERMINATED trial first posted well before its primary completion, and a cutoff between."""
    for record in records:
        status = record["protocolSection"].get("statusModule", {})
        first, event = day(record, "studyFirstPostDateStruct"), day(record, "primaryCompletionDateStruct")
        start = day(record, "startDateStruct")
        if status.get("overallStatus") == "TERMINATED" and status.get("whyStopped") and first and event and start \
                and date.fromisoformat(event) - date.fromisoformat(max(first, start)) > timedelta(days=400):
            return record, date.fromisoformat(max(first, start)) + timedelta(days=200)
    raise AssertionError("no such trial in the sample")


def random_cutoffs(*, seed: int, count: int, first: date, years: int) -> list[date]:
    """`count` cutoffs drawn (seeded) from the `years` years after `first`."""
    rng = random.Random(seed)
    return [first + timedelta(days=rng.randrange(365 * years)) for _ in range(count)]


@pytest.fixture(scope="module")
def m(sample_mirror):
    return sample_mirror


def test_a_trial_terminated_after_the_cutoff_is_not_terminated_then(m, records):
    record, cutoff = terminated_later(records)
    nct_id = nct(record)
    condition = record["protocolSection"]["conditionsModule"]["conditions"][0]
    strict = m.get_terminated(condition, date_before=cutoff, max_results=10_000)
    parity = m.get_terminated(condition, date_before=cutoff, max_results=10_000, holdout="first_posted")
    assert nct_id not in {t.nct_id for t in strict}
    assert nct_id in {t.nct_id for t in parity}
    with Mirror(m.warehouse.root, as_of=cutoff) as then:
        trial = then.get_trial(nct_id)
    assert trial.overall_status in ("RECRUITING", "NOT_YET_RECRUITING") and trial.why_stopped is None
    assert trial.as_of_exact is False and trial.version
    assert m.get_trial(nct_id).overall_status == "TERMINATED"


def test_results_posted_after_the_cutoff_are_not_posted_then(m, records):
    record = next(r for r in records if r.get("hasResults") and day(r, "resultsFirstPostDateStruct"))
    posted = date.fromisoformat(day(record, "resultsFirstPostDateStruct"))
    first = date.fromisoformat(day(record, "studyFirstPostDateStruct"))
    cutoff = first + (posted - first) / 2
    with Mirror(m.warehouse.root, as_of=cutoff) as then:
        assert then.get_trial(nct(record)).results_posted is False
    assert m.get_trial(nct(record)).results_posted is True


def test_studies_as_of_speaks_the_studies_table_s_words(m, records):
    """SQL at a cutoff in the same column names and types as today's `studies`; today it is `studies` itself."""
    today = m.sql("SELECT * FROM studies ORDER BY nct_id")
    assert m.sql("SELECT * FROM studies_as_of(NULL) ORDER BY nct_id").equals(today)
    terminated, cutoff = terminated_later(records)
    with_results = next(r for r in records if r.get("hasResults") and day(r, "resultsFirstPostDateStruct"))
    posted = date.fromisoformat(day(with_results, "resultsFirstPostDateStruct"))

    def row_then(record: dict, when: date) -> dict:
        then = m.sql("SELECT * FROM studies_as_of($cutoff) WHERE nct_id = $n", {"cutoff": when, "n": nct(record)})
        assert then.schema == today.schema and then.height == 1
        return then.row(0, named=True)

    stopped = row_then(terminated, cutoff)
    assert stopped["overall_status"] in ("RECRUITING", "NOT_YET_RECRUITING") and stopped["why_stopped"] is None
    unposted = row_then(with_results, posted - timedelta(days=1))
    assert unposted["has_results"] is False and unposted["results_first_post_date"] is None
    assert unposted["results_first_post_date_raw"] is None and unposted["results_first_post_date_type"] is None


def test_a_study_first_posted_after_the_cutoff_appears_nowhere(m, records):
    posted = [r for r in records if day(r, "studyFirstPostDateStruct")]
    record = max(posted, key=lambda r: day(r, "studyFirstPostDateStruct"))
    cutoff = date.fromisoformat(day(record, "studyFirstPostDateStruct")) - timedelta(days=1)
    condition = record["protocolSection"]["conditionsModule"]["conditions"][0]
    with Mirror(m.warehouse.root, as_of=cutoff) as then:
        assert then.get_trial(nct(record)) is None
        assert nct(record) not in {i.nct_id for i in then.search(condition=condition, page_size=200).items}
        with pytest.raises(InvalidArgument, match="would see past the cutoff"):
            then.sql("SELECT nct_id FROM studies")  # its tables are the warehouse's: SQL is refused, not leaked
    shown = {r["nct_id"] for r in m.rows("SELECT nct_id FROM trials_as_of($cutoff)", {"cutoff": cutoff})}
    assert nct(record) not in shown and len(shown) > 100


@pytest.mark.slow
def test_an_exact_older_version_is_shown_whole(tmp_path, records_by_id):
    current = records_by_id["NCT00711542"]
    older = copy.deepcopy(current)
    status = older["protocolSection"]["statusModule"]
    status["overallStatus"], status["lastUpdatePostDateStruct"] = "RECRUITING", {"date": "2010-03-01", "type": "ACTUAL"}
    status.pop("whyStopped")
    older["protocolSection"]["identificationModule"]["briefTitle"] = "The 2010 title"
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "now.ndjson", [current]), write_ndjson(tmp_path / "then.ndjson", [older])])
    with Mirror(wh.root, as_of="2011-01-01") as then:
        trial = then.get_trial("NCT00711542")
    assert (trial.title, trial.overall_status, trial.why_stopped, trial.as_of_exact) == \
        ("The 2010 title", "RECRUITING", None, True)
    with Mirror(wh.root) as now:
        assert now.get_trial("NCT00711542").overall_status == "TERMINATED"


@pytest.mark.slow
def test_no_strict_answer_contains_what_was_posted_after_the_cutoff(m):
    """Property test over every real record of the sample, at 20 random cutoffs, on the rows the methods read at a
    cutoff (trials_as_of: the version-aware index), checked against every version's own dates."""
    for cutoff in random_cutoffs(seed=20261125, count=20, first=date(2005, 1, 1), years=22):
        leaks = m.rows(LEAKS_AT_A_CUTOFF, {"cutoff": cutoff})[0]
        shown = leaks.pop("shown")
        assert leaks == {k: 0 for k in leaks}, (cutoff, leaks)
        assert shown > 0


LEAKS_AT_A_CUTOFF = """
    SELECT
        count(*) AS shown,
        count(*) FILTER (WHERE t.study_first_post_date > $cutoff) AS posted_later,
        count(*) FILTER (WHERE t.overall_status IN ('COMPLETED', 'TERMINATED', 'WITHDRAWN', 'SUSPENDED')
                         AND coalesce(s.primary_completion_date, s.completion_date, s.last_update_post_date) > $cutoff
                         AND NOT t.as_of_exact) AS terminal_later,
        count(*) FILTER (WHERE t.why_stopped IS NOT NULL
                         AND t.overall_status NOT IN ('TERMINATED', 'WITHDRAWN', 'SUSPENDED')
                         AND NOT t.as_of_exact) AS reason_without_status,
        count(*) FILTER (WHERE t.results_posted AND coalesce(s.results_first_post_date > $cutoff, NOT t.as_of_exact))
            AS results_later,
        count(*) FILTER (WHERE t.results_first_post_date > $cutoff OR t.last_update_post_date > $cutoff) AS dates_later,
        count(*) FILTER (WHERE t.enrollment_type = 'ACTUAL' AND NOT t.as_of_exact) AS actual_enrollment_later,
        count(*) FILTER (WHERE s.last_update_post_date <= $cutoff AND NOT t.as_of_exact) AS exact_version_missed,
        count(*) FILTER (WHERE t.overall_status = 'UNKNOWN' AND s.status_verified_date >= $cutoff - INTERVAL 2 YEAR)
            AS unknown_too_early,
        count(*) FILTER (WHERE t.overall_status IS DISTINCT FROM s.overall_status AND t.as_of_exact
                         AND s.overall_status <> 'UNKNOWN' AND t.overall_status <> 'UNKNOWN') AS exact_status_changed
    FROM trials_as_of($cutoff) AS t
    JOIN all_studies AS s USING (nct_id, content_hash)
"""


@pytest.mark.slow
def test_a_frozen_snapshot_contains_nothing_posted_after_its_cutoff(tmp_path, sample_warehouse):
    """The frozen snapshot (the reference the index is compared with) on its own tables, dates' types included."""
    for cutoff in random_cutoffs(seed=20261126, count=2, first=date(2005, 1, 1), years=21):
        build_snapshot(Warehouse(sample_warehouse), cutoff, tmp_path / str(cutoff))
        with Mirror(tmp_path / str(cutoff)) as then:
            leaks = then.rows(read_leak_query(), {"cutoff": cutoff})[0]
            assert leaks == {k: 0 for k in leaks}, (cutoff, leaks)
            assert then.rows("SELECT count(*) AS n FROM studies")[0]["n"] > 0


@pytest.mark.slow  # a snapshot
def test_an_exact_only_snapshot_holds_only_the_studies_whose_version_of_the_day_is_held(tmp_path, sample_warehouse):
    cutoff = date(2015, 1, 1)
    manifest = build_snapshot(Warehouse(sample_warehouse), cutoff, tmp_path / "exact", exact_only=True)
    with Mirror(sample_warehouse, as_of=cutoff) as strict, \
            Mirror(sample_warehouse, as_of=cutoff, exact_only=True) as exact, Mirror(tmp_path / "exact") as frozen:
        whole = strict.stats_exactness()[0]
        assert manifest["mode"] == "exact" and manifest["studies"] == manifest["exact_studies"] == whole["exact"]
        assert manifest["left_out"] == whole["reconstructed"] > 0
        assert frozen.sql("SELECT count(*) AS n FROM studies")["n"][0] == whole["exact"]
        assert frozen.stats_exactness()[0]["reconstructed"] == 0
        shown = {t.nct_id for t in exact.search_trials("placebo", "cancer")}
        assert shown and {t.nct_id for t in frozen.search_trials("placebo", "cancer")} == shown
        assert frozen.get_landscape("cancer").total_trial_count == exact.get_landscape("cancer").total_trial_count


def read_leak_query() -> str:
    return """
    SELECT
        count(*) FILTER (WHERE study_first_post_date > $cutoff) AS posted_later,
        count(*) FILTER (WHERE overall_status IN ('COMPLETED', 'TERMINATED', 'WITHDRAWN', 'SUSPENDED')
                         AND coalesce(primary_completion_date, completion_date, last_update_post_date) > $cutoff
                         AND NOT as_of_exact) AS terminal_later,
        count(*) FILTER (WHERE why_stopped IS NOT NULL
                         AND overall_status NOT IN ('TERMINATED', 'WITHDRAWN', 'SUSPENDED')
                         AND NOT as_of_exact) AS reason_without_status,
        count(*) FILTER (WHERE has_results AND coalesce(results_first_post_date > $cutoff, NOT as_of_exact))
            AS results_later,
        count(*) FILTER (WHERE (start_date > $cutoff AND start_date_type = 'ACTUAL')
                         OR (primary_completion_date > $cutoff AND primary_completion_date_type = 'ACTUAL')
                         OR (completion_date > $cutoff AND completion_date_type = 'ACTUAL')
                         OR (results_first_post_date > $cutoff)
                         OR (last_update_post_date > $cutoff)
                         OR greatest(status_verified_date, study_first_submit_date, study_first_submit_qc_date,
                                     results_first_submit_date, results_first_submit_qc_date, disp_first_submit_date,
                                     disp_first_submit_qc_date, disp_first_post_date, last_update_submit_date,
                                     estimated_results_first_submit_date, first_mcp_post_date) > $cutoff
                         OR (results_first_submit_date IS NOT NULL AND NOT has_results)) AS dates_later,
        count(*) FILTER (WHERE enrollment_type = 'ACTUAL' AND NOT as_of_exact) AS actual_enrollment_later,
        (SELECT count(*) FROM study_references JOIN studies USING (nct_id) WHERE NOT as_of_exact) AS references_later,
        count(*) FILTER (WHERE overall_status = 'UNKNOWN' AND status_verified_date >= $cutoff - INTERVAL 2 YEAR)
            AS unknown_too_early
    FROM studies
    """


@pytest.mark.slow
def test_snapshots_are_byte_identical_across_processes_and_survive_later_syncs(tmp_path, sample_warehouse, records):
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "snapshot",
                               "--as-of", "2019-06-01", "--out", str(out)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    manifests = [json.loads((out / "snapshot.json").read_text()) for out in outs]
    assert manifests[0]["content_hash"] == manifests[1]["content_hash"]
    for path in sorted((outs[0] / "tables").glob("*.parquet")):
        assert path.read_bytes() == (outs[1] / "tables" / path.name).read_bytes(), path.name
    assert manifests[0]["cutoff"] == "2019-06-01" and manifests[0]["mode"] == "strict"
    assert manifests[0]["row_counts"]["studies"] == manifests[0]["studies"] > 0
    with Mirror(outs[0]) as frozen:
        before = frozen.get_landscape("erectile dysfunction").model_dump(mode="json")
        assert frozen.as_of == date(2019, 6, 1)
        with pytest.raises(InvalidArgument, match="after this mirror's cutoff"):
            frozen.search_trials("tadalafil", "erectile dysfunction", date_before="2020-01-01")
    copy_of_sample = tmp_path / "w"
    load_paths(Warehouse(copy_of_sample), [write_ndjson(tmp_path / "x.ndjson", records[:5])])
    with Mirror(outs[0]) as frozen:
        assert frozen.get_landscape("erectile dysfunction").model_dump(mode="json") == before


def test_a_snapshot_needs_a_new_folder(tmp_path, sample_warehouse):
    (tmp_path / "taken").mkdir()
    with pytest.raises(InvalidArgument, match="exists already"):
        build_snapshot(Warehouse(sample_warehouse), date(2019, 6, 1), tmp_path / "taken")
    for inside in (sample_warehouse / "snapshots" / "2019", sample_warehouse / "states" / "x"):
        with pytest.raises(InvalidArgument, match="inside the warehouse"):
            build_snapshot(Warehouse(sample_warehouse), date(2019, 6, 1), inside)
        assert not inside.exists()


@pytest.mark.slow
def test_pinning_past_states(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    first = load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])]).state.state_id
    subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(wh.root), "pin", first], check=True, timeout=60)
    for n in range(2):  # a publish keeps the current state and those pinned or leased: 000002 goes with the next
        load_paths(wh, [write_ndjson(tmp_path / f"b{n}.ndjson", records[10 + n:11 + n])])
    with Mirror(wh.root, state=first) as old:
        assert old.sql("SELECT count(*) AS n FROM studies")["n"][0] == 10
    with pytest.raises(StateNotFound, match="is not kept"):
        Mirror(wh.root, state="000002")


@pytest.mark.slow
def test_history_makes_strict_answers_exact(tmp_path, records_by_id):
    current = records_by_id["NCT05144685"]
    v1 = copy.deepcopy(current)
    v1["protocolSection"]["statusModule"].update(
        overallStatus="RECRUITING", lastUpdatePostDateStruct={"date": "2022-06-01", "type": "ACTUAL"})
    v1["protocolSection"]["statusModule"].pop("whyStopped")
    registry = FakeRegistry(records={"NCT05144685": current}, history={"NCT05144685": [v1, current]})
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "now.ndjson", [current])])
    with Mirror(wh.root, as_of="2023-01-01") as before:
        assert before.get_trial("NCT05144685").as_of_exact is False
    with FakeApiServer(registry) as server:
        result = fetch_history(wh, ["NCT05144685"], base_url=server.base_url, min_interval=0)
    assert result.run["versions_added"] == 1
    with Mirror(wh.root, as_of="2023-01-01") as after:
        trial = after.get_trial("NCT05144685")
    assert (trial.as_of_exact, trial.overall_status) == (True, "RECRUITING")


@pytest.mark.slow
def test_history_of_every_study_a_condition_finds_killed_and_resumed(tmp_path, records):
    """`ctmirror history --condition ...`: every study the condition finds, each of its versions fetched once
    however the run is killed and resumed; a summary at the end."""
    chosen = [r for r in records if "Erectile Dysfunction" in r["protocolSection"].get("conditionsModule", {})
              .get("conditions", [])][:3]
    history = {}
    for record in chosen:
        older = copy.deepcopy(record)
        older["protocolSection"]["statusModule"].update(
            overallStatus="NOT_YET_RECRUITING", lastUpdatePostDateStruct={"date": "2001-02-03", "type": "ACTUAL"})
        history[nct(record)] = [older, record]
    registry = FakeRegistry(records={nct(r): r for r in chosen}, history=history)
    wh = Warehouse(tmp_path / "w")
    others = [r for r in records if "erectile" not in json.dumps(r).lower()][:20]  # found by nothing asked
    load_paths(wh, [write_ndjson(tmp_path / "now.ndjson", chosen + others)])
    with FakeApiServer(registry) as server:
        command = [sys.executable, "-m", "ctmirror.cli", "-q", "-w", str(wh.root), "history", "--condition",
                   "erectile dysfunction", "--base-url", server.base_url, "--interval", "0"]
        killed = subprocess.run(command, env={**os.environ, "CTMIRROR_CRASH_AT": "history_study_stored:2"},
                                capture_output=True, text=True, timeout=300)
        assert killed.returncode == -9, killed.stderr
        resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "History of 3 studies: 6 versions fetched, 3 new" in resumed.stdout, resumed.stdout  # the older three
    listings = [r for r in registry.requests if r.split("?")[0].endswith("/history")]
    assert sorted(listings) == sorted(f"/api/int/studies/{n}/history" for n in history)  # each listed once
    with Mirror(wh.root) as m:
        versions = m.rows("SELECT nct_id, count(*) AS n FROM study_versions WHERE nct_id IN $ids GROUP BY ALL",
                          {"ids": list(history)})
    assert {row["nct_id"]: row["n"] for row in versions} == dict.fromkeys(history, 2)


@pytest.mark.slow
def test_a_changed_history_shape_is_reported_and_nothing_loaded(tmp_path, records_by_id):
    registry = FakeRegistry(records={}, history={})
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "now.ndjson", [records_by_id["NCT05144685"]])])
    with FakeApiServer(registry) as server:
        registry.history["NCT05144685"] = []
        server.httpd.RequestHandlerClass._history = lambda self, i, v: self._json(200, {"versions": "moved"})
        with pytest.raises(TerminalHarvestError, match="shape ctmirror does not know"):
            fetch_history(wh, ["NCT05144685"], base_url=server.base_url, min_interval=0)
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) AS n FROM study_versions")["n"][0] == 1


def test_batch_returns_results_in_order(m):
    calls = [("search_trials", {"drug": "tadalafil", "condition": "erectile dysfunction", "date_before": "2015-01-01"}),
             ("get_trial", {"nct_id": "NCT00711542"}),
             ("get_terminated", {"query": "tadalafil"})]
    results = m.batch(calls)
    assert results[0] == m.search_trials("tadalafil", "erectile dysfunction", "2015-01-01")
    assert results[1] == m.get_trial("NCT00711542") and results[2] == m.get_terminated("tadalafil")
    with pytest.raises(InvalidArgument, match="unknown method"):
        m.batch([("drop_everything", {})])


def test_a_batch_query_that_runs_out_of_memory_is_answered_in_halves(m, monkeypatch):
    """A backtest's query of many calls that outgrows memory is split until its parts fit; one call that does not
    fit alone has the error."""
    import duckdb

    calls = [("get_landscape", {"condition": c, "date_before": f"201{n}-06-30"})
             for n, c in enumerate(("asthma", "cancer", "NASH", "obesity", "diabetes"))]
    alone = [m.call(name, **kwargs) for name, kwargs in calls]
    real, sizes = answers._answer_some, []

    def two_at_most(mirror, method, chunk):
        sizes.append(len(chunk))
        if len(chunk) > 2:
            raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 2.0 GiB")
        return real(mirror, method, chunk)

    monkeypatch.setattr(answers, "_answer_some", two_at_most)
    assert m.batch(calls) == alone
    assert sizes == [5, 2, 3, 1, 2]
    monkeypatch.setattr(answers, "_answer_some", lambda *a: (_ for _ in ()).throw(
        duckdb.OutOfMemoryException("Out of Memory Error")))
    with pytest.raises(duckdb.OutOfMemoryException):
        m.batch(calls[:1])


@pytest.mark.slow  # hundreds of calls, batched and alone
def test_a_batch_answers_each_call_as_if_it_ran_alone(m, monkeypatch):
    """A batch answers a method's calls in one query; no call may see another's arguments or results, however
    the calls are split into queries and however the cards are read."""
    rng = random.Random(5)
    drugs = ["tadalafil", "sildenafil", "metformin", "placebo", "vardenafil", "no such drug"]
    conditions = ["erectile dysfunction", "NASH", "diabetes", "impotence", "hypogonadism", "no such condition"]
    dates = [None, "2008-01-01", "2015-01-01"]
    ids = ["NCT00711542", "NCT05144685", "nct00711542", "NCT99999999"]
    calls = []
    for _ in range(60):
        kind = rng.randrange(7)
        date_before = rng.choice(dates)
        if kind == 0:
            calls.append(("search_trials", {"drug": rng.choice(drugs), "condition": rng.choice(conditions),
                                            "date_before": date_before, "max_results": rng.choice([3, 200])}))
        elif kind == 1:
            calls.append(("detect_whitespace", {"drug": rng.choice(drugs), "condition": rng.choice(conditions),
                                                "date_before": date_before, "holdout": "first_posted"}))
        elif kind == 2:
            calls.append(("get_landscape", {"condition": rng.choice(conditions), "date_before": date_before,
                                            "top_n": rng.choice([2, 50])}))
        elif kind == 3:
            calls.append(("get_terminated", {"query": rng.choice(drugs + conditions), "date_before": date_before}))
        elif kind == 4:
            calls.append(("get_trial", {"nct_id": rng.choice(ids)}))
        elif kind == 5:
            calls.append(("get_trial_details", {"nct_id": rng.choice(ids)}))
        else:
            calls.append(("search", {"condition": rng.choice(conditions), "page_size": 5}))
    together = m.batch(calls)
    alone = [getattr(m, name)(**kwargs) for name, kwargs in calls]
    assert together == alone
    monkeypatch.setattr(answers, "CALLS_PER_QUERY", 4)  # queries of four calls: chunk edges inside each method
    monkeypatch.setattr(answers, "LITERAL_KEYS_MAX", 0)  # cards read by the scan a big batch uses
    assert m.batch(calls) == alone
    assert any(r for r in together if isinstance(r, list)) and None in together
    with pytest.raises(InvalidArgument, match="max_results"):
        m.batch([("get_trial", {"nct_id": "NCT00711542"}),
                 ("search_trials", {"drug": "x", "condition": "y", "max_results": 0})])


@pytest.mark.slow
def test_unknown_is_derived_at_the_cutoff_not_leaked_from_today(m, records_by_id, tmp_path):
    """NCT03475563 is UNKNOWN today (last known RECRUITING, verified 2019-11, last updated 2019-11-27): the registry
    derived UNKNOWN later, without a new version. Shortly after its last update it was RECRUITING; more than two
    years after its verification, UNKNOWN."""
    status = records_by_id["NCT03475563"]["protocolSection"]["statusModule"]
    assert (status["overallStatus"], status["lastKnownStatus"], status["statusVerifiedDate"]) == \
        ("UNKNOWN", "RECRUITING", "2019-11")
    with Mirror(m.warehouse.root, as_of=date(2020, 6, 1)) as then:
        trial = then.get_trial("NCT03475563")
        assert (trial.overall_status, trial.as_of_exact) == ("RECRUITING", True)
    with Mirror(m.warehouse.root, as_of=date(2022, 1, 1)) as later:
        assert later.get_trial("NCT03475563").overall_status == "UNKNOWN"
    for cutoff, last_known in ((date(2020, 6, 1), None), (date(2022, 1, 1), "RECRUITING")):
        build_snapshot(Warehouse(m.warehouse.root), cutoff, tmp_path / str(cutoff))
        with Mirror(tmp_path / str(cutoff)) as frozen:
            assert frozen.rows("SELECT last_known_status FROM studies WHERE nct_id = 'NCT03475563'")[0][
                "last_known_status"] == last_known


@pytest.mark.slow
def test_an_active_status_not_verified_for_two_years_is_unknown_at_the_cutoff(tmp_path, records_by_id):
    record = copy.deepcopy(records_by_id["NCT03475563"])
    status = record["protocolSection"]["statusModule"]
    status.update(overallStatus="RECRUITING", statusVerifiedDate="2015-01")
    status.pop("lastKnownStatus")
    status["lastUpdatePostDateStruct"] = {"date": "2015-01-20", "type": "ACTUAL"}
    status["studyFirstPostDateStruct"] = {"date": "2015-01-20", "type": "ACTUAL"}
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", [record])])
    # verified 2015-01 (read as 2015-01-01): UNKNOWN from the first day more than two years after it
    for cutoff, expected in ((date(2016, 12, 31), "RECRUITING"), (date(2017, 1, 1), "RECRUITING"),
                             (date(2017, 1, 2), "UNKNOWN"), (date(2017, 2, 1), "UNKNOWN")):
        with Mirror(wh.root, as_of=cutoff) as then:
            assert then.get_trial(nct(record)).overall_status == expected, cutoff


def _answers(mirror: Mirror, calls: list[tuple[str, dict]]) -> list:
    """Every call's answer as JSON (a search page's cursor left out: it names the state that issued it)."""
    found = []
    for answer in mirror.batch(calls):
        dumped = answer.model_dump(mode="json") if hasattr(answer, "model_dump") else \
            [a.model_dump(mode="json") if hasattr(a, "model_dump") else a for a in answer] \
            if isinstance(answer, list) else answer
        if isinstance(dumped, dict) and "pagination" in dumped:
            dumped["pagination"]["cursor"] = None
        found.append(dumped)
    return found


def _calls_across_breadth(ids: list[str], rng: random.Random) -> list[tuple[str, dict]]:
    conditions = ["cancer", "diabetes", "asthma", "NASH", "obesity", "breast cancer", "hypertension", "HIV",
                  "depression", "prostate cancer", "erectile dysfunction"]
    drugs = ["tadalafil", "metformin", "semaglutide", "insulin", "placebo"]
    calls: list[tuple[str, dict]] = []
    for condition in conditions:
        calls += [("get_landscape", {"condition": condition}), ("get_terminated", {"query": condition}),
                  ("search", {"condition": condition, "page_size": 50}),
                  ("stats_by_status", {"condition": condition}), ("stats_by_country", {"condition": condition}),
                  ("search_trials", {"drug": rng.choice(drugs), "condition": condition}),
                  ("detect_whitespace", {"drug": rng.choice(drugs), "condition": condition})]
    calls += [("search", {"query": "randomized placebo", "location": "Boston", "page_size": 50}),
              ("search", {"status": "RECRUITING", "page_size": 50}), ("stats_by_phase", {})]
    return calls + [(method, {"nct_id": nct_id}) for nct_id in rng.sample(ids, 30)
                    for method in ("get_trial", "get_trial_details")]


def _compare_with_snapshots(root, tmp_path, cutoffs: list[date], seed: int) -> int:
    """Each cutoff's answers from the warehouse's own index (strict date_before; get_trial on a Mirror pinned to
    the cutoff) against the same calls on a frozen snapshot at the cutoff, the reference. Returns the calls made."""
    rng = random.Random(seed)
    made = 0
    with Mirror(root) as live:
        ids = [r["nct_id"] for r in live.rows("SELECT nct_id FROM study_number")]
        for cutoff in cutoffs:
            calls = _calls_across_breadth(ids, rng)
            build_snapshot(Warehouse(root), cutoff, tmp_path / f"snapshot-{cutoff}")
            dated = [(name, kwargs if name.startswith("get_trial") else {**kwargs, "date_before": cutoff})
                     for name, kwargs in calls]
            with Mirror(tmp_path / f"snapshot-{cutoff}") as frozen, Mirror(root, as_of=cutoff) as pinned:
                expected = _answers(frozen, dated)
                assert _answers(live, [c for c in dated if not c[0].startswith("get_trial")]) == \
                    [e for c, e in zip(dated, expected) if not c[0].startswith("get_trial")], cutoff
                assert _answers(pinned, calls) == expected, cutoff
            made += len(calls)
    return made


@pytest.mark.slow
def test_strict_answers_from_the_index_are_the_snapshots_answers_at_random_cutoffs(tmp_path, sample_warehouse):
    # 2 cutoffs, a snapshot each as the reference (each costs the suite about 10 s)
    cutoffs = random_cutoffs(seed=20261128, count=2, first=date(2000, 1, 1), years=27)
    assert _compare_with_snapshots(sample_warehouse, tmp_path, cutoffs, seed=1) > 2 * 100


def _older_versions(records: list[dict], rng: random.Random) -> list[list[dict]]:
    """Earlier versions of real records, as a registry's history holds them: each a year or two before the next,
    still recruiting, with another title and one condition fewer; some two versions back, some updated the same day
    as a later one (which was ingested last)."""
    waves: list[list[dict]] = [[], []]
    for record in records:
        status = record["protocolSection"].get("statusModule", {})
        updated = day(record, "lastUpdatePostDateStruct")
        first = day(record, "studyFirstPostDateStruct")
        if not updated or not first or updated <= first:
            continue
        span = (date.fromisoformat(updated) - date.fromisoformat(first)).days
        previous = record
        for wave in range(rng.choice([1, 1, 2])):
            older = copy.deepcopy(previous)
            older_status = older["protocolSection"]["statusModule"]
            when = date.fromisoformat(first) + timedelta(days=rng.randrange(max(span // (wave + 2), 1)))
            if rng.random() < 0.1:
                when = date.fromisoformat(day(previous, "lastUpdatePostDateStruct"))  # the same day: ingest order
            older_status["lastUpdatePostDateStruct"] = {"date": when.isoformat(), "type": "ACTUAL"}
            older_status["overallStatus"] = "RECRUITING"
            older_status.pop("whyStopped", None)
            older_status["statusVerifiedDate"] = when.isoformat()[:7]
            older["hasResults"] = False
            older["protocolSection"]["identificationModule"]["briefTitle"] = f"Earlier title {wave} of {nct(record)}"
            conditions = older["protocolSection"].get("conditionsModule", {}).get("conditions") or []
            if len(conditions) > 1:
                conditions.pop()
            waves[wave].append(older)
            previous = older
        del status
    return waves


@pytest.mark.slow
def test_strict_answers_over_several_versions_are_the_snapshots_answers(tmp_path, records):
    """Studies with two and three versions (some updated the same day), loaded newest first: which version a
    cutoff shows, and what it shows, as the snapshot's version map and rules decide."""
    rng = random.Random(11)
    chosen = rng.sample(records, 400)
    waves = _older_versions(chosen, rng)
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "now.ndjson", chosen)])
    for n, wave in enumerate(waves):
        load_paths(wh, [write_ndjson(tmp_path / f"older{n}.ndjson", wave)])
    with Mirror(wh.root) as m:
        counts = m.rows("SELECT count(*) AS versions, count(DISTINCT nct_id) AS studies FROM study_version")[0]
    assert counts["versions"] > counts["studies"] * 1.3
    cutoffs = random_cutoffs(seed=20261129, count=2, first=date(2005, 1, 1), years=21)
    assert _compare_with_snapshots(wh.root, tmp_path, cutoffs, seed=2) > 2 * 100


@pytest.mark.slow
def test_answering_at_any_cutoff_writes_nothing_and_old_snapshot_caches_are_swept(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:300])])

    def listing() -> dict[str, tuple[int, int]]:
        return {str(p.relative_to(wh.root)): (p.stat().st_size, p.stat().st_mtime_ns)
                for p in sorted(wh.root.rglob("*"))}

    before = listing()
    with Mirror(wh.root) as m:
        m.batch([("get_landscape", {"condition": "cancer", "date_before": cutoff})
                 for cutoff in random_cutoffs(seed=3, count=200, first=date(1995, 1, 1), years=31)])
    with Mirror(wh.root, as_of="2012-03-04") as pinned:
        pinned.get_trial(nct(records[0]))
    assert listing() == before
    (wh.root / "snapshots" / "000001-2019-06-01-strict-format3").mkdir(parents=True)  # an older version's cache
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", records[300:301])])
    assert not (wh.root / "snapshots").exists()


def _facts_after(node, cutoff: date, path: str = "", plan: bool = False, found=None) -> list[tuple[str, str]]:
    """Dates after the cutoff in a record that are not in a struct typed as a plan (ESTIMATED)."""
    found = [] if found is None else found
    if isinstance(node, dict):
        for key, value in node.items():
            _facts_after(value, cutoff, f"{path}.{key}" if path else key, node.get("type") == "ESTIMATED", found)
    elif isinstance(node, list):
        for item in node:
            _facts_after(item, cutoff, f"{path}[]", False, found)
    elif isinstance(node, str) and re.fullmatch(r"\d{4}-\d{2}(-\d{2})?(T[\d:]+)?", node) and not plan:
        day = node[:10] if len(node) >= 10 else f"{node}-01"
        if day[5:7] <= "12" and date.fromisoformat(day) > cutoff:
            found.append((path, node))
    return found


def _structs(node, path: str = "") -> dict[str, dict]:
    """Every typed date of a record (a DateStruct), by path."""
    found = {}
    if isinstance(node, dict):
        if isinstance(node.get("date"), str) and node.get("type") in ("ACTUAL", "ESTIMATED"):
            found[path] = node
        for key, value in node.items():
            found.update(_structs(value, f"{path}.{key}" if path else key))
    return found


@pytest.mark.slow  # every sample record on three surfaces, each at one of 20 cutoffs
def test_every_record_at_a_cutoff_withholds_what_was_recorded_later_on_every_surface(m, sample_warehouse,
                                                                                     records_by_id):
    """Every sample record, at one of 20 cutoffs at which it is shown, as the v2 API's pages and the methods' trials
    give it (and MCP's get_study, ten a cutoff): no date after the cutoff but in a plan, no ACTUAL fact after it
    relabelled a plan (each plan shown was a plan as stored), no ACTUAL enrollment in a reconstruction, no
    document uploaded after it; what was left out is listed (withheld), and whether the version shown is the
    cutoff's (as_of_exact)."""
    from ctmirror.server import v2
    from ctmirror.server.agent_tools import run_tool

    assert len(m.rows("SELECT nct_id FROM study_version")) == len(records_by_id)  # each study's record is stored
    rng = random.Random(44)
    cutoffs = sorted({*random_cutoffs(seed=44, count=20, first=date(2006, 1, 1), years=19), date(2026, 11, 1)})[-20:]
    shown_at: dict[str, list[date]] = {}
    for cutoff in cutoffs:
        for row in m.rows("SELECT nct_id FROM studies_as_of($d)", {"d": cutoff}):
            shown_at.setdefault(row["nct_id"], []).append(cutoff)
    checked: dict[date, list[str]] = {}
    for nct_id in sorted(shown_at):
        checked.setdefault(rng.choice(shown_at[nct_id]), []).append(nct_id)
    dated = m.rows("SELECT count(*) AS n FROM studies WHERE study_first_post_date IS NOT NULL")[0]["n"]
    assert len(shown_at) == dated > 1_700 and len(checked) == 20  # every study a cutoff can show
    reconstructed = withheld_seen = 0
    for cutoff, ids in checked.items():
        with Mirror(sample_warehouse, as_of=cutoff) as then:
            records, withheld, token = {}, {}, None
            while True:
                page, _ = v2.studies(then, {"filter.ids": ",".join(ids), "pageSize": "1000",
                                            **({"pageToken": token} if token else {})}, cutoff)
                for record in page["studies"]:
                    records[record["protocolSection"]["identificationModule"]["nctId"]] = record
                if not (token := page.get("nextPageToken")):
                    break
            assert sorted(records) == sorted(ids), cutoff
            trials = dict(zip(ids, then.batch([("get_trial", {"nct_id": nct_id}) for nct_id in ids])))
            for nct_id in rng.sample(ids, min(10, len(ids))):  # MCP's study: the same record, its lists capped
                tool = run_tool(then, "get_study", {"nct_id": nct_id, "max_list_items": 1000})
                assert tool["study"] == _first_items(records[nct_id], 1_000), (cutoff, nct_id)
                assert tool["as_of_exact"] == trials[nct_id].as_of_exact
                assert tool.get("reconstructed_from") == trials[nct_id].reconstructed_from
                withheld[nct_id] = tool["withheld"]
            for nct_id in ids:
                record, trial = records[nct_id], trials[nct_id]
                assert _facts_after(record, cutoff) == [], (cutoff, nct_id)
                stored = records_by_id[nct_id]
                stored_structs = _structs(stored)
                for path, struct in _structs(record).items():  # a plan shown was a plan as stored
                    assert stored_structs[path]["type"] == struct["type"], (cutoff, nct_id, path)
                enrollment = record["protocolSection"].get("designModule", {}).get("enrollmentInfo", {})
                if enrollment:  # shown as stored, never relabelled
                    assert enrollment == stored["protocolSection"]["designModule"]["enrollmentInfo"]
                if not trial.as_of_exact:
                    reconstructed += 1
                    assert enrollment.get("type") != "ACTUAL", (cutoff, nct_id)
                for path in withheld.get(nct_id, []):
                    withheld_seen += 1
                    assert path.startswith(("protocolSection", "resultsSection", "documentSection",
                                            "derivedSection", "annotationSection")), path
                _check_card(trial, record, cutoff)
    assert reconstructed > 300 and withheld_seen > 20


def _first_items(node, most: int):
    """A JSON value with each list cut to its first `most` items."""
    if isinstance(node, dict):
        return {key: _first_items(value, most) for key, value in node.items()}
    if isinstance(node, list):
        return [_first_items(item, most) for item in node[:most]]
    return node


def _check_card(trial, record: dict, cutoff: date) -> None:
    """A method's trial shows what the record at its cutoff shows, and leaves out what it names withheld."""
    status = record["protocolSection"]["statusModule"]
    enrollment = record["protocolSection"].get("designModule", {}).get("enrollmentInfo", {})
    where = (cutoff, trial.nct_id)
    assert trial.enrollment == enrollment.get("count"), where
    assert trial.start_date == status.get("startDateStruct", {}).get("date"), where
    assert trial.completion_date == status.get("primaryCompletionDateStruct", {}).get("date"), where
    assert trial.why_stopped == status.get("whyStopped"), where
    assert trial.as_of_exact or trial.reconstructed_from > cutoff.isoformat()  # the later version's date
    for field in trial.withheld:  # left out, as the record leaves it out (compared above)
        assert getattr(trial, field) is None, (*where, field)
    for field in ("start_date", "completion_date"):  # a date after the cutoff is a plan, or not shown
        value = getattr(trial, field)
        if value and first_day(value) > cutoff:
            struct = status["startDateStruct" if field == "start_date" else "primaryCompletionDateStruct"]
            assert struct.get("type") == "ESTIMATED", (*where, field)


# A Trial's field a cutoff may withhold → the record's path that holds it.
CARD_FIELD_PATHS = {"enrollment": "protocolSection.designModule.enrollmentInfo",
                    "start_date": "protocolSection.statusModule.startDateStruct",
                    "completion_date": "protocolSection.statusModule.primaryCompletionDateStruct",
                    "why_stopped": "protocolSection.statusModule.whyStopped"}


@pytest.mark.slow  # two lists of trials at 20 cutoffs
def test_listed_trials_withhold_what_was_recorded_later(m):
    """At 20 cutoffs, get_terminated's and search's trials leave empty what they name as withheld (get_trial's are
    compared with their records above)."""
    withheld_seen = 0
    for cutoff in random_cutoffs(seed=20, count=20, first=date(2006, 1, 1), years=19):
        for item in m.get_terminated("cancer", date_before=cutoff):
            assert "termination_date" not in item.withheld or item.termination_date is None
            assert "enrollment" not in item.withheld or item.enrollment is None
            withheld_seen += bool(item.withheld)
        for item in m.search(condition="cancer", date_before=cutoff, page_size=50).items:
            assert "enrollment" not in item.withheld or item.enrollment is None
            assert "primary_completion_date" not in item.withheld or item.primary_completion_date is None
            withheld_seen += bool(item.withheld)
    assert withheld_seen > 20


def first_day(text: str) -> date:
    return date.fromisoformat(text if len(text) == 10 else f"{text}-01")


@pytest.mark.slow  # every method on three mirrors
def test_exact_only_shows_no_reconstructed_study_and_holdout_exact_is_the_same(sample_warehouse):
    """Mirror(as_of=..., exact_only=True) (serve and mcp --exact-only) and holdout="exact": at a cutoff, only the
    studies whose version of that day the warehouse holds; a reconstructed one is not found."""
    from ctmirror.server import v2

    cutoff = date(2015, 1, 1)
    calls = [("search_trials", {"drug": "placebo", "condition": "cancer"}), ("get_landscape", {"condition": "cancer"}),
             ("get_terminated", {"query": "cancer"}),
             ("detect_whitespace", {"drug": "metformin", "condition": "diabetes"}),
             ("search", {"condition": "cancer", "page_size": 200}), ("stats_by_status", {"condition": "cancer"})]
    with Mirror(sample_warehouse, as_of=cutoff) as strict, \
            Mirror(sample_warehouse, as_of=cutoff, exact_only=True) as exact, Mirror(sample_warehouse) as now:
        reconstructed = [t.nct_id for t in strict.search_trials("placebo", "cancer") if not t.as_of_exact]
        assert reconstructed, "the sample has reconstructions at this cutoff"
        for nct_id in reconstructed:
            assert strict.get_trial(nct_id) is not None and exact.get_trial(nct_id) is None
            with pytest.raises(v2.V2Error):
                v2.study(exact, nct_id, {}, cutoff)
        for name, arguments in calls:
            shown = exact.call(name, **arguments)
            assert now.call(name, **arguments, date_before=cutoff, holdout="exact") == shown, name
        trials = exact.search_trials("placebo", "cancer")
        assert trials and all(t.as_of_exact for t in trials)
        assert {t.nct_id for t in trials} < {t.nct_id for t in strict.search_trials("placebo", "cancer")}
        assert exact.search(condition="cancer").pagination.total_count < \
            strict.search(condition="cancer").pagination.total_count
        assert exact.get_landscape("cancer").total_trial_count < strict.get_landscape("cancer").total_trial_count


def test_status_says_how_many_studies_a_cutoff_shows_exactly(sample_warehouse):
    from typer.testing import CliRunner

    from ctmirror.cli import app
    from ctmirror.read.status import warehouse_status

    cutoff = date(2015, 1, 1)
    with Mirror(sample_warehouse) as m:
        exact = warehouse_status(m, cutoff)["exact_at"]
        shown = m.rows("SELECT count(*) AS n FROM studies_as_of($d)", {"d": cutoff})[0]["n"]
    with Mirror(sample_warehouse, as_of=cutoff) as strict, \
            Mirror(sample_warehouse, as_of=cutoff, exact_only=True) as only_exact:
        reconstructed = [t for t in strict.search_trials("placebo", "cancer") if not t.as_of_exact]
        assert all(only_exact.get_trial(t.nct_id) is None for t in reconstructed)
    assert exact["studies"] == shown and 0 < exact["exact"] < shown
    assert exact["share_exact"] == round(exact["exact"] / shown, 4)
    done = CliRunner().invoke(app, ["-w", str(sample_warehouse), "status", "--as-of", cutoff.isoformat()])
    assert done.exit_code == 0 and f"{exact['exact']:,} of {shown:,} studies shown exactly" in done.stdout


def test_a_statistic_counts_the_reconstructions_among_the_trials_in_scope(sample_warehouse):
    cutoff = date(2015, 1, 1)
    with Mirror(sample_warehouse) as m:
        whole = m.stats_exactness(date_before=cutoff)[0]
        status = m.stats_by_status(date_before=cutoff)
        counted = m.rows("SELECT count(*) FILTER (WHERE as_of_exact) AS exact, count(*) AS n FROM trial_card "
                         "WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, $d, $d, "
                         "as_of_exact := as_of_exact)", {"d": cutoff})[0]
        assert whole["trials"] == sum(r["trials"] for r in status) == counted["n"]
        assert whole["exact"] == counted["exact"] and 0 < whole["reconstructed"] == counted["n"] - counted["exact"]
        assert whole["exact_share"] == round(whole["exact"] / whole["trials"], 4)
        assert m.stats_exactness()[0]["reconstructed"] == 0  # the current state is exact throughout
        assert m.stats_exactness(date_before=cutoff, holdout="exact")[0] == {
            "trials": whole["exact"], "exact": whole["exact"], "reconstructed": 0, "exact_share": 1.0}


def test_exact_answers_say_how_many_studies_they_left_out(sample_warehouse):
    cutoff = date(2015, 1, 1)
    with Mirror(sample_warehouse, as_of=cutoff) as strict, \
            Mirror(sample_warehouse, as_of=cutoff, exact_only=True) as exact:
        everything = strict.search(condition="cancer", page_size=5)
        only_exact = exact.search(condition="cancer", page_size=5)
        asked = strict.search(condition="cancer", page_size=5, holdout="exact")
        assert "left_out" not in everything.model_dump()["pagination"]
        left_out = everything.pagination.total_count - only_exact.pagination.total_count
        assert only_exact.pagination.left_out == asked.pagination.left_out == left_out > 0
        assert left_out == strict.stats_exactness(condition="cancer")[0]["reconstructed"]
        following = exact.search(condition="cancer", page_size=5, cursor=only_exact.pagination.cursor)
        assert following.pagination.left_out == left_out
        with pytest.raises(InvalidArgument, match="other parameters"):  # an exact cursor is not a strict one's
            strict.search(condition="cancer", page_size=5, cursor=only_exact.pagination.cursor)


@pytest.mark.slow  # a server on a loopback port, and the CLI
def test_every_exact_answer_says_how_many_studies_it_left_out(sample_warehouse):
    """Trials (of all a strict call ranks, not only those shown), whitespace's and a landscape's trials, a
    statistic's scope: what the strict answer shows reconstructed is what the exact answer leaves out, on every
    surface; a strict answer says nothing."""
    from test_serve import LoopbackServer
    from typer.testing import CliRunner

    from ctmirror.cli import app
    from ctmirror.server.agent_tools import run_tool
    from ctmirror.server.app import Settings

    cutoff = date(2015, 1, 1)
    with Mirror(sample_warehouse, as_of=cutoff) as strict, \
            Mirror(sample_warehouse, as_of=cutoff, exact_only=True) as exact:
        for name, arguments in [("search_trials", {"drug": "placebo", "condition": "cancer"}),
                                ("get_terminated", {"query": "cancer"})]:
            whole = strict.call(name, **arguments, max_results=10_000)
            few = exact.call(name, **arguments, max_results=2)
            assert 1 <= len(few) <= 2 and all(t.as_of_exact for t in few)
            assert few.left_out == sum(not t.as_of_exact for t in whole) > 0, name
            assert getattr(strict.call(name, **arguments), "left_out", None) is None
        pair = {"drug": "metformin", "condition": "diabetes"}
        counts = ("exact_match_count", "drug_only_trials", "condition_only_trials")
        assert exact.detect_whitespace(**pair).left_out == \
            sum(getattr(strict.detect_whitespace(**pair), c) - getattr(exact.detect_whitespace(**pair), c)
                for c in counts) > 0
        landscape = exact.get_landscape("cancer")
        assert landscape.left_out == strict.get_landscape("cancer").total_trial_count - landscape.total_trial_count > 0
        assert "left_out" not in strict.get_landscape("cancer").model_dump()
        listed = [*strict.get_landscape("cancer").recent_starts,
                  *strict.detect_whitespace("xyz", "cancer").condition_drugs]
        assert any(not r.as_of_exact for r in listed), "their reconstructions name the version they were made from"
        assert all((r.reconstructed_from is not None) == (not r.as_of_exact) for r in listed)
        rows = exact.stats_by_phase(condition="cancer")
        assert rows.left_out == strict.stats_exactness(condition="cancer")[0]["reconstructed"] > 0
        assert strict.batch([("get_terminated", {"query": "cancer", "holdout": "exact"})])[0].left_out == \
            exact.get_terminated("cancer").left_out
        # the surfaces: MCP's structured answer, the methods' HTTP header, the CLI's line (stderr beside --json)
        tool = run_tool(exact, "get_terminated", {"query": "cancer"})
        assert tool["left_out"] == exact.get_terminated("cancer").left_out
        assert run_tool(exact, "get_landscape", {"condition": "cancer"})["left_out"] == landscape.left_out
    with LoopbackServer(Settings(sample_warehouse, as_of=cutoff, exact_only=True)) as client:
        response = client.get("/ctmirror/v1/get_terminated", params={"query": "cancer"})
        assert response.status_code == 200 and response.headers["x-ctmirror-left-out"] == str(tool["left_out"])
    done = CliRunner().invoke(app, ["-w", str(sample_warehouse), "terminated", "cancer", "--as-of", "2015-01-01",
                                    "--holdout", "exact", "--json"])
    assert done.exit_code == 0 and len(json.loads(done.stdout)) > 0
    assert f"{tool['left_out']} left out" in done.stderr
