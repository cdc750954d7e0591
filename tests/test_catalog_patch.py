"""A publish that changed few studies patches the previous state's catalog: the same tables and answers as a
catalog built whole (ctmirror republish), for new, changed and removed studies, in the time of the changes."""

from __future__ import annotations

import copy
import json
import re
import shutil
from datetime import date, timedelta

import duckdb
import pytest
from conftest import nct, write_ndjson

from ctmirror import Mirror
from ctmirror.core.sqlfiles import read_sql, sql_files
from ctmirror.core.warehouse import CURRENT_ROWS_FILE, Warehouse
from ingest.catalog import NEW_VERSION_INPUTS, PATCHED_BY_NEW_VERSION
from ingest.loader import load_paths, republish
from ingest.normalize import normalised_tables
from ingest.publish import current_tables

pytestmark = pytest.mark.slow  # publishes warehouses of its own

# Columns holding search_text's numbers, compared as the texts they number: a patch numbers new texts after the
# last, a whole build in text order.
TEXT_COLUMNS = {"search_text": ("text_id",), "search_token": ("text_id",), "field_token": ("text_id",),
                "search_hit": ("text_id",), "stopped_hit": ("text_id",),
                "condition_link": ("text_id", "term_text_id"), "intervention_link": ("text_id", "term_text_id")}


