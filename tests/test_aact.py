"""AACT flat-file dumps as a second source: the real studies of tests/data/aact (written from the API records
by tests/aact_writer.py) load into the same warehouse, with the same answers, and bad dumps fail cleanly."""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import duckdb
import pytest
from aact_writer import read_records, write_zip
from conftest import DATA, nct, write_ndjson

from ctmirror import Mirror
from ctmirror.core.errors import InputError
from ctmirror.core.warehouse import Warehouse
from ctmirror.core.words import query_norm
from ctmirror.read.registry import METHODS
from ingest.aact import AactDumpError, dump_candidates
from ingest.loader import load_aact, load_paths, rebuild, sample_path

pytestmark = pytest.mark.slow  # builds and compares several warehouses from AACT dumps

SAMPLE = DATA / "aact" / "20261101_ctgov_sample.zip"
SAMPLE_IDS = set((DATA / "aact" / "sample_ids.txt").read_text().split())
# What AACT does not carry, so a record read back from it lacks (ctmirror's methods use none of them).
NOT_IN_AACT = {"derivedSection.miscInfoModule", "derivedSection.conditionBrowseModule.browseLeaves",
               "derivedSection.interventionBrowseModule.browseLeaves"}


@pytest.fixture(scope="module")
def sample_records(records) -> list[dict]:
    return [r for r in records if nct(r) in SAMPLE_IDS]


@pytest.fixture(scope="module")
def from_json(tmp_path_factory, sample_records) -> Path:
    root = tmp_path_factory.mktemp("json") / "w"
    load_paths(Warehouse(root), [write_ndjson(root.parent / "sample.ndjson", sample_records)])
    return root


