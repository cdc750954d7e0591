"""An imported MeSH descriptor file (tests/data/mesh/desc_sample.xml: NLM's real format, seven descriptors) as the
matcher's synonyms: a lay term finds its heading's studies, and the guards hold (preferred concept only, searched
trees only, ambiguous terms left out)."""

from __future__ import annotations

import csv
import gzip
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctmirror import Mirror
from ctmirror.cli import app
from ctmirror.core.errors import InputError
from ctmirror.server import v2
from ctmirror.server.app import Settings
from ingest.thesaurus import import_mesh, thesaurus_files

DESCRIPTORS = Path(__file__).parent / "data" / "mesh" / "desc_sample.xml"


def groups(path: Path) -> dict[tuple[str, str], set[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        found: dict[tuple[str, str], set[str]] = {}
        for row in csv.DictReader(f):
            found.setdefault((row["field"], row["group_name"]), set()).add(row["phrase"])
        return found


@pytest.mark.parametrize("compressed", [False, True])
def test_an_nlm_descriptor_file_becomes_synonym_groups(tmp_path, compressed):
    source = DESCRIPTORS
    if compressed:
        source = tmp_path / "desc.xml.gz"
        source.write_bytes(gzip.compress(DESCRIPTORS.read_bytes()))
    imported = import_mesh(tmp_path / "warehouse", source)
    assert (imported.descriptors, imported.groups, imported.ambiguous) == (7, 4, 1)
    assert thesaurus_files(tmp_path / "warehouse") == [imported.path]
    found = groups(imported.path)
    assert {"Myocardial Infarction", "Heart Attack", "Infarction, Myocardial"} <= found[("condition", "mesh D009203")]
    assert "Heart Attacks" not in found[("condition", "mesh D009203")]  # the same phrase as Heart Attack
    assert "Cancer" in found[("condition", "mesh D009369")]
    assert "Benign Neoplasms" not in found[("condition", "mesh D009369")]  # a narrower concept, not a synonym
    assert "Platinol" in found[("intervention", "mesh D002945")]  # a drug (tree D) is an intervention's
    assert not [g for g in found if g[1] in ("mesh D001769", "mesh D003139", "mesh D003081")]  # anatomy; "Cold"


def test_a_file_that_is_not_a_descriptor_file_is_refused(tmp_path):
    (tmp_path / "notes.xml").write_text("<notes><note>hi</note></notes>")
    (tmp_path / "broken.xml").write_text("<DescriptorRecordSet><DescriptorRecord>")
    for path, words in [(tmp_path / "notes.xml", "no DescriptorRecord"), (tmp_path / "broken.xml", "not a MeSH"),
                        (tmp_path / "absent.xml", "not a file")]:
        with pytest.raises(InputError, match=words):
            import_mesh(tmp_path / "warehouse", path)
    assert thesaurus_files(tmp_path / "warehouse") == []


@pytest.mark.slow
def test_an_imported_thesaurus_expands_every_surface(sample_warehouse, tmp_path):
    from test_serve import LoopbackServer

    warehouse = tmp_path / "warehouse"
    shutil.copytree(sample_warehouse, warehouse, symlinks=True)
    # "Cardiovascular Stroke", an entry term of Myocardial Infarction the built-in synonym files do not hold
    heart_attack = {"query.cond": '"cardiovascular stroke"', "pageSize": "1000"}
    with Mirror(warehouse) as m:
        assert v2.make_search_tables(m)
        assert v2.studies(m, heart_attack, None)[0]["studies"] == []
        infarction = {s["protocolSection"]["identificationModule"]["nctId"] for s in v2.studies(
            m, {"query.cond": '"myocardial infarction"', "pageSize": "1000"}, None)[0]["studies"]}
    assert infarction
    done = CliRunner().invoke(app, ["-w", str(warehouse), "thesaurus", "import", str(DESCRIPTORS)])
    assert done.exit_code == 0, done.output
    assert "4 MeSH headings with 14 phrases" in done.output and "published state 000002" in done.output
    with Mirror(warehouse) as m:
        assert v2.make_search_tables(m)
        found = {s["protocolSection"]["identificationModule"]["nctId"]
                 for s in v2.studies(m, heart_attack, None)[0]["studies"]}
        assert infarction <= found
        off = v2.studies(m, {**heart_attack, "query.cond": 'EXPANSION[None]("cardiovascular stroke")'}, None)[0]
        assert off["studies"] == []
        assert {s.nct_id.replace("NCT:", "NCT")
                for s in m.search(condition='"cardiovascular stroke"', page_size=200).items} >= infarction
    shown = CliRunner().invoke(app, ["-w", str(warehouse), "synonyms", "heart attack"])
    assert "myocardial infarction  (mesh D009203)" in shown.output
    with LoopbackServer(Settings(warehouse)) as client:
        answer = client.get("/ctmirror/v1/synonyms", params={"term": "cis-Diamminedichloroplatinum(II)",
                                                              "field": "intervention"}).json()
        assert {"kind": "synonym", "phrase": "cisplatin", "source": "mesh D002945"}.items() <= \
            next(e for e in answer["expansions"] if e["phrase"] == "cisplatin").items()
        refused = client.get("/ctmirror/v1/synonyms", params={"term": "x", "field": "drug"})
        assert refused.status_code == 400 and "condition, intervention or term" in refused.text
