"""Loading real v2 records in every accepted shape into a versioned warehouse."""

from __future__ import annotations

import copy
import gzip
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import zstandard
from conftest import DATA, nct, write_ndjson

from ctmirror import Mirror
from ctmirror.core.warehouse import Warehouse
from ingest.loader import load_paths, sample_path

pytestmark = pytest.mark.slow  # each test loads a warehouse of its own

ROOT = Path(__file__).resolve().parent.parent


def test_sample_loads_one_current_row_per_study_and_drops_nothing(sample_warehouse, records):
    with Mirror(sample_warehouse) as m:
        studies = m.sql("SELECT nct_id FROM studies")
        quarantined = m.sql("SELECT count(*) AS n FROM quarantine")["n"][0]
    assert studies.height == len({nct(r) for r in records}) == 2279
    assert studies["nct_id"].n_unique() == studies.height
    assert studies.height + quarantined == len(records)


def test_every_list_element_lands_in_its_child_table(sample_warehouse, records):
    def total(path: list[str]) -> int:
        count = 0
        for record in records:
            node = record
            for key in path:
                node = node.get(key) if isinstance(node, dict) else None
            count += len(node or [])
        return count

    expected = {
        "conditions": total(["protocolSection", "conditionsModule", "conditions"]),
        "keywords": total(["protocolSection", "conditionsModule", "keywords"]),
        "interventions": total(["protocolSection", "armsInterventionsModule", "interventions"]),
        "arm_groups": total(["protocolSection", "armsInterventionsModule", "armGroups"]),
        "collaborators": total(["protocolSection", "sponsorCollaboratorsModule", "collaborators"]),
        "locations": total(["protocolSection", "contactsLocationsModule", "locations"]),
        "study_references": total(["protocolSection", "referencesModule", "references"]),
        "nct_aliases": total(["protocolSection", "identificationModule", "nctIdAliases"]),
    }
    expected["outcomes"] = sum(total(["protocolSection", "outcomesModule", k])
                               for k in ("primaryOutcomes", "secondaryOutcomes", "otherOutcomes"))
    expected["mesh_terms"] = sum(total(["derivedSection", module, k])
                                 for module in ("conditionBrowseModule", "interventionBrowseModule")
                                 for k in ("meshes", "ancestors"))
    expected["browse_leaves"] = sum(total(["derivedSection", module, "browseLeaves"])
                                    for module in ("conditionBrowseModule", "interventionBrowseModule"))
    with Mirror(sample_warehouse) as m:
        for table, count in expected.items():
            assert m.sql(f"SELECT count(*) AS n FROM {table}")["n"][0] == count, table
    assert expected["locations"] > 30_000 and expected["nct_aliases"] > 0


def test_real_values_of_a_terminated_phase_1_2_trial(sample_warehouse):
    # NCT00711542, read in the raw record: phases [PHASE1, PHASE2], whyStopped "Slow recruitment",
    # primary completion 2014-12 ACTUAL, enrollment 31 ACTUAL, condition ancestors include Coronary Disease.
    with Mirror(sample_warehouse) as m:
        row = m.rows("SELECT * FROM studies WHERE nct_id = 'NCT00711542'")[0]
        ancestors = m.sql("SELECT term FROM mesh_terms WHERE nct_id = 'NCT00711542' AND domain = 'condition' "
                          "AND is_ancestor")["term"].to_list()
        interventions = m.rows("SELECT intervention_type, name FROM interventions WHERE nct_id = 'NCT00711542' "
                               "ORDER BY ordinal")
    assert row["phases"] == ["PHASE1", "PHASE2"]
    assert row["phase"] == "Phase 1/Phase 2"
    assert row["overall_status"] == "TERMINATED"
    assert row["why_stopped"] == "Slow recruitment"
    assert row["primary_completion_date_raw"] == "2014-12"
    assert row["primary_completion_date_precision"] == "month"
    assert str(row["primary_completion_date"]) == "2014-12-01"
    assert row["primary_completion_date_type"] == "ACTUAL"
    assert (row["enrollment"], row["enrollment_type"]) == (31, "ACTUAL")
    assert {"Coronary Disease", "Myocardial Ischemia", "Heart Diseases"} <= set(ancestors)
    assert interventions[0] == {"intervention_type": "Biological",
                                "name": "autologous bone marrow-derived progenitor cells"}