@pytest.fixture(scope="module")
def from_aact(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("aact") / "w"
    load_aact(Warehouse(root), SAMPLE)
    return root


def unpacked(tmp_path: Path) -> Path:
    folder = tmp_path / "20261101_dump"
    with zipfile.ZipFile(SAMPLE) as archive:
        archive.extractall(folder)
    return folder


def edit(folder: Path, table: str, change) -> None:
    path = folder / f"{table}.txt"
    path.write_bytes(change(path.read_bytes()))


def test_the_sample_is_the_writer_output_for_real_records(tmp_path):
    again = tmp_path / "again.zip"
    write_zip([r for r in read_records(sample_path()) if nct(r) in SAMPLE_IDS], again)
    assert again.read_bytes() == SAMPLE.read_bytes()
    with zipfile.ZipFile(SAMPLE) as archive:
        facilities = archive.read("facilities.txt").decode()
    # the awkward cases are in it: a pipe inside a quoted field, a quoted multi-line field, empty fields
    assert '"Mountain View | Ophthalmology"' in facilities
    with zipfile.ZipFile(SAMPLE) as archive:
        criteria = archive.read("eligibilities.txt").decode()
    assert '|"Inclusion Criteria:\n\n* Age between 50 to 80 years old' in criteria


def _project(value, shape):
    if isinstance(shape, dict) and isinstance(value, dict):
        kept = {k: _project(value[k], shape[k]) for k in shape if value.get(k) is not None}
        return {k: v for k, v in kept.items() if v is not None} or None
    if isinstance(shape, list) and isinstance(value, list):
        return [_project(v, shape[0]) for v in value]
    return value


def _drop(record: dict, dotted: str) -> None:
    *parents, last = dotted.split(".")
    node = record
    for name in parents:
        node = node.get(name) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(last, None)


def test_every_study_reads_back_as_its_api_record(sample_records):
    from ctmirror.core.duck import new_connection
    from ingest.normalize import study_structure_of

    shape = study_structure_of(new_connection())
    read_back = {}
    for candidate in dump_candidates(SAMPLE):
        assert candidate.problem is None, candidate.problem
        record = json.loads(candidate.data)
        read_back[nct(record)] = record
    assert set(read_back) == SAMPLE_IDS
    for original in sample_records:
        expected = copy.deepcopy(original)
        for path in NOT_IN_AACT:
            _drop(expected, path)
        for module in ("conditionBrowseModule", "interventionBrowseModule"):
            for kind in ("meshes", "ancestors"):  # AACT keeps MeSH terms, not their ids
                for term in expected.get("derivedSection", {}).get(module, {}).get(kind, []):
                    term.pop("id", None)
        got = _project(read_back[nct(original)], shape)
        want = _project(expected, shape)
        for arm_list in (got, want):  # AACT links arms to interventions, not to names: compare as sets
            for arm in (arm_list["protocolSection"].get("armsInterventionsModule") or {}).get("armGroups", []):
                arm["interventionNames"] = sorted(set(arm.get("interventionNames", [])))
        assert got == want, nct(original)


def _comparable(result):
    if result is None:
        return None
    if isinstance(result, list):
        return [_comparable(r) for r in result]
    dumped = result.model_dump() if hasattr(result, "model_dump") else result

    def strip(value):  # the version is a content hash, and AACT's record differs (see NOT_IN_AACT)
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "version"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(dumped)


def _taught_queries(m: Mirror, queries: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The queries (field, text) that reach a study through a link the data taught: a condition's MeSH heading
    (condition_link, learned from browse leaves, which AACT does not have) or a drug's other names
    (intervention_link, which AACT's sample may teach otherwise)."""
    taught = set()
    for field, link in (("condition", "condition_link"), ("intervention", "intervention_link")):
        texts = sorted(text for f, text in queries if f == field)
        found = m.sql(f"""SELECT DISTINCT t.k FROM matched_texts_many($field, $qs) AS t
                          JOIN {link} AS l ON l.text_id = t.text_id
                          JOIN search_text AS x ON x.text_id = l.text_id
                          JOIN search_text AS y ON y.text_id = l.term_text_id
                          WHERE x.norm <> y.norm""", {"field": field, "qs": [query_norm(t) for t in texts]})
        taught |= {(field, texts[k - 1]) for k in found["k"].to_list()}
    return taught


def _calls(m: Mirror) -> list[tuple[str, tuple, dict, list[tuple[str, str]]]]:
    rnd = random.Random(20261101)
    ids = m.sql("SELECT nct_id FROM studies ORDER BY nct_id")["nct_id"].to_list()
    conditions = m.sql("SELECT DISTINCT condition FROM conditions ORDER BY 1")["condition"].to_list()
    drugs = m.sql("SELECT DISTINCT name FROM interventions WHERE intervention_type_code IN ('DRUG', 'BIOLOGICAL') "
                  "ORDER BY 1")["name"].to_list()
    calls = []
    for nct_id in rnd.sample(ids, 120):
        calls += [("get_trial", (nct_id,), {}, []), ("get_trial_details", (nct_id,), {}, [])]
    pairs = [("tadalafil", "erectile dysfunction"), ("semaglutide", "NASH"), ("tadalafil", "NASH")]
    pairs += [(rnd.choice(drugs), rnd.choice(conditions)) for _ in range(60)]
    for drug, condition in pairs:
        cutoff = rnd.choice([None, "2015-01-01", "2020-06-01"])
        both = [("intervention", drug), ("condition", condition)]
        calls += [("search_trials", (drug, condition), {"date_before": cutoff}, both),
                  ("detect_whitespace", (drug, condition), {"date_before": cutoff}, both)]
    for condition in ["NASH", "erectile dysfunction", "prostate cancer", *rnd.sample(conditions, 30)]:
        taught = [("condition", condition)]
        calls += [("get_landscape", (condition,), {}, taught),
                  ("get_landscape", (condition,), {"date_before": "2019-06-01", "holdout": "first_posted"}, taught),
                  ("get_terminated", (condition,), {}, [*taught, ("intervention", condition)]),
                  ("search", (), {"condition": condition, "page_size": 200}, taught)]
    for drug in ["tadalafil", "semaglutide", *rnd.sample(drugs, 25)]:
        taught = [("intervention", drug)]
        calls += [("get_terminated", (drug,), {"date_before": "2021-01-01"}, [*taught, ("condition", drug)]),
                  ("search", (), {"intervention": drug, "sex": "MALE", "page_size": 200}, taught),
                  ("search", (drug,), {"page_size": 200, "date_before": "2018-01-01"}, [*taught, ("condition", drug)])]
    return calls


def _keywords(name: str, args: tuple, kwargs: dict) -> dict:
    """A call's arguments by name, as Mirror.batch takes them."""
    bound = METHODS[name].signature().bind(None, *args, **kwargs)
    return {key: value for key, value in bound.arguments.items() if key != "self"}


def test_both_sources_give_the_same_answers(from_json, from_aact):
    with Mirror(from_json) as a, Mirror(from_aact) as b:
        compared = subset_checked = 0
        calls = _calls(a)
        taught = _taught_queries(a, {query for *_, queries in calls for query in queries})
        batch = [(name, _keywords(name, args, kwargs)) for name, args, kwargs, _ in calls]
        for (name, args, kwargs, queries), want, got in zip(calls, a.batch(batch), b.batch(batch), strict=True):
            want, got = _comparable(want), _comparable(got)
            if taught.intersection(queries):
                # AACT cannot learn the synonym, so it may find fewer trials, never others
                if name in ("search_trials", "get_terminated"):
                    assert {t["nct_id"] for t in got} <= {t["nct_id"] for t in want}, (name, args)
                    subset_checked += 1
                continue
            assert got == want, (name, args, kwargs)
            compared += 1
    assert compared > 350 and subset_checked > 5  # the rest reach a study through a link only JSON teaches


def test_the_same_trial_is_the_same_from_both(from_json, from_aact):
    with Mirror(from_json) as a, Mirror(from_aact) as b:
        details = b.get_trial_details("NCT05850520")
        assert "Mountain View | Ophthalmology" in {loc.facility for loc in details.locations}
        same = a.get_trial_details("NCT05850520")
        assert details.model_dump(exclude={"version"}) == same.model_dump(exclude={"version"})
        terminated = {t.nct_id: t for t in b.get_terminated("erectile dysfunction", max_results=100)}
        assert terminated["NCT00215631"].why_stopped == "slow recruitment"
        assert terminated["NCT00215631"].stop_category == "enrollment"


def test_versions_carry_the_source_and_the_dump_date(tmp_path, from_aact):
    with Mirror(from_aact) as m:
        rows = m.sql("SELECT source, source_date::VARCHAR AS d, count(*) AS n FROM study_versions GROUP BY ALL").rows()
    assert rows == [("aact", "2026-11-01", len(SAMPLE_IDS))]
    wh = Warehouse(shutil.copytree(from_aact, tmp_path / "w", symlinks=True))  # the same dump loaded again
    again = load_aact(wh, SAMPLE)
    assert (again.counts.records, again.counts.versions_added) == (len(SAMPLE_IDS), 0)


def test_an_older_archive_then_a_newer_one_gives_history(tmp_path, records_by_id):
    current = records_by_id["NCT00215631"]  # TERMINATED, "slow recruitment"
    older = copy.deepcopy(current)
    status = older["protocolSection"]["statusModule"]
    status["overallStatus"] = "RECRUITING"
    status.pop("whyStopped")
    status["lastUpdatePostDateStruct"] = {"date": "2006-03-01", "type": "ESTIMATED"}
    write_zip([older], tmp_path / "20060401_export.zip")
    write_zip([current], tmp_path / "20261101_export.zip")
    wh = Warehouse(tmp_path / "w")
    load_aact(wh, tmp_path / "20060401_export.zip")
    load_aact(wh, tmp_path / "20261101_export.zip")
    with Mirror(wh.root) as m:
        dates = m.sql("SELECT source_date::VARCHAR AS d FROM study_versions ORDER BY d")["d"].to_list()
        assert dates == ["2006-04-01", "2026-11-01"]
        assert m.get_trial("NCT00215631").overall_status == "TERMINATED"
    with Mirror(wh.root, as_of="2006-06-01") as then:
        trial = then.get_trial("NCT00215631")
        assert (trial.overall_status, trial.why_stopped, trial.as_of_exact) == ("RECRUITING", None, True)


def test_a_folder_loads_like_its_zip_and_rebuild_reproduces_it(tmp_path, from_aact):
    wh = Warehouse(tmp_path / "w")
    result = load_aact(wh, unpacked(tmp_path))
    assert result.run["data_timestamp"] == "2026-11-01"
    with Mirror(wh.root) as folder, Mirror(from_aact) as archive:
        query = "SELECT nct_id, content_hash FROM study_versions ORDER BY ALL"
        assert folder.sql(query).rows() == archive.sql(query).rows()
    def tables() -> dict[str, list[bytes]]:  # sync_runs is left out: the rebuild is one run more
        state = wh.current_state()
        return {p.name: [f.read_bytes() for f in state.table_files(p.name)] for p in state.tables.iterdir()
                if p.name != "sync_runs"}

    before = tables()
    rebuild(wh)
    after = tables()
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) FROM studies").item() == len(SAMPLE_IDS)
    assert after == before  # the same rows in the same order: the same bytes


def test_a_dump_put_together_in_many_chunks_gives_the_same_versions(tmp_path, from_aact, monkeypatch):
    import ingest.aact

    chunks = []
    read_sql = ingest.aact.read_sql
    monkeypatch.setattr(ingest.aact, "CHUNK_STUDIES", 200)
    monkeypatch.setattr(ingest.aact, "read_sql", lambda *name: chunks.append(name) or read_sql(*name))
    wh = Warehouse(tmp_path / "w")
    load_aact(wh, SAMPLE)
    assert chunks.count(("aact/queries.sql", "chunk_bounds")) == -(-len(SAMPLE_IDS) // 200)
    with Mirror(wh.root) as chunked, Mirror(from_aact) as whole:
        query = "SELECT nct_id, content_hash FROM study_versions ORDER BY ALL"
        assert chunked.sql(query).rows() == whole.sql(query).rows()  # no study lost, doubled or changed at a border


def _state_of(root: Path) -> tuple:
    manifest = root / "raw" / "manifest.ndjson"
    return (Warehouse(root).current_state().state_id, manifest.read_bytes())


@pytest.mark.parametrize("breakage, message", [
    (lambda folder: (folder / "conditions.txt").unlink(),
     "the required file conditions.txt is missing"),
    (lambda folder: edit(folder, "facilities", lambda b: b.replace(b"|country|", b"|nation|", 1)),
     "facilities.txt line 1: missing column(s) country"),
    (lambda folder: edit(folder, "keywords", lambda b: b.replace(b"|", b",")),
     "keywords.txt line 1: the header is delimited by ',', AACT files use '|'"),
    (lambda folder: edit(folder, "conditions", lambda b: b + b"not-a-number|||\n"),
     "conditions.txt line"),
])
def test_a_broken_dump_is_refused_whole_and_leaves_the_warehouse_as_it_was(tmp_path, records, breakage, message):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:5])])
    before = _state_of(wh.root)
    folder = unpacked(tmp_path)
    breakage(folder)
    with pytest.raises(AactDumpError) as refused:
        load_aact(wh, folder)
    assert message in str(refused.value)
    assert _state_of(wh.root) == before


