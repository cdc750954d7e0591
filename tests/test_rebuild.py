"""`ctmirror rebuild`: raw/ alone regenerates the same tables."""

from __future__ import annotations

import copy
import json

import polars as pl
import pytest
from conftest import DATA, write_ndjson

from ctmirror import Mirror
from ctmirror.core.warehouse import DEFAULT_KEEP_STATES, Warehouse
from ingest.loader import load_paths, rebuild
from ingest.normalize import normalised_tables

pytestmark = pytest.mark.slow  # rebuilds warehouses of its own

CURRENT_TABLES = [t for t in normalised_tables() if t != "study_versions"]


def snapshot_tables(root) -> dict[str, pl.DataFrame]:
    with Mirror(root) as m:
        tables = {t: m.sql(f"SELECT * FROM {t} ORDER BY ALL") for t in CURRENT_TABLES}
        tables["study_versions"] = m.sql("SELECT * FROM study_versions ORDER BY nct_id, content_hash")
        tables["quarantine"] = m.sql("SELECT * FROM quarantine ORDER BY ALL")
    return tables


def test_rebuild_reproduces_every_table(tmp_path, records_by_id, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:300])])
    changed = copy.deepcopy(records_by_id[records[5]["protocolSection"]["identificationModule"]["nctId"]])
    changed["protocolSection"]["identificationModule"]["briefTitle"] += " (amended)"
    (tmp_path / "broken.ndjson").write_text('{"protocolSection": {"identificationModule": {}}}\n')
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", [changed]), tmp_path / "broken.ndjson",
                    DATA / "bulk" / "ctg-studies-erectile-dysfunction.json.zip"])
    before = snapshot_tables(wh.root)
    assert before["quarantine"].height == 1 and before["study_versions"].height == 300 + 1 + 635
    rebuild(wh)
    assert wh.current_state().meta["index"] == {"built": "whole"}  # a new generation: never a patch
    after = snapshot_tables(wh.root)
    assert before.keys() == after.keys()
    for table, frame in before.items():
        assert frame.equals(after[table]), table
        assert frame.height > 0 or table == "nct_aliases"


def test_readers_of_the_old_state_keep_working_through_a_rebuild(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])])
    reader = Mirror(wh.root)
    rebuild(wh)
    assert reader.sql("SELECT count(*) AS n FROM study_versions")["n"][0] == 10
    reader.close()
    with Mirror(wh.root) as m:
        assert m.state_id != reader.state_id


def test_segments_from_an_older_version_ask_for_a_rebuild_which_fixes_them(tmp_path, records):
    from ctmirror.core.errors import WarehouseError
    from ingest.publish import publish

    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])])
    wh.segments()[0].table_file("study_details").unlink()  # as if written before that table existed
    with pytest.raises(WarehouseError, match="older ctmirror: it has no study_details") as caught:
        with wh.writing():
            publish(wh, run={"run_id": "x"})
    assert "ctmirror rebuild" in caught.value.hint
    rebuild(wh)
    with Mirror(wh.root) as m:
        assert m.get_trial_details(records[0]["protocolSection"]["identificationModule"]["nctId"]) is not None


def rebuilt_after_refusal(tmp_path, records, meta_key: str, older: int | None, refusal: str) -> Warehouse:
    """A warehouse of ten records whose segment says meta_key was `older` (None: not recorded, as before the key
    existed): its publish is refused naming `refusal` and asking for a rebuild; the rebuild has run."""
    from ctmirror.core.errors import WarehouseError
    from ingest.publish import publish

    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])])
    meta_file = wh.segments()[0].path / "segment.json"
    meta = {k: v for k, v in json.loads(meta_file.read_text()).items() if k != meta_key}
    meta_file.write_text(json.dumps(meta if older is None else {**meta, meta_key: older}))
    with pytest.raises(WarehouseError, match=refusal) as caught:
        with wh.writing():
            publish(wh, run={"run_id": "x"})
    assert "ctmirror rebuild" in caught.value.hint
    rebuild(wh)
    return wh


def test_segments_normalised_before_possessives_joined_their_words_ask_for_a_rebuild(tmp_path, records):
    """A segment whose search texts split "Alzheimer's" in two (word_boundaries 2, before 2026-11-29) is refused by
    name; the rebuild normalises its texts as queries now are."""
    wh = rebuilt_after_refusal(tmp_path, records, "word_boundaries", 2, "possessives joined to their words")
    assert json.loads((wh.segments()[0].path / "segment.json").read_text())["word_boundaries"] == 3