def test_eligibility_and_dates_are_normalised(sample_warehouse, records_by_id):
    raw = records_by_id["NCT00072579"]["protocolSection"]
    with Mirror(sample_warehouse) as m:
        row = m.rows("SELECT * FROM studies WHERE nct_id = 'NCT00072579'")[0]
    assert row["start_date_raw"] == raw["statusModule"]["startDateStruct"]["date"] == "2003-05"
    assert row["start_date_precision"] == "month"
    assert row["study_first_post_date_raw"] == "2003-11-05"
    assert row["study_first_post_date_precision"] == "day"
    assert row["eligibility_criteria"] == raw["eligibilityModule"]["eligibilityCriteria"]


def test_ages_in_days(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        rows = m.rows("SELECT DISTINCT minimum_age, minimum_age_days FROM studies WHERE minimum_age IN "
                      "('18 Years', '6 Months', '21 Years') ORDER BY ALL")
    assert {r["minimum_age"]: r["minimum_age_days"] for r in rows} == {
        "18 Years": 6574, "21 Years": 7670, "6 Months": 182}


def test_reloading_the_same_file_adds_nothing(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    source = write_ndjson(tmp_path / "a.ndjson", records[:50])
    first = load_paths(wh, [source])
    again = load_paths(wh, [source])
    assert first.counts.versions_added == 50
    assert (again.counts.versions_added, again.counts.unchanged) == (0, 50)
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) AS n FROM study_versions")["n"][0] == 50


def test_a_changed_record_adds_a_version_and_becomes_current(tmp_path, records_by_id):
    wh = Warehouse(tmp_path / "w")
    original = records_by_id["NCT00711542"]
    load_paths(wh, [write_ndjson(tmp_path / "v1.ndjson", [original])])
    changed = copy.deepcopy(original)
    changed["protocolSection"]["statusModule"]["whyStopped"] = "Slow recruitment; sponsor withdrew funding"
    changed["protocolSection"]["statusModule"]["lastUpdatePostDateStruct"]["date"] = "2030-01-02"
    result = load_paths(wh, [write_ndjson(tmp_path / "v2.ndjson", [changed])])
    assert (result.counts.versions_added, result.counts.studies_changed) == (1, 1)
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) AS n FROM study_versions WHERE nct_id = 'NCT00711542'")["n"][0] == 2
        assert m.rows("SELECT why_stopped FROM studies")[0]["why_stopped"].endswith("withdrew funding")
    # An older version arriving later does not displace the newer one.
    load_paths(wh, [write_ndjson(tmp_path / "v1-again.ndjson", [original])])
    with Mirror(wh.root) as m:
        assert m.rows("SELECT why_stopped FROM studies")[0]["why_stopped"].endswith("withdrew funding")


