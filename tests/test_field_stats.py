"""/api/v2/stats/field/values and /stats/field/sizes for every field of the record: each answer valid by the
official spec's schema for its type, its figures those of the sample's records, the fields counted in SQL equal to
the same fields read from the records, and nothing after a reader's cutoff."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path

import jsonschema
import pytest

from ctmirror import Mirror
from ctmirror.core.sqlfiles import read_sql
from ctmirror.server import v2
from ctmirror.server.records import record_as_of
from ctmirror.server.v2 import field_stats

SCHEMAS = json.loads((Path(__file__).parent / "data" / "spec" / "field-stats-schemas.json").read_text())
SCHEMA_OF = {"ENUM": "EnumStats", "STRING": "StringStats", "DATE": "DateStats", "INTEGER": "IntegerStats",
             "NUMBER": "NumberStats", "BOOLEAN": "BooleanStats"}


def valid(answer: dict, schema: str) -> None:
    jsonschema.validate(answer, {"$ref": f"#/components/schemas/{schema}", "components": {"schemas": SCHEMAS}})


@pytest.fixture(scope="module")
def m(sample_mirror):
    return sample_mirror


def values_of(m: Mirror, fields: list[str] | None) -> dict[str, dict]:
    return {a["piece"]: a for a in field_stats.field_values(m, fields)}


def values_at(record: dict, path: tuple[str, ...]) -> list:
    """Every value at a path of a record, through lists (independent of ctmirror's walk)."""
    nodes = [record]
    for part in path:
        nodes = [n.get(part) for n in nodes if isinstance(n, dict)]
        nodes = [i for n in nodes if n is not None for i in (n if isinstance(n, list) else [n])]
    return nodes


@pytest.mark.slow  # every field of every record: 3 s
def test_every_leaf_field_is_answered_as_the_spec_shapes_its_type(m):
    every_value = values_of(m, None)
    leaves = field_stats.catalogue()[0]
    assert set(every_value) == set(leaves) and len(leaves) > 300
    for piece, answer in every_value.items():
        valid({**answer, **({"topValues": answer["topValues"][:3]} if "topValues" in answer else {})},
              SCHEMA_OF[answer["type"]])
        assert answer["type"] == leaves[piece].kind and answer["field"] == ".".join(leaves[piece].path)
    kinds = Counter(a["type"] for a in every_value.values())
    assert all(kinds[k] > 0 for k in SCHEMA_OF), kinds


def test_the_figures_are_the_records(m, records):
    every_value = values_of(m, ["LocationCountry", "EnrollmentCount", "StartDate", "HasExpandedAccess", "OrgStudyId",
                                "DetailedDescription"])

    def studies_with(path: tuple[str, ...]) -> list[tuple[str, list]]:
        return [(r["protocolSection"]["identificationModule"]["nctId"], values_at(r, path)) for r in records]

    country = every_value["LocationCountry"]
    counted = Counter(v for _, vs in studies_with(("protocolSection", "contactsLocationsModule", "locations",
                                                   "country")) for v in set(vs))
    assert {v["value"]: v["studiesCount"] for v in country["topValues"]} == dict(counted)
    assert country["missingStudiesCount"] == sum(1 for _, vs in studies_with(
        ("protocolSection", "contactsLocationsModule", "locations", "country")) if not vs)
    enrollment = every_value["EnrollmentCount"]
    counts = [v for _, vs in studies_with(("protocolSection", "designModule", "enrollmentInfo", "count")) for v in vs]
    assert (enrollment["min"], enrollment["max"]) == (min(counts), max(counts))
    assert enrollment["avg"] == pytest.approx(sum(counts) / len(counts))
    start = every_value["StartDate"]
    days = [v for _, vs in studies_with(("protocolSection", "statusModule", "startDateStruct", "date")) for v in vs]
    assert (start["min"], start["max"]) == (min(days), max(days)) and set(start["formats"]) == {"yyyy-MM",
                                                                                             "yyyy-MM-dd"}
    access = every_value["HasExpandedAccess"]
    flags = Counter(v for _, vs in studies_with(("protocolSection", "statusModule", "expandedAccessInfo",
                                                 "hasExpandedAccess")) for v in set(vs))
    assert (access["trueCount"], access["falseCount"]) == (flags[True], flags[False]) and flags[False] > 0
    org = every_value["OrgStudyId"]
    ids = studies_with(("protocolSection", "identificationModule", "orgStudyIdInfo", "id"))
    length = max(len(v) for _, vs in ids for v in vs)
    longest = min(v for _, vs in ids for v in vs if len(v) == length)
    assert org["longest"] == {"length": length, "value": longest,
                              "nctId": min(n for n, vs in ids if longest in vs)}
    prose = every_value["DetailedDescription"]
    assert len(prose["topValues"]) == field_stats.TOP_PROSE_VALUES < prose["uniqueValuesCount"]


def test_the_fields_counted_in_sql_are_those_read_from_the_records(m, monkeypatch):
    in_sql = {a["piece"]: a for a in field_stats.field_values(m, list(field_stats.VALUE_SQL))}
    sizes_in_sql = {a["piece"]: a for a in field_stats.field_sizes(m, list(field_stats.SIZE_SQL))}
    monkeypatch.setattr(field_stats, "VALUE_SQL", ())
    monkeypatch.setattr(field_stats, "SIZE_SQL", ())
    monkeypatch.setattr(field_stats, "_KEPT", {})
    read = {a["piece"]: a for a in field_stats.field_values(m, list(in_sql))}
    assert read == in_sql
    assert {a["piece"]: a for a in field_stats.field_sizes(m, list(sizes_in_sql))} == sizes_in_sql


def test_list_sizes_of_every_list_field(m, records):
    answers = {a["piece"]: a for a in field_stats.field_sizes(m, None)}
    assert set(answers) == set(field_stats.catalogue()[1])
    for answer in answers.values():
        valid(answer, "ListSizes")
    sites = Counter(len(r["protocolSection"].get("contactsLocationsModule", {}).get("locations", []))
                    for r in records)
    del sites[0]
    assert {s["size"]: s["studiesCount"] for s in answers["Location"]["topSizes"]} == dict(sites)
    names = Counter(sum(len(a.get("interventionNames", [])) for a in r["protocolSection"].get(
        "armsInterventionsModule", {}).get("armGroups", [])) for r in records)  # summed over a study's arms
    del names[0]
    assert {s["size"]: s["studiesCount"] for s in answers["ArmGroupInterventionName"]["topSizes"]} == dict(names)
    [by_path] = field_stats.field_sizes(m, ["protocolSection.designModule.phases"])
    assert by_path == answers["Phase"]
    with pytest.raises(v2.V2Error, match="not a list field"):
        field_stats.field_sizes(m, ["BriefTitle"])


def test_fields_by_path_types_and_unknown_names(m):
    named = values_of(m, ["OverallStatus", "Condition"])
    assert field_stats.field_values(m, ["protocolSection.statusModule.overallStatus", "condition"]) == [
        named["OverallStatus"], named["Condition"]]
    dates = field_stats.field_values(m, None, ["date"])
    assert dates and {a["type"] for a in dates} == {"DATE"}
    with pytest.raises(v2.V2Error, match="not a leaf field"):
        field_stats.field_values(m, ["Nonsense"])
    with pytest.raises(v2.V2Error, match="types"):
        field_stats.field_values(m, None, ["COLOUR"])


def test_a_reader_at_a_cutoff_counts_nothing_from_after_it(sample_warehouse, m):
    every_value = values_of(m, ["OverallStatus", "LastUpdateSubmitDate"])
    cutoff = date(2016, 3, 1)
    with Mirror(sample_warehouse, as_of=cutoff) as then:
        answers = {a["piece"]: a for a in field_stats.field_values(
            then, ["LastUpdateSubmitDate", "StudyFirstPostDate", "ResultsFirstSubmitDate", "OverallStatus",
                   "LargeDocUploadDate", "EnrollmentType"])}
    for piece in ("LastUpdateSubmitDate", "StudyFirstPostDate", "ResultsFirstSubmitDate", "LargeDocUploadDate"):
        assert answers[piece].get("max", "")[:10] <= cutoff.isoformat(), piece
    shown = sum(v["studiesCount"] for v in answers["OverallStatus"]["topValues"])
    assert 0 < shown < sum(v["studiesCount"] for v in every_value["OverallStatus"]["topValues"])
    assert every_value["LastUpdateSubmitDate"]["max"] > cutoff.isoformat()


def test_at_a_cutoff_the_parts_read_are_the_whole_record_as_of_it(sample_warehouse):
    """At a cutoff only the parts asked for are decoded, with what record_as_of needs to judge them: the values of
    fields whose fate at a cutoff hangs on a part not asked for (a document's upload date, a date's or an
    enrollment's type, the shown status), study by study, are those of the whole record made as of the cutoff."""
    cutoff = date(2019, 6, 1)
    judged = ["LargeDocFilename", "PrimaryCompletionDate", "EnrollmentCount", "UnpostedEventType", "LastKnownStatus",
              "OutcomeMeasureTitle", "StatusVerifiedDate"]
    trie = field_stats.paths_trie([field_stats.catalogue()[0][piece] for piece in judged])
    with Mirror(sample_warehouse, as_of=cutoff) as then:
        parts = {row["nct_id"]: field_stats.gather_values(record, trie)
                 for row, record in field_stats.shown_records(then, trie, cutoff)}
        rows = [dict(zip(v2.PAGE_COLUMNS, row)) for row in then.con.execute(
            read_sql("serve/shown_records.sql"), {"as_of": cutoff}).fetchall()]
        whole = {row["nct_id"]: field_stats.gather_values(record_as_of(json.loads(text), row, cutoff), trie)
                 for row, text in zip(rows, v2.stored_texts(then, rows))}
    assert len(whole) > 300 and parts == whole
    assert set(judged) == {piece for values in whole.values() for piece in values}
