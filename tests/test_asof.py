"""Leakage-safe "as of" answers, frozen snapshots, pinning, history and batches, on the real sample."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from datetime import date, timedelta

import pytest
from conftest import nct, write_ndjson
from fake_api import FakeApiServer, FakeRegistry

from ctmirror import InvalidArgument, Mirror, answers
from ctmirror.core.errors import StateNotFound, TerminalHarvestError
from ctmirror.core.warehouse import Warehouse
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
def m(sample_warehouse):
    with Mirror(sample_warehouse) as mirror:
        yield mirror


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


def test_a_study_first_posted_after_the_cutoff_appears_nowhere(m, records):
    record = max((r for r in records if day(r, "studyFirstPostDateStruct")), key=lambda r: day(r, "studyFirstPostDateStruct"))
    cutoff = date.fromisoformat(day(record, "studyFirstPostDateStruct")) - timedelta(days=1)
    condition = record["protocolSection"]["conditionsModule"]["conditions"][0]
    with Mirror(m.warehouse.root, as_of=cutoff) as then:
        assert then.get_trial(nct(record)) is None
        assert nct(record) not in {r["nct_id"] for r in then.rows("SELECT nct_id FROM studies")}
        assert nct(record) not in {i.nct_id for i in then.search(condition=condition, page_size=200).items}


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
    """Property test over the whole sample, for random cutoffs."""
    for cutoff in random_cutoffs(seed=20261125, count=5, first=date(2005, 1, 1), years=21):
        then = m.snapshot_at(cutoff)
        leaks = then.rows(read_leak_query(), {"cutoff": cutoff})[0]
        assert leaks == {k: 0 for k in leaks}, (cutoff, leaks)
        assert then.rows("SELECT count(*) AS n FROM studies")[0]["n"] > 0


def read_leak_query() -> str:
    return """
    SELECT
        count(*) FILTER (WHERE study_first_post_date > $cutoff) AS posted_later,
        count(*) FILTER (WHERE overall_status IN ('COMPLETED', 'TERMINATED', 'WITHDRAWN', 'SUSPENDED')
                         AND coalesce(primary_completion_date, completion_date, last_update_post_date) > $cutoff
                         AND NOT as_of_exact) AS terminal_later,
        count(*) FILTER (WHERE why_stopped IS NOT NULL AND overall_status NOT IN ('TERMINATED', 'WITHDRAWN', 'SUSPENDED')
                         AND NOT as_of_exact) AS reason_without_status,
        count(*) FILTER (WHERE has_results AND coalesce(results_first_post_date > $cutoff, NOT as_of_exact))
            AS results_later,
        count(*) FILTER (WHERE (start_date > $cutoff AND start_date_type = 'ACTUAL')
                         OR (primary_completion_date > $cutoff AND primary_completion_date_type = 'ACTUAL')
                         OR (completion_date > $cutoff AND completion_date_type = 'ACTUAL')
                         OR (results_first_post_date > $cutoff)
                         OR (last_update_post_date > $cutoff)) AS dates_later,
        count(*) FILTER (WHERE enrollment_type = 'ACTUAL' AND NOT as_of_exact) AS actual_enrollment_later,
        (SELECT count(*) FROM study_references JOIN studies USING (nct_id) WHERE NOT as_of_exact) AS references_later
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


@pytest.mark.slow
def test_pinning_past_states(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    first = load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])]).state.state_id
    subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(wh.root), "pin", first], check=True, timeout=60)
    for n in range(6):
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
def test_unknown_is_derived_at_the_cutoff_not_leaked_from_today(m, records_by_id):
    """NCT03475563 is UNKNOWN today (last known RECRUITING, verified 2019-11, last updated 2019-11-27): the registry
    derived UNKNOWN later, without a new version. Shortly after its last update it was RECRUITING; more than two
    years after its verification, UNKNOWN."""
    status = records_by_id["NCT03475563"]["protocolSection"]["statusModule"]
    assert (status["overallStatus"], status["lastKnownStatus"], status["statusVerifiedDate"]) == \
        ("UNKNOWN", "RECRUITING", "2019-11")
    with Mirror(m.warehouse.root, as_of=date(2020, 6, 1)) as then:
        trial = then.get_trial("NCT03475563")
        assert (trial.overall_status, trial.as_of_exact) == ("RECRUITING", True)
        assert then.sql("SELECT last_known_status FROM studies WHERE nct_id = 'NCT03475563'")[
            "last_known_status"][0] is None
    with Mirror(m.warehouse.root, as_of=date(2022, 1, 1)) as later:
        assert later.get_trial("NCT03475563").overall_status == "UNKNOWN"
        assert later.sql("SELECT last_known_status FROM studies WHERE nct_id = 'NCT03475563'")[
            "last_known_status"][0] == "RECRUITING"


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
    for cutoff, expected in ((date(2016, 12, 31), "RECRUITING"), (date(2017, 2, 1), "UNKNOWN")):
        with Mirror(wh.root, as_of=cutoff) as then:
            assert then.get_trial(nct(record)).overall_status == expected, cutoff


@pytest.mark.slow
def test_no_unknown_within_two_years_of_the_last_verification_at_any_cutoff(m):
    for cutoff in random_cutoffs(seed=20261127, count=20, first=date(2008, 1, 1), years=18):
        then = m.snapshot_at(cutoff)
        early = then.rows("""
            SELECT count(*) AS n FROM studies AS s JOIN study_versions AS v USING (nct_id, content_hash)
            WHERE s.overall_status = 'UNKNOWN' AND partial_date(json_extract_string(
                v.raw, '$.protocolSection.statusModule.statusVerifiedDate')) >= $cutoff::DATE - INTERVAL 2 YEAR""",
                          {"cutoff": cutoff})[0]["n"]
        assert early == 0, cutoff


@pytest.mark.slow
def test_snapshots_of_pruned_states_are_swept(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:30])])
    with Mirror(wh.root) as m:
        m.get_landscape("cancer", date_before="2019-06-01")  # builds the strict snapshot of state 000001
    cached = sorted(p.name for p in (wh.root / "snapshots").iterdir())
    assert cached and all(name.startswith("000001-") for name in cached)
    (wh.root / "snapshots" / "000002-2019-06-01-strict-format1").mkdir()  # an older version's format
    for n in range(5):  # five more states: 000001 is pruned (five are kept)
        load_paths(wh, [write_ndjson(tmp_path / f"{n}.ndjson", records[30 + n:31 + n])])
    assert "000001" not in {s.state_id for s in wh.states()}
    assert list((wh.root / "snapshots").iterdir()) == []
