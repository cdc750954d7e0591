"""No record can block the mirror: hostile records are quarantined with their reason (or loaded, when they are
a study after all), and every later load succeeds with every earlier good study still answering."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import nct
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctmirror import Mirror
from ctmirror.core.duck import MEMORY_LIMIT_ENV
from ctmirror.core.warehouse import Warehouse
from ingest.loader import NothingLoaded, load_paths

pytestmark = pytest.mark.slow  # loads hostile records into warehouses of its own

ID_PATH = ("protocolSection", "identificationModule", "nctId")
DATE_PATH = ("protocolSection", "statusModule", "startDateStruct", "date")


def _set(record: dict, path: tuple[str, ...], value: object) -> dict:
    record = copy.deepcopy(record)
    node = record
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return record


def _text(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False)


def _nested(base: dict, depth: int, opener: str) -> str:
    closer = {"[": "]", '{"a":': "}"}[opener]
    return _text(base)[:-1] + ', "extra": ' + opener * depth + "1" + closer * depth + "}"


def _hostile(base: dict, kind: str, number: int, word: str) -> str:
    """One hostile variant of a real record, as the text of an NDJSON line."""
    nct_id = nct(base)
    if kind == "deep":
        return _nested(base, 1_000 + number * 37, "[" if number % 2 else '{"a":')
    if kind == "unicode_digits":
        digits = "٠١٢٣٤٥٦٧٨٩" if number % 2 else "０１２３４５６７８９"
        return _text(_set(base, ID_PATH, "NCT" + "".join(digits[int(d)] for d in nct_id[3:])))
    if kind == "id_with_space":
        return _text(_set(base, ID_PATH, nct_id + ["\n", " ", "\u00a0", "\u2028", "\t"][number % 5]))
    if kind == "control_characters":
        return _text(_set(base, ("protocolSection", "identificationModule", "briefTitle"),
                          word + "".join(chr(c % 32) for c in range(number, number + 8))))
    if kind == "duplicate_key":
        return _text(base)[:-1] + f', "protocolSection": {{"identificationModule": {{"nctId": "{nct_id}"}}}}}}'
    if kind == "wrong_type":
        return _text(_set(base, ("protocolSection", "designModule", "enrollmentInfo", "count"),
                          [word, True, 1.5, {"n": 1}, -number - 1][number % 5]))
    if kind == "impossible_date":
        return _text(_set(base, DATE_PATH, ["2023-02-30", "2023-02-29", "0000-01-01", "2019-04-31",
                                            f"{number:04d}-13-01", word][number % 6]))
    if kind == "huge":
        return _text(_set(base, ("protocolSection", "descriptionModule", "detailedDescription"),
                          word * ((40 << 20) // max(1, len(word)))))
    if kind == "truncated":
        text = _text(base)
        return text[: max(1, number % len(text))]
    raise AssertionError(kind)


KINDS = ["deep", "unicode_digits", "id_with_space", "control_characters", "duplicate_key", "wrong_type",
         "impossible_date", "huge", "truncated"]


@pytest.fixture(scope="module")
def hostile_warehouse(tmp_path_factory, records):
    root = tmp_path_factory.mktemp("hostile") / "w"
    wh = Warehouse(root)
    good = tmp_path_factory.mktemp("hostile_input") / "good.ndjson"
    good.write_text("".join(_text(r) + "\n" for r in records[:10]))
    load_paths(wh, [good])
    return wh, {"loaded": [nct(r) for r in records[:10]], "next": 10}


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(KINDS), number=st.integers(0, 10_000), word=st.text(min_size=1, max_size=12))
def test_after_any_hostile_record_a_good_load_succeeds_and_earlier_studies_answer(
        hostile_warehouse, records, tmp_path_factory, kind, number, word):
    wh, seen = hostile_warehouse
    base = records[100 + number % 500]
    folder = tmp_path_factory.mktemp("case")
    (folder / "hostile.ndjson").write_text(_hostile(base, kind, number, word) + "\n", encoding="utf-8")
    try:
        load_paths(wh, [folder / "hostile.ndjson"])
    except NothingLoaded:
        pass  # quarantined, with its reason: checked below
    good = records[seen["next"]]
    seen["next"] += 1
    (folder / "good.ndjson").write_text(_text(good) + "\n", encoding="utf-8")
    result = load_paths(wh, [folder / "good.ndjson"])
    assert result.counts.versions_added == 1 and result.published
    seen["loaded"].append(nct(good))
    with Mirror(wh.root) as m:
        found = {row["nct_id"] for row in m.rows("SELECT nct_id FROM studies WHERE nct_id IN $ids",
                                                 {"ids": seen["loaded"]})}
        assert found == set(seen["loaded"])
        ids = m.rows("SELECT nct_id FROM studies WHERE NOT regexp_full_match(nct_id, 'NCT[0-9]{8}')")
        assert ids == []
        reasons = m.rows("SELECT reason FROM quarantine WHERE reason IS NULL OR reason = ''")
        assert reasons == []
        assert m.get_trial(nct(good)) is not None


@pytest.mark.parametrize("kind, reason", [
    ("deep", "nested more than 1,000 levels deep"),
    ("unicode_digits", "is not NCT and exactly 8 ASCII digits"),
    ("id_with_space", "is not NCT and exactly 8 ASCII digits"),
    ("impossible_date", "is not a date"),
    ("huge", "over the limit of"),
    ("duplicate_key", "names the key 'protocolSection' twice in one object"),
])
def test_each_hostile_kind_is_quarantined_with_its_reason(tmp_path, monkeypatch, records, kind, reason):
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "1GB")  # a record of 40 MB is over a 1 GB budget's share
    wh = Warehouse(tmp_path / "w")
    lines = [_hostile(records[200], kind, 0, "word"), _text(records[201])]
    (tmp_path / "in.ndjson").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = load_paths(wh, [tmp_path / "in.ndjson"])
    assert (result.counts.versions_added, result.counts.quarantined) == (1, 1)
    assert reason in result.counts.problems[0]
    with Mirror(wh.root) as m:
        [row] = m.rows("SELECT nct_id, reason, length(record_text) AS n FROM quarantine")
    assert reason in row["reason"]
    assert row["n"] <= (1 << 20) + 16  # a huge record's text is cut in quarantine; raw/ keeps it whole


def test_a_key_named_twice_is_read_as_written_from_the_registrys_own_sources_alone(tmp_path, records):
    """The bulk archive and the sample are the registry's records as it wrote them (each key once): not parsed again
    for a duplicate key, which a file given to `load` is (above)."""
    wh = Warehouse(tmp_path / "w")
    (tmp_path / "in.ndjson").write_text(_hostile(records[300], "duplicate_key", 0, "word") + "\n", encoding="utf-8")
    result = load_paths(wh, [tmp_path / "in.ndjson"], source="bulk")
    assert (result.counts.versions_added, result.counts.quarantined) == (1, 0)
