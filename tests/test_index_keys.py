"""The index's keys are made from what they number, so a study's rows keep them from one state to the next, even
where a catalog is built whole: what lets a publish replace the changed studies' rows of the previous catalog
rather than renumber every row (tests/test_catalog_patch.py)."""

from __future__ import annotations

import copy

import pytest
from conftest import nct, write_ndjson

from ctmirror import Mirror
from ctmirror.core.warehouse import Warehouse
from ingest.loader import load_paths

KEYS = {
    "study_number": "SELECT nct_id, study_no FROM study_number",
    "study_version": "SELECT nct_id, content_hash, version_no FROM study_version",
    "trial_card": "SELECT nct_id, content_hash, card_no, version_no, valid_from, valid_to, is_current, shown_key "
                  "FROM trial_card",
}


def keys_of(root, table: str) -> set[tuple]:
    with Mirror(root) as m:
        return {tuple(row.values()) for row in m.rows(KEYS[table])}


@pytest.mark.slow
def test_a_publish_keeps_the_keys_of_every_study_it_did_not_change(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    first, added = records[:300:2], records[1:80:2]  # the added studies' NCT IDs fall between the first's
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", first)])
    before = {table: keys_of(wh.root, table) for table in KEYS}
    changed = copy.deepcopy(first[5])
    changed["protocolSection"]["identificationModule"]["briefTitle"] += " (amended)"
    changed["protocolSection"]["statusModule"]["lastUpdatePostDateStruct"] = {"date": "2026-11-01", "type": "ACTUAL"}
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", [changed, *added])])
    after = {table: keys_of(wh.root, table) for table in KEYS}

    assert all(study_no == int(nct_id[3:]) for nct_id, study_no in after["study_number"])
    assert len(after["study_number"]) == len(first) + len(added)
    assert before["study_number"] < after["study_number"]
    assert before["study_version"] < after["study_version"]  # the changed study's old version too
    unchanged = {row for row in before["trial_card"] if row[0] != nct(changed)}
    assert unchanged < after["trial_card"]
    assert len(unchanged) < len(before["trial_card"])  # the changed study's current row is no longer current
    versions = sorted(after["study_version"], key=lambda row: row[2])
    assert [row[0] for row in versions] == sorted(row[0] for row in versions)  # numbers order as NCT IDs do
    cards = sorted(after["trial_card"], key=lambda row: row[2])
    assert [row[3] for row in cards] == sorted(row[3] for row in cards)  # and card numbers as versions do