def index_rows(root) -> dict[str, tuple]:
    """Every table of the current state's catalog, and every table a reader sees (its views), as its count of rows
    and the sum of their hashes (a patch and a whole build write rows in other orders), text numbers hashed as the
    texts they number."""
    with Mirror(root) as m:
        tables = [r["table_name"] for r in m.rows(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'catalog' AND NOT temporary")]
        rows = {}
        for table in tables:
            columns = [r["column_name"] for r in m.rows(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = 'catalog' AND table_name = $t "
                "ORDER BY column_index", {"t": table})]
            texts = TEXT_COLUMNS.get(table, ())
            shown = [f"(SELECT norm FROM search_text AS x WHERE x.text_id = t.{c})" if c in texts else f"t.{c}"
                     for c in columns]
            rows[table] = tuple(m.rows(f"SELECT count(*) AS n, sum(hash({', '.join(shown)})) AS h FROM {table} AS t"
                                       )[0].values())
        for table in normalised_tables():  # and the state's tables, as readers see them
            rows[f"view {table}"] = tuple(m.rows(f"SELECT count(*) AS n, sum(hash(t)) AS h FROM {table} AS t"
                                                 )[0].values())
        return rows


def answers(root) -> list[str]:
    with Mirror(root) as m:
        calls = [m.get_landscape("breast cancer"), m.get_landscape("asthma", date_before="2016-05-01"),
                 m.detect_whitespace("pembrolizumab", "melanoma"),
                 m.search_trials(drug="metformin", condition="diabetes"),
                 m.get_terminated("cancer", date_before="2019-01-01"), m.search(condition="lung cancer", page_size=50)]
        return [c.model_dump_json() if hasattr(c, "model_dump_json") else json.dumps(c, default=str) for c in calls]


def criteria_storage(root) -> set[str]:
    """How trial_detail's eligibility criteria, the catalog's longest texts, are stored."""
    with Mirror(root) as m:
        return {r["compression"] for r in m.rows(
            "SELECT DISTINCT compression FROM pragma_storage_info('catalog.trial_detail') "
            "WHERE column_name = 'eligibility_criteria' AND segment_type = 'VARCHAR'")}


def changed_version(record: dict, *, status: str, day: str) -> dict:
    changed = copy.deepcopy(record)
    module = changed["protocolSection"].setdefault("statusModule", {})
    module["overallStatus"] = status
    module["lastUpdatePostDateStruct"] = {"date": day, "type": "ACTUAL"}
    sponsor = changed["protocolSection"].setdefault("sponsorCollaboratorsModule", {}).setdefault("leadSponsor", {})
    sponsor["name"] = "Aardvark Trials Consortium"  # a new name, first in sponsor order: every key after it moves
    return changed


@pytest.fixture(scope="module")
def first_800(tmp_path_factory, records):
    """A warehouse of the sample's first 800 studies, to copy before writing to it."""
    root = tmp_path_factory.mktemp("first_800") / "w"
    load_paths(Warehouse(root), [write_ndjson(root.parent / "a.ndjson", records[:800])])
    return root


@pytest.mark.parametrize("after_every_update", [False, True])
def test_a_patched_catalog_has_the_tables_and_answers_of_one_built_whole(tmp_path, records, first_800,
                                                                         after_every_update):
    """The night's versions updated on a day some studies' earlier versions were updated after, or have no such
    date (those versions are numbered again, after the new ones), or after every version."""
    wh = Warehouse(shutil.copytree(first_800, tmp_path / "w", symlinks=True))
    updated = {nct(r): r["protocolSection"].get("statusModule", {}).get("lastUpdatePostDateStruct", {}).get("date")
               for r in records[:800]}
    changing = records[10:800:30]
    day = "2026-11-20"
    if after_every_update:
        changing = [r for r in changing if updated[nct(r)]]
        day = str(date.fromisoformat(max(filter(None, updated.values()))[:10]) + timedelta(days=1))
    night = [changed_version(r, status="TERMINATED", day=day) for r in changing]
    night += records[800:840]  # new studies, their NCT IDs among the others
    numbers = "SELECT nct_id, content_hash, version_no FROM study_version"
    with Mirror(wh.root) as m:
        before = {(r["nct_id"], r["content_hash"]): r["version_no"] for r in m.rows(numbers)}
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", night)])
    with Mirror(wh.root) as m:
        renumbered = sum(before[(r["nct_id"], r["content_hash"])] != r["version_no"] for r in m.rows(numbers)
                         if (r["nct_id"], r["content_hash"]) in before)
    assert (renumbered == 0) == after_every_update, renumbered
    state = wh.current_state()
    assert "patched" in state.meta["index"], state.meta["index"]
    assert state.meta["index"]["patched"] == len(night)
    patched, patched_answers = index_rows(wh.root), answers(wh.root)
    assert criteria_storage(wh.root) == {"ZSTD"}  # the new versions' rows too

    republish(wh)
    assert wh.current_state().meta["index"] == {"built": "whole"}
    assert criteria_storage(wh.root) == {"ZSTD"}
    whole = index_rows(wh.root)
    assert patched.keys() == whole.keys()
    for table in whole:
        assert patched[table] == whole[table], table
    assert patched_answers == answers(wh.root)
    assert any("Aardvark" in a for a in patched_answers)


def test_a_publish_patches_only_a_catalog_it_can_trust(tmp_path, records, monkeypatch):
    """A catalog built by other SQL, or more studies patched since it was built whole than a tenth of all (a new
    generation, after a rebuild, too: tests/test_rebuild.py): built whole."""
    wh = Warehouse(tmp_path / "w")

    def load(name: str, batch: list[dict]) -> dict:
        load_paths(wh, [write_ndjson(tmp_path / f"{name}.ndjson", batch)])
        return wh.current_state().meta["index"]

    assert load("a", records[:200]) == {"built": "whole"}
    assert load("b", records[200:210]) == {"patched": 10, "patched_since_whole": 10}  # of 210 studies
    assert load("c", records[210:220]) == {"patched": 10, "patched_since_whole": 20}  # of 220
    assert load("d", records[220:230]) == {"built": "whole"}  # 30 of 230: more than a tenth
    assert load("e", records[230:234]) == {"patched": 4, "patched_since_whole": 4}
    assert load("f", records[234:300]) == {"built": "whole"}  # 66 at once
    monkeypatch.setattr("ingest.publish.index_fingerprint", lambda thesaurus: "another ctmirror")
    assert load("g", records[300:302]) == {"built": "whole"}


def test_a_patch_keeps_the_previous_state_as_it_was(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:300])])
    before = wh.current_state()
    copy_of_before = tmp_path / "before.duckdb"
    shutil.copyfile(before.path / "catalog.duckdb", copy_of_before)
    with Mirror(wh.root) as reader:  # a reader of the previous state, open through the patch
        answer = reader.get_landscape("cancer")
        load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", [
            changed_version(records[7], status="WITHDRAWN", day="2026-11-21")])])
        assert reader.get_landscape("cancer") == answer
    assert (before.path / "catalog.duckdb").read_bytes() == copy_of_before.read_bytes()
    assert wh.current_state().meta["index"] == {"patched": 1, "patched_since_whole": 1}
    with Mirror(wh.root) as m:
        assert m.get_trial(nct(records[7])).overall_status == "WITHDRAWN"


