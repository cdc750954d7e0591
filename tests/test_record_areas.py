"""AREA[...] of every leaf field of the study record: the fields with no area of their own (a result's group title,
an official's affiliation, a document's upload date) matched on the records shown, by their type, each answer
checked against the sample's records read here independently; at a cutoff, nothing the registry published later
is found."""

from __future__ import annotations

from datetime import date

import pytest
from test_field_stats import values_at

from ctmirror import Mirror
from ctmirror.core.words import search_norm
from ctmirror.server import essie, v2
from ctmirror.server.v2 import record_areas
from ctmirror.server.v2.areas import area_context
from ctmirror.server.v2.field_stats import catalogue


@pytest.fixture(scope="module")
def m(sample_mirror):
    return sample_mirror


def found(m: Mirror, query: str, as_of: date | None = None) -> set[str]:
    """Every NCT ID that filter.advanced=`query` finds (the search's own IDs: no record read)."""
    ids, total = v2.matching_nct_ids(m, {"filter.advanced": query}, as_of, 10_000)
    assert len(ids) == total
    return set(ids)


def having(records: list[dict], piece: str, test) -> set[str]:
    """The studies whose values of field `piece` (all of them, as a list) pass `test`."""
    path = catalogue()[0][piece].path
    return {r["protocolSection"]["identificationModule"]["nctId"] for r in records
            if test([v for v in values_at(r, path) if v not in (None, "")])}


def words_in(words: str):
    return lambda values: all(any(f" {w} " in search_norm(str(v)) for v in values) for w in search_norm(words).split())


@pytest.mark.slow  # a field of each type, each a v2 search against the records
def test_fields_with_no_area_of_their_own_are_matched_by_their_type(m, records):
    phrase = search_norm("university hospital")
    expected = {
        # text: unquoted words each in any of the study's values; a quoted phrase in one
        "AREA[OverallOfficialAffiliation](university hospital)": having(
            records, "OverallOfficialAffiliation", words_in("university hospital")),
        'AREA[OverallOfficialAffiliation]"university hospital"': having(
            records, "OverallOfficialAffiliation", lambda vs: any(phrase in search_norm(v) for v in vs)),
        "AREA[OutcomeMeasureTitle]COVERAGE[StartsWith](change from baseline)": having(
            records, "OutcomeMeasureTitle",
            lambda vs: any(search_norm(v).startswith(search_norm("change from baseline")) for v in vs)),
        "AREA[ConditionBrowseLeafName]cardi*": having(
            records, "ConditionBrowseLeafName", lambda vs: any(" cardi" in search_norm(v) for v in vs)),
        # an enumeration, a boolean (by piece name and by field path)
        "AREA[DesignWhoMasked]PARTICIPANT": having(records, "DesignWhoMasked", lambda vs: "PARTICIPANT" in vs),
        "AREA[OversightHasDMC]false": having(records, "OversightHasDMC", lambda vs: False in vs),
        "AREA[protocolSection.oversightModule.isFdaRegulatedDrug]true": having(
            records, "IsFDARegulatedDrug", lambda vs: True in vs),
        # a number and a date by RANGE (a year standing for all its days); MISSING
        "AREA[EventGroupSeriousNumAffected]RANGE[10, MAX]": having(
            records, "EventGroupSeriousNumAffected", lambda vs: any(v >= 10 for v in vs)),
        "AREA[LargeDocUploadDate]RANGE[2017, 2018]": having(
            records, "LargeDocUploadDate", lambda vs: any("2017" <= v[:4] <= "2018" for v in vs)),
        "AREA[ReferenceCitation]MISSING": having(records, "ReferenceCitation", lambda vs: not vs),
        # a text area of the index: its MISSING too
        "AREA[Keyword]MISSING": having(records, "Keyword", lambda vs: not vs),
    }
    record_areas.shown_values(m, None, ["OverallOfficialAffiliation", "OutcomeMeasureTitle", "ConditionBrowseLeafName",
                                        "DesignWhoMasked", "OversightHasDMC", "IsFDARegulatedDrug",
                                        "EventGroupSeriousNumAffected", "LargeDocUploadDate", "ReferenceCitation",
                                        "Keyword"])  # one pass over the records for all
    for query, wanted in expected.items():
        assert 0 < len(wanted) < len(records), query  # a test that can fail both ways
        assert found(m, query) == wanted, query
    # combined with the index's areas and the structured fields, as any term
    phase3 = having(records, "Phase", lambda vs: "PHASE3" in vs)
    assert found(m, "AREA[OverallOfficialAffiliation](university hospital) AND AREA[Phase]PHASE3") == \
        expected["AREA[OverallOfficialAffiliation](university hospital)"] & phase3
    assert found(m, "NOT AREA[DesignWhoMasked]PARTICIPANT") == \
        {r["protocolSection"]["identificationModule"]["nctId"] for r in records} - \
        expected["AREA[DesignWhoMasked]PARTICIPANT"]