def test_a_record_larger_than_the_parse_buffer_loads_with_the_others(tmp_path, records_by_id):
    """DuckDB parses a batch in buffers of 16 MB unless told its longest record (and refuses one over twice
    that); a record of 40 MB (a real one with a long detailed description) must load, and the others with it."""
    from ingest.normalize import PARSE_BUFFER_BYTES

    huge = copy.deepcopy(records_by_id["NCT00711542"])
    huge["protocolSection"]["descriptionModule"]["detailedDescription"] = "erectile function " * ((40 << 20) // 18)
    assert len(json.dumps(huge)) > 2 * PARSE_BUFFER_BYTES
    others = [r for i, r in records_by_id.items() if i != "NCT00711542"][:20]
    result = load_paths(Warehouse(tmp_path / "w"), [write_ndjson(tmp_path / "a.ndjson", [huge, *others])])
    assert (result.counts.versions_added, result.counts.quarantined) == (21, 0)
    with Mirror(tmp_path / "w") as m:
        [row] = m.rows("SELECT length(detailed_description) AS n FROM studies WHERE nct_id = 'NCT00711542'")
        assert row["n"] > PARSE_BUFFER_BYTES


def test_same_record_from_every_shape_is_one_version(tmp_path, records_by_id):
    """NDJSON line, pretty single-study file, page response, zip member, gzip and zstd: one content hash."""
    record = records_by_id["NCT00711542"]
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    write_ndjson(shapes / "a.ndjson", [record])
    (shapes / "b.json").write_text(json.dumps(record, indent=2, ensure_ascii=False))
    (shapes / "c.json").write_text(json.dumps({"studies": [record], "totalCount": 1}))
    with zipfile.ZipFile(shapes / "d.zip", "w") as z:
        z.writestr("NCT00711542.json", json.dumps(record, indent=4))
    (shapes / "e.ndjson.gz").write_bytes(gzip.compress((json.dumps(record) + "\n").encode()))
    (shapes / "f.json.zst").write_bytes(zstandard.ZstdCompressor().compress(json.dumps(record).encode()))
    result = load_paths(Warehouse(tmp_path / "w"), [shapes])
    assert (result.counts.records, result.counts.versions_added, result.counts.quarantined) == (6, 1, 0)


def test_recorded_pages_single_study_files_and_the_bulk_zip(tmp_path):
    pages = sorted((DATA / "pages").glob("*.json"))
    page_studies = {}
    for page in pages:
        response = json.loads(page.read_text())["response"]
        for study in response.get("studies", [response]):
            page_studies[nct(study)] = study
    with zipfile.ZipFile(DATA / "bulk" / "ctg-studies-erectile-dysfunction.json.zip") as z:
        bulk_ids = {name.removesuffix(".json") for name in z.namelist()}
    wh = Warehouse(tmp_path / "w")
    result = load_paths(wh, [DATA / "pages", DATA / "bulk" / "ctg-studies-erectile-dysfunction.json.zip"])
    assert result.counts.quarantined == 0
    with Mirror(wh.root) as m:
        ids = set(m.sql("SELECT nct_id FROM studies")["nct_id"].to_list())
        origins = m.sql("SELECT DISTINCT locator FROM study_versions WHERE locator LIKE 'member %'")
    assert ids == set(page_studies) | bulk_ids
    assert len(bulk_ids) == 635 and origins.height == 635


def test_raw_layer_keeps_what_was_received(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    source = write_ndjson(tmp_path / "a.ndjson", records[:3])
    load_paths(wh, [source])
    manifest = [json.loads(line) for line in (wh.root / "raw" / "manifest.ndjson").read_text().splitlines()]
    assert manifest[0]["origin"] == str(source.resolve()) and manifest[0]["source"] == "file"
    blob = wh.root / "raw" / manifest[0]["blob"]
    assert zstandard.ZstdDecompressor().stream_reader(open(blob, "rb")).read() == source.read_bytes()


def test_folder_of_files_and_the_sample_together(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    folder = tmp_path / "in"
    folder.mkdir()
    write_ndjson(folder / "x.ndjson", records[:2])
    result = load_paths(wh, [sample_path(), folder])
    assert result.counts.records == len(records) + 2
    assert result.counts.versions_added == len(records)


def test_published_tables_are_plain_parquet(sample_warehouse):
    import polars as pl

    studies = pl.read_parquet(Path(sample_warehouse) / "tables" / "studies" / "*.parquet")
    assert studies.height == 2279 and "nct_id" in studies.columns
    with Mirror(sample_warehouse) as m:  # every table's folder holds exactly the rows of its view
        for folder in sorted((Path(sample_warehouse) / "tables").iterdir()):
            rows = pl.read_parquet(folder / "*.parquet").sort(pl.all())
            assert rows.equals(m.sql(f"SELECT * FROM {folder.name}").sort(pl.all())), folder.name


def test_a_state_links_segments_whose_versions_are_all_current_and_copies_the_rest(tmp_path, records):
    first = [r for r in records if r["protocolSection"].get("conditionsModule", {}).get("conditions")][:30]
    changed = copy.deepcopy(first[:5])
    for record in changed:
        record["protocolSection"]["conditionsModule"]["conditions"] = ["Changed Condition Text"]
        record["protocolSection"]["statusModule"]["lastUpdatePostDateStruct"]["date"] = "2099-01-01"
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "first.ndjson", first)])
    linked = wh.current_state().table_files("conditions")
    assert [f.name for f in linked] == ["g0001-000001.parquet"]
    assert linked[0].samefile(wh.segments()[0].table_file("conditions"))  # a hard link: no copy
    load_paths(wh, [write_ndjson(tmp_path / "changed.ndjson", changed)])
    files = wh.current_state().table_files("conditions")
    assert [f.name for f in files] == ["current.parquet", "g0001-000002.parquet"]
    assert files[1].samefile(wh.segments()[1].table_file("conditions"))
    with Mirror(wh.root) as m:
        rows = m.sql("SELECT nct_id, condition FROM conditions WHERE condition = 'Changed Condition Text'")
        assert sorted(rows["nct_id"]) == sorted(nct(r) for r in changed)
        counts = m.sql("SELECT nct_id, count(*) AS n FROM conditions GROUP BY nct_id")
        expected = {nct(r): len(r["protocolSection"]["conditionsModule"]["conditions"]) for r in first + changed}
        assert dict(zip(counts["nct_id"], counts["n"])) == expected  # no superseded version's row is left


