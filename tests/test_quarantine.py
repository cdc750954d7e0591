"""Bad input: every malformed record lands in quarantine with a specific reason; nothing is lost."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import write_ndjson

from ctmirror import InputError, Mirror
from ctmirror.core.warehouse import Warehouse
from ingest.loader import NothingLoaded, load_paths

pytestmark = pytest.mark.slow  # each test loads a warehouse of its own


def quarantine_rows(root) -> list[dict]:
    with Mirror(root) as m:
        return m.rows("SELECT origin, locator, nct_id, reason, record_text FROM quarantine "
                      "ORDER BY receipt_id, locator")


@pytest.fixture
def loaded(tmp_path, records):
    """A warehouse already holding 20 real studies, which no bad input may disturb."""
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "good.ndjson", records[:20])])
    return wh


def load_only_bad(wh: Warehouse, paths: list) -> object:
    """A load whose every record is bad: an error, with the records quarantined and published all the same."""
    with pytest.raises(NothingLoaded, match="were quarantined") as caught:
        load_paths(wh, paths)
    return caught.value.counts


def assert_good_studies_kept(wh: Warehouse, expected: int = 20) -> None:
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) AS n FROM studies")["n"][0] == expected


def test_truncated_line_is_quarantined_and_the_rest_loads(tmp_path, loaded, records):
    good = [json.dumps(r) for r in records[20:23]]
    truncated = json.dumps(records[23])[:500]
    (tmp_path / "mixed.ndjson").write_text("\n".join([good[0], truncated, good[1], good[2]]) + "\n")
    result = load_paths(loaded, [tmp_path / "mixed.ndjson"])
    assert (result.counts.versions_added, result.counts.quarantined) == (3, 1)
    [row] = quarantine_rows(loaded.root)
    assert row["locator"] == "line 2"
    assert row["reason"].startswith("truncated JSON")
    assert row["record_text"] == truncated
    assert_good_studies_kept(loaded, 23)


def test_a_quarantined_record_is_not_counted_unchanged(tmp_path, loaded, records):
    (tmp_path / "again.ndjson").write_text("\n".join([json.dumps(records[0]), "{broken"]) + "\n")
    result = load_paths(loaded, [tmp_path / "again.ndjson"])
    counts = result.counts
    assert (counts.records, counts.versions_added, counts.unchanged, counts.quarantined) == (2, 0, 1, 1)
    with Mirror(loaded.root) as m:
        [run] = m.rows("SELECT records, unchanged, quarantined FROM sync_runs WHERE origin LIKE '%again.ndjson'")
    assert run == {"records": 2, "unchanged": 1, "quarantined": 1}


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda r: r["protocolSection"]["identificationModule"].pop("nctId"),
         "missing protocolSection.identificationModule.nctId"),
        (lambda r: r["protocolSection"]["identificationModule"].__setitem__("nctId", "NCT123"),
         "protocolSection.identificationModule.nctId: 'NCT123' is not NCT and exactly 8 ASCII digits"),
        (lambda r: r["protocolSection"].__setitem__("conditionsModule", ["Asthma"]),
         "protocolSection.conditionsModule: expected an object, got a list (['Asthma'])"),
        (lambda r: r["protocolSection"]["designModule"]["enrollmentInfo"].__setitem__("count", "31"),
         "protocolSection.designModule.enrollmentInfo.count: expected a whole number, got a string ('31')"),
        (lambda r: r["protocolSection"]["designModule"].__setitem__("phases", ["PHASE1", "PHASE5"]),
         "protocolSection.designModule.phases[1]: unknown value 'PHASE5' (expected one of EARLY_PHASE1, NA, "
         "PHASE1, PHASE2, PHASE3, PHASE4)"),
        (lambda r: r["protocolSection"]["statusModule"]["startDateStruct"].__setitem__("date", "2019-13"),
         "protocolSection.statusModule.startDateStruct.date: '2019-13' is not a date (expected yyyy, "
         "yyyy-MM or yyyy-MM-dd, a real day of a year from 1800 to 2199)"),
    ],
    ids=["no-nct-id", "bad-nct-id", "list-for-object", "wrong-type", "unknown-enum", "bad-date"],
)
def test_schema_violations_are_quarantined_with_the_field_named(tmp_path, loaded, records_by_id, mutate, reason):
    bad = copy.deepcopy(records_by_id["NCT00711542"])
    mutate(bad)
    counts = load_only_bad(loaded, [write_ndjson(tmp_path / "bad.ndjson", [bad])])
    assert counts.quarantined == 1
    [row] = quarantine_rows(loaded.root)
    assert row["reason"] == reason
    assert json.loads(row["record_text"]) == bad  # nothing of the record is lost
    assert_good_studies_kept(loaded)


def test_non_json_file(tmp_path, loaded):
    (tmp_path / "notes.txt").write_text("nctId,title\nNCT00000001,something\n")
    counts = load_only_bad(loaded, [tmp_path / "notes.txt"])
    [row] = quarantine_rows(loaded.root)
    assert counts.quarantined == 1
    assert row["reason"].startswith("not valid JSON") and row["origin"].endswith("notes.txt")
    assert_good_studies_kept(loaded)


def test_non_utf8_line(tmp_path, loaded, records):
    line = json.dumps(records[30], ensure_ascii=False).encode("utf-8").replace(b"Study", b"St\xffudy", 1)
    assert b"\xff" in line
    (tmp_path / "latin.ndjson").write_bytes(json.dumps(records[31]).encode() + b"\n" + line + b"\n")
    result = load_paths(loaded, [tmp_path / "latin.ndjson"])
    assert (result.counts.versions_added, result.counts.quarantined) == (1, 1)
    [row] = quarantine_rows(loaded.root)
    assert row["locator"] == "line 2" and row["reason"].startswith("not UTF-8: invalid byte at offset")
    assert "\\xff" in row["record_text"]


def test_empty_file(tmp_path, loaded):
    (tmp_path / "empty.ndjson").write_bytes(b"")
    counts = load_only_bad(loaded, [tmp_path / "empty.ndjson"])
    [row] = quarantine_rows(loaded.root)
    assert counts.quarantined == 1 and row["reason"] == "empty file: no records"
    assert_good_studies_kept(loaded)


def test_a_3mb_study_loads_whole(tmp_path, records_by_id):
    big = copy.deepcopy(records_by_id["NCT00711542"])
    paragraph = big["protocolSection"]["descriptionModule"]["briefSummary"] + "\n\n"
    big["protocolSection"]["descriptionModule"]["detailedDescription"] = paragraph * (3_000_000 // len(paragraph))
    wh = Warehouse(tmp_path / "w")
    result = load_paths(wh, [write_ndjson(tmp_path / "big.ndjson", [big])])
    assert result.counts.versions_added == 1
    with Mirror(wh.root) as m:
        length = m.sql("SELECT length(detailed_description) AS n FROM studies")["n"][0]
    assert length >= 2_900_000


def test_a_missing_path_is_a_clear_error_and_nothing_is_received(tmp_path, loaded, records):
    good = write_ndjson(tmp_path / "more.ndjson", records[40:41])
    with pytest.raises(InputError, match=r"nope\.ndjson: no such file or folder"):
        load_paths(loaded, [good, tmp_path / "nope.ndjson"])
    manifest = (loaded.root / "raw" / "manifest.ndjson").read_text().splitlines()
    assert len(manifest) == 1
    assert_good_studies_kept(loaded)


def test_a_page_whose_studies_is_not_a_list(tmp_path, loaded):
    (tmp_path / "page.json").write_text(json.dumps({"studies": {"NCT1": {}}, "totalCount": 1}))
    load_only_bad(loaded, [tmp_path / "page.json"])
    [row] = quarantine_rows(loaded.root)
    assert row["reason"] == "page response: 'studies' is dict, expected a list"