def test_a_term_that_does_not_fit_the_field_is_a_400_naming_it(m):
    for query, says in (("AREA[OversightHasDMC]maybe", "true or false"),
                        ("AREA[ReferenceCitation]RANGE[1, 2]", "ReferenceCitation"),
                        ("AREA[EventGroupSeriousNumAffected]RANGE[many, MAX]", "not a number"),
                        ("AREA[LargeDocUploadDate]RANGE[last year, MAX]", "not a date"),
                        ("AREA[DesignWhoMasked]COVERAGE[FullMatch]PARTICIPANT", "COVERAGE"),
                        ("AREA[NoSuchField]x", "no field of the study record")):
        with pytest.raises(v2.V2Error, match=says):
            found(m, query)


def test_a_list_fields_size_is_matched_as_the_records_hold_it(m, records):
    """AREA[ListField:size]: the size of a list (a nested list's elements summed over the study; none: 0), by a
    number, RANGE or MISSING, by piece name or field path, against the records' own lists."""
    def size(record: dict, path: tuple[str, ...]) -> int:
        def walk(node, parts) -> int:
            if not parts:
                return len(node) if isinstance(node, list) else 0
            if isinstance(node, list):
                return sum(walk(item, parts) for item in node)
            return walk(node.get(parts[0]), parts[1:]) if isinstance(node, dict) else 0
        return walk(record, path)

    def sized(piece: str, test) -> set[str]:
        path = catalogue()[1][piece].path
        return {r["protocolSection"]["identificationModule"]["nctId"] for r in records if test(size(r, path))}

    two_phases = sized("Phase", lambda n: n == 2)
    assert two_phases and found(m, "AREA[Phase:size]2") == two_phases == \
        found(m, "AREA[protocolSection.designModule.phases:size]2")
    assert found(m, "AREA[Phase:size]MISSING") == found(m, "AREA[Phase:size]0") == sized("Phase", lambda n: n == 0)
    assert found(m, "AREA[Condition:size]RANGE[3, MAX]") == sized("Condition", lambda n: n >= 3)
    assert found(m, "AREA[Location:size]RANGE[MIN, 2]") == sized("Location", lambda n: n <= 2)
    nested = sized("ArmGroupInterventionName", lambda n: n >= 4)  # each arm's interventions, summed
    assert nested and found(m, "AREA[ArmGroupInterventionName:size]RANGE[4, MAX]") == nested
    for query, says in (("AREA[BriefTitle:size]1", "takes a list field"), ("AREA[Phase:size]two", "not a size"),
                        ("AREA[Phase:size]asthma*", "takes a size")):
        with pytest.raises(v2.V2Error, match=says):
            found(m, query)


def test_at_a_cutoff_nothing_published_later_is_found(sample_warehouse, records):
    cutoff = date(2016, 1, 1)
    uploaded = having(records, "LargeDocUploadDate", lambda vs: any(v[:10] > "2016-01-01" for v in vs))
    results_later = {r["protocolSection"]["identificationModule"]["nctId"] for r in records
                     if r.get("resultsSection") and r["protocolSection"]["statusModule"]
                     .get("resultsFirstPostDateStruct", {}).get("date", "9999") > "2016-01-01"}
    assert uploaded and results_later
    with Mirror(sample_warehouse, as_of=cutoff) as then:
        assert found(then, "AREA[LargeDocUploadDate]RANGE[2016-01-02, MAX]", cutoff) == set()
        shown_results = found(then, "AREA[OutcomeMeasureParamType]MEAN", cutoff)
        assert shown_results and not shown_results & results_later
        now = found(then, "AREA[OutcomeMeasureParamType]MEAN")
        assert now & results_later  # the same reader, asked about today, finds them


@pytest.mark.slow  # every leaf field: 10 s
def test_every_leaf_field_is_usable_in_an_area(m, records, monkeypatch):
    """AREA[field]MISSING of every leaf field finds the studies without a value: the 76 with areas of their own
    through a request each, the 266 read from the records through the values the request would match."""
    leaves = catalogue()[0]
    assert len(leaves) > 300 and all(area_context(piece) is not None for piece in leaves)
    read = [piece for piece in leaves if area_context(piece).kind == "record"]
    assert len(read) > 250
    monkeypatch.setattr(record_areas, "KEPT_FIELDS", len(leaves))  # one pass over the records for all
    record_areas.shown_values(m, None, [p for p in leaves if area_context(p).kind != "value"])  # MISSING's too
    nct_of = dict(m.con.execute("SELECT version_no, nct_id FROM trial_card WHERE is_current").fetchall())
    checked = records[::3]  # every field, judged on a third of the studies (their truth is read field by field)
    ids = {r["protocolSection"]["identificationModule"]["nctId"] for r in checked}
    missing = {piece: having(checked, piece, lambda vs: not vs) for piece in leaves}
    missing["HasResults"] = set()  # derived: 504 records of the sample lack it, which says no results, not none
    wrong = [piece for piece in read if ids & {nct_of[v] for v in record_areas.matching_versions(
        m, None, piece, essie.Missing(), "contains")} != missing[piece]]
    wrong += [piece for piece in leaves
              if piece not in read and ids & found(m, f"AREA[{piece}]MISSING") != missing[piece]]
    assert wrong == []
    assert ids & found(m, f"AREA[{read[0]}]MISSING") == missing[read[0]]  # the same values, through a request