def test_a_bad_row_quarantines_its_study_and_the_rest_loads(tmp_path):
    folder = unpacked(tmp_path)
    text = (folder / "studies.txt").read_text(encoding="utf-8")
    lines = text.split("\n")
    header = lines[0].split("|")
    enrollment = header.index("enrollment")
    target = next(i for i, line in enumerate(lines[1:], 2) if line.startswith("NCT00215631|"))
    fields = lines[target - 1].split("|")
    fields[enrollment] = "about a hundred"
    lines[target - 1] = "|".join(fields)
    (folder / "studies.txt").write_text("\n".join(lines), encoding="utf-8")
    # and a condition row with an unquoted pipe: one field too many
    edit(folder, "conditions", lambda b: b.replace(b"|NCT00106392|", b"|NCT00106392|extra|", 1))
    wh = Warehouse(tmp_path / "w")
    result = load_aact(wh, folder)
    assert result.counts.quarantined == 2
    with Mirror(wh.root) as m:
        assert m.sql("SELECT count(*) FROM studies").item() == len(SAMPLE_IDS) - 2
        assert m.get_trial("NCT00215631") is None and m.get_trial("NCT00106392") is None
        reasons = dict(m.sql("SELECT nct_id, reason FROM quarantine").rows())
    assert reasons["NCT00215631"].startswith(f"AACT studies.txt line {target}: ")
    assert "about a hundred" in reasons["NCT00215631"] and "(column enrollment)" in reasons["NCT00215631"]
    assert reasons["NCT00106392"].startswith("AACT conditions.txt line ")
    assert "Expected Number of Columns" in reasons["NCT00106392"]