def test_a_damaged_previous_catalog_is_built_whole_rather_than_patched(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:300])])
    damaged = wh.current_state().path / "catalog.duckdb"
    with open(damaged, "r+b") as catalog:
        catalog.seek(damaged.stat().st_size // 2)
        catalog.truncate()
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", [
        changed_version(records[9], status="SUSPENDED", day="2026-11-22")])])
    index = wh.current_state().meta["index"]
    assert index["built"] == "whole" and "Could not read" in index["patch_failed"], index
    with Mirror(wh.root) as m:
        assert m.get_trial(nct(records[9])).overall_status == "SUSPENDED"


def test_only_the_tables_a_patch_builds_for_new_versions_alone_read_the_inputs_it_reads_so():
    """A patch reads NEW_VERSION_INPUTS for the changed studies' new versions alone: an index file reading them
    must build only tables whose rows of a version depend on its record alone, which the patch keeps for the
    versions it knew (PATCHED_BY_NEW_VERSION)."""
    readers = {}
    for name in sql_files("index"):
        text = read_sql(name)
        if any(f"all_{table}" in text for table in NEW_VERSION_INPUTS):
            readers[name] = set(re.findall(r"^CREATE TABLE (\w+)", text, re.MULTILINE))
    assert readers, "no index file reads the inputs a patch reads for new versions alone"
    for name, made in readers.items():
        assert made <= set(PATCHED_BY_NEW_VERSION), f"{name} builds {sorted(made)} from them"
    assert set().union(*readers.values()) == set(PATCHED_BY_NEW_VERSION)


def test_the_current_rows_polars_writes_are_the_rows_the_sql_picks_in_its_order(tmp_path, records):
    """A segment holding superseded versions has its current rows written again for each state, by polars: the
    rows publish/current_rows.sql picks (those of current versions), in its order, with the segment's own column
    types as DuckDB reads them."""
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:600])])
    night = [changed_version(r, status="TERMINATED", day="2026-11-20") for r in records[5:600:40]]
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", night)])
    first, tables = wh.segments()[0], wh.current_state().path / "tables"
    con = duckdb.connect()
    con.execute("CREATE TABLE current_versions AS SELECT nct_id, content_hash FROM read_parquet($files)",
                {"files": [str(f) for f in (tables / "studies").glob("*.parquet")]})
    assert con.execute("SELECT count(*) FROM current_versions").fetchone()[0] == 600
    for table in current_tables():
        written, segment_file = str(tables / table / CURRENT_ROWS_FILE), str(first.table_file(table))
        picked = con.execute(read_sql("publish/current_rows.sql"), {"files": [segment_file]}).fetchall()
        assert con.execute("SELECT * FROM read_parquet($file)", {"file": written}).fetchall() == picked, table
        assert len(picked) < con.execute("SELECT count(*) FROM read_parquet($file)", {"file": segment_file}
                                          ).fetchone()[0] or table == "nct_aliases", table
        assert (con.execute("DESCRIBE SELECT * FROM read_parquet($file)", {"file": written}).fetchall()
                == con.execute("DESCRIBE SELECT * FROM read_parquet($file)", {"file": segment_file}).fetchall())