def test_segments_without_basicsearchs_sponsor_and_outcome_texts_ask_for_a_rebuild(tmp_path, records):
    """A segment normalised before search_terms held the lead sponsor, collaborators, outcome measures and
    intervention descriptions (no search_term_areas, before 2026-11-30) is refused by name; the rebuild adds them."""
    wh = rebuilt_after_refusal(tmp_path, records, "search_term_areas", None,
                               "lead sponsor, collaborators, outcome measures")
    assert json.loads((wh.segments()[0].path / "segment.json").read_text())["search_term_areas"] == 3
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) FROM search_terms WHERE area = 'LeadSponsorName'").item() == \
            m.sql("SELECT count(lead_sponsor) FROM studies").item() > 0


def test_segments_without_the_enumerations_words_ask_for_a_rebuild(tmp_path, records):
    """A segment normalised before search_terms held the enumerations' words, officials and contacts
    (search_term_areas 2) is refused by name; the rebuild adds them."""
    wh = rebuilt_after_refusal(tmp_path, records, "search_term_areas", 2, "enumerations")
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(DISTINCT nct_id) FROM search_terms WHERE area = 'StudyType'").item() == \
            m.sql("SELECT count(study_type) FROM studies").item() > 0


def test_segments_without_the_submission_dates_ask_for_a_rebuild(tmp_path, records):
    """A segment normalised before `studies` had the record's submission dates (2026-11-29) is refused by name."""
    import pyarrow.parquet as pq

    from ctmirror.core.errors import WarehouseError
    from ingest.publish import publish

    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])])
    studies = wh.segments()[0].table_file("studies")
    pq.write_table(pq.read_table(studies).drop_columns(["last_update_submit_date"]), studies)
    with pytest.raises(WarehouseError, match="no studies.last_update_submit_date") as caught:
        with wh.writing():
            publish(wh, run={"run_id": "x"})
    assert "ctmirror rebuild" in caught.value.hint


def test_a_killed_or_failed_rebuild_leaves_no_generation_behind(tmp_path, records):
    """A rebuild writes a new generation of segments beside the old one: killed before it is adopted, the next
    writer removes it (the disk back: it is a copy of every segment); the answers stay the old state's."""
    import os
    import subprocess
    import sys

    root = tmp_path / "w"
    load_paths(Warehouse(root), [write_ndjson(tmp_path / "a.ndjson", records[:200])])
    before = snapshot_tables(root)
    killed = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-q", "-w", str(root), "rebuild"],
                            env={**os.environ, "CTMIRROR_CRASH_AT": "state_tables_written:1"}, capture_output=True)
    assert killed.returncode < 0  # SIGKILL
    assert sorted(p.name for p in (root / "segments").glob("g*")) == ["g0001", "g0002"]
    load_paths(Warehouse(root), [write_ndjson(tmp_path / "b.ndjson", records[:200])])  # the next writer
    assert sorted(p.name for p in (root / "segments").glob("g*")) == ["g0001"]
    after = snapshot_tables(root)
    for table, frame in before.items():
        assert frame.equals(after[table]), table


def test_a_state_a_reader_has_open_stays_with_its_generation_and_goes_once_it_is_closed(tmp_path, records):
    """A publish keeps the current state alone, and besides it any state a reader has open (its lease): a state
    from before a rebuild still reads the old generation of segments, which stays with it and goes with it."""
    wh = Warehouse(tmp_path / "w")
    count = "SELECT count(*) AS n FROM studies"
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:10])])
    generations = lambda: sorted(p.name for p in (wh.root / "segments").glob("g*"))  # noqa: E731
    states = lambda: [s.state_id for s in wh.states()]  # noqa: E731
    with Mirror(wh.root) as reader:  # state 000001, which reads g0001
        rebuild(wh)
        load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", records[10:20])])
        assert states() == ["000001", "000003"]  # 000002, which no reader had open, is gone
        assert generations() == ["g0001", "g0002"]
        assert reader.sql(count)["n"][0] == 10
    assert DEFAULT_KEEP_STATES == 1
    load_paths(wh, [write_ndjson(tmp_path / "c.ndjson", records[20:30])])
    assert states() == ["000004"] and generations() == ["g0002"]
    with Mirror(wh.root) as m:
        assert m.sql(count)["n"][0] == 30