def test_a_writer_publishes_on_its_own_duckdb_and_gets_it_back_as_it_was(tmp_path, records):
    from ctmirror.core.raw_store import RawStore
    from ingest.normalize import Normalizer
    from ingest.publish import publish, record_run

    def settings(con) -> tuple:
        return con.execute("SELECT current_setting('threads'), current_setting('disabled_compression_methods'), "
                           "current_database(), (SELECT list(database_name ORDER BY database_name) "
                           "FROM duckdb_databases() WHERE NOT internal)").fetchone()

    wh = Warehouse(tmp_path / "w")
    with wh.writing():
        RawStore(wh.root).receive_file(write_ndjson(tmp_path / "some.ndjson", records[:40]), source="file")
        normalizer = Normalizer(wh)
        try:
            normalizer.run()
            before = settings(normalizer.con)
            run = {"run_id": "on-the-writers-duckdb", "command": "load", "status": "completed"}
            record_run(wh, run)
            publish(wh, run=run, con=normalizer.con)
            assert settings(normalizer.con) == before  # its threads, compression, default database; no catalog
        finally:
            normalizer.close()
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) AS n FROM trial_card WHERE is_current")["n"][0] == 40


PANDAS_LOOKUPS = """
import importlib.abc, sys
from ctmirror.core.duck import new_connection

class Count(importlib.abc.MetaPathFinder):
    searches = 0

    def find_spec(self, name, path, target=None):
        Count.searches += name == "pandas"

sys.meta_path.insert(0, Count())
con = new_connection()
con.execute("SELECT len(?)", [[f"NCT{n:08d}" for n in range(2000)]]).fetchall()
print(Count.searches)
"""


def test_a_writers_parameters_do_not_search_for_pandas():
    """DuckDB looks for pandas for every value it binds; where pandas is not installed, a writer's connection
    records that once, so binding a night's 2,000 NCT IDs searches sys.path for it no more (it did 4,000 times)."""
    if importlib.util.find_spec("pandas") is not None:
        pytest.skip("pandas is installed here: DuckDB finds it at once")
    done = subprocess.run([sys.executable, "-c", PANDAS_LOOKUPS], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) <= 1