def test_the_dump_date_comes_from_the_name_or_the_option(tmp_path):
    plain = tmp_path / "dump.zip"
    shutil.copy(SAMPLE, plain)
    with pytest.raises(InputError, match="pass --dump-date"):
        load_aact(Warehouse(tmp_path / "w"), plain)
    shown = subprocess.run([sys.executable, "-m", "ctmirror.cli", "--warehouse", str(tmp_path / "w"), "load-aact",
                            str(plain), "--dump-date", "2025-02-03"], capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"{len(SAMPLE_IDS)} records: {len(SAMPLE_IDS)} new studies")
    with Mirror(tmp_path / "w") as m:
        assert m.sql("SELECT DISTINCT source_date::VARCHAR FROM study_versions").item() == "2025-02-03"
    refused = subprocess.run([sys.executable, "-m", "ctmirror.cli", "--warehouse", str(tmp_path / "w2"),
                              "load-aact", str(tmp_path / "missing.zip"), "--dump-date", "2025-02-03"],
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "missing.zip: no such file or folder" in refused.stderr


def test_an_older_archive_spelled_for_display_reads_as_the_same_versions(tmp_path, from_aact):
    """Before AACT moved to the v2 API its files spelled enumerations and dates for display ("Active, not
    recruiting", "Anticipated", "Phase 1/Phase 2", "June 2019"): such a dump gives the very same records."""
    folder = unpacked(tmp_path)
    con = duckdb.connect()
    display = "upper(v[1]) || lower(replace(v[2:], '_', ' '))"
    legacy = {
        "studies": {
            "overall_status": display.replace("v", "overall_status"),
            "enrollment_type": "CASE enrollment_type WHEN 'ESTIMATED' THEN 'Anticipated' ELSE enrollment_type END",
            "phase": "replace(replace(replace(phase, 'EARLY_PHASE', 'Early Phase '), 'PHASE', 'Phase '), 'NA', 'N/A')",
            **{column: (f"CASE length({column}) WHEN 7 THEN strftime(strptime({column}, '%Y-%m'), '%B %Y') "
                        f"WHEN 10 THEN strftime(strptime({column}, '%Y-%m-%d'), '%B %-d, %Y') ELSE {column} END")
               for column in ("start_month_year", "completion_month_year", "primary_completion_month_year")},
        },
        "interventions": {"intervention_type": display.replace("v", "intervention_type")},
    }
    for table, changes in legacy.items():
        path = folder / f"{table}.txt"
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_csv(?, delim='|', quote='\"', escape='\"', "
                    "header=true, all_varchar=true, allow_quoted_nulls=false)", [str(path)])
        assert con.execute(f"SELECT count(*) FROM {table} WHERE {next(iter(changes))} IS NOT NULL").fetchone()[0] > 100
        for column, expression in changes.items():
            con.execute(f"UPDATE {table} SET {column} = {expression}")
        con.execute(f"COPY {table} TO '{path}' (DELIMITER '|', HEADER, QUOTE '\"', ESCAPE '\"')")
    assert "|Active not recruiting|" in (folder / "studies.txt").read_text(encoding="utf-8")
    wh = Warehouse(tmp_path / "w")
    shutil.copy(SAMPLE, tmp_path / "20261101_v2.zip")
    load_aact(wh, tmp_path / "20261101_v2.zip")
    older = load_aact(wh, folder)
    assert (older.counts.records, older.counts.quarantined, older.counts.versions_added) == (len(SAMPLE_IDS), 0, 0)
