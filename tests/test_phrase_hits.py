"""The readers' rows of a query's phrases and concepts (ctmirror/read/phrase_hits.py): the versions of the texts a
query finds, read from the search_hit rows a reader reads text by text or holds whole, are the rows the catalog's
own phrase_hit_rows_many joins in SQL, for every field, cutoff and flag."""

from __future__ import annotations

import numpy as np
import pytest
from held_readers import alone, field_vocabulary, macro_definitions, sample_queries
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctmirror import Mirror
from ctmirror.core.words import query_norm
from ctmirror.read import phrase_hits
from ctmirror.read.phrase_hits import FieldHits
from ctmirror.read.word_postings import VERSION_LIMIT

READER = "phrase_hit_rows_many"  # the reader's temporary macro, found before the catalog's
CATALOG = "catalog.main.phrase_hit_rows_many"  # the catalog's own, in SQL
FOUND = ("SELECT k, version_no, area_mask FROM {macro}($field, $queries::VARCHAR[], $as_ofs::DATE[], "
         "expand := $expand::BOOLEAN, stopped_only := $stopped::BOOLEAN, skip_scattered := $skip::BOOLEAN) "
         "ORDER BY ALL")
CUTOFFS = [None, "2008-01-01", "2016-06-30", "2021-03-01"]


@pytest.fixture(scope="module", params=["text by text", "whole fields"])
def m(request, sample_warehouse, tmp_path_factory):
    """A reader that reads each query's texts' rows with a query of its own, or one holding both fields whole."""
    with pytest.MonkeyPatch.context() as patch, \
            Mirror(alone(sample_warehouse, tmp_path_factory.mktemp("hits"))) as mirror:
        if request.param == "text by text":
            patch.setattr(phrase_hits, "WHOLE_FIELD_AFTER", 10 ** 9)
        else:
            for field in phrase_hits.FIELDS:
                assert mirror.phrase_hits._hold_whole_field(field) is not None
        yield mirror
        assert mirror.phrase_hits.fields_held() == (set() if request.param == "text by text"
                                                    else {"condition", "intervention"})


def found_by(m: Mirror, macro: str, field: str, queries: list[str], as_of: str | None, expand: bool = True,
             skip: bool = False, stopped: bool = False) -> list[tuple]:
    return [tuple(row.values()) for row in m.rows(FOUND.format(macro=macro), {
        "field": field, "queries": queries, "as_ofs": [as_of] * len(queries), "expand": expand, "skip": skip,
        "stopped": stopped})]


def test_the_reader_finds_the_versions_of_phrases_outside_the_plan(m):
    macros = macro_definitions(m, READER)
    assert macros.keys() == {"temp", "catalog"}
    assert "field_phrase_hits" in macros["temp"]
    assert "field_phrase_hits" not in macros["catalog"]


@pytest.fixture(scope="module")
def queries(m) -> dict[str, list[str]]:
    return sample_queries(m)


@pytest.mark.parametrize("field", ["condition", "intervention", "term"])
def test_the_sample_texts_find_the_versions_the_catalogs_macro_finds_at_every_cutoff(m, queries, field):
    concept_rows = {}
    for as_of in CUTOFFS[:3]:
        for expand, skip, stopped in [(True, False, False), (True, True, False), (False, False, False),
                                      (True, False, True)]:
            found = found_by(m, READER, field, queries[field], as_of, expand, skip, stopped)
            assert found == found_by(m, CATALOG, field, queries[field], as_of, expand, skip, stopped)
            if expand and not skip and not stopped:
                assert len({k for k, _, _ in found}) > len(queries[field]) // 2
                concept_rows[as_of] = sum(1 for _, _, mask in found if mask >> 16)  # a learned link's lane
    # links found more versions at the current state than at the earliest cutoff
    assert concept_rows[None] > concept_rows["2008-01-01"]


@pytest.fixture(scope="module")
def vocabulary(m) -> list[str]:
    return field_vocabulary(m)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_words_find_the_versions_the_catalogs_macro_finds(m, vocabulary, data):
    field = data.draw(st.sampled_from(["condition", "intervention"]))
    words = data.draw(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=4))
    query = query_norm(('"' if data.draw(st.booleans()) else "") + " ".join(words))
    as_of = data.draw(st.sampled_from(CUTOFFS))
    expand, skip = data.draw(st.booleans()), data.draw(st.booleans())
    assert (found_by(m, READER, field, [query], as_of, expand, skip)
            == found_by(m, CATALOG, field, [query], as_of, expand, skip))


def test_the_methods_answer_alike_whether_a_reader_holds_the_fields_or_not(sample_warehouse, tmp_path, monkeypatch):
    """The contract methods' answers on a reader reading text by text and on one holding both fields whole."""
    calls = [("search_trials", {"drug": "insulin", "condition": "diabetes"}),
             ("search_trials", {"drug": "metformin", "condition": "type 2 diabetes", "date_before": "2015-01-01"}),
             ("detect_whitespace", {"drug": "pembrolizumab", "condition": "lung cancer"}),
             ("get_landscape", {"condition": "breast cancer", "date_before": "2019-06-01"}),
             ("search", {"condition": "asthma", "intervention": "budesonide"})]
    with Mirror(alone(sample_warehouse, tmp_path)) as mirror:
        monkeypatch.setattr(phrase_hits, "WHOLE_FIELD_AFTER", 10 ** 9)
        by_text = [repr(mirror.call(name, **arguments)) for name, arguments in calls]
        for field in phrase_hits.FIELDS:
            mirror.phrase_hits._hold_whole_field(field)
        assert [repr(mirror.call(name, **arguments)) for name, arguments in calls] == by_text
    assert "Trial(" in by_text[0] and "Trial(" in by_text[1]


def test_a_reader_that_answered_many_queries_of_a_field_holds_the_field_for_every_reader_of_its_catalog(
        sample_warehouse, tmp_path):
    with Mirror(alone(sample_warehouse, tmp_path)) as first, Mirror(first.warehouse.root) as second:
        conditions = [row["norm"] for row in first.rows(
            "SELECT DISTINCT t.norm FROM search_text AS t JOIN search_hit AS h USING (text_id) "
            "WHERE h.field = 'condition' ORDER BY t.norm LIMIT $n", {"n": phrase_hits.WHOLE_FIELD_AFTER + 1})]
        for condition in conditions[:-1]:
            found_by(first, READER, "condition", [condition], None)
        assert first.phrase_hits.fields_held() == set()
        before = found_by(first, CATALOG, "condition", conditions, None)
        found_by(first, READER, "condition", [conditions[-1]], None)  # the query after the last one read so
        assert first.phrase_hits.fields_held() == second.phrase_hits.fields_held() == {"condition"}
        assert found_by(second, READER, "condition", conditions, None) == before



def test_a_long_running_reader_holds_a_field_after_a_few_queries_where_a_default_reader_does_not(sample_warehouse,
                                                                                                 tmp_path):
    with Mirror(alone(sample_warehouse, tmp_path / "a"), long_running=True) as eager, \
            Mirror(alone(sample_warehouse, tmp_path / "b")) as default:
        conditions = [row["norm"] for row in eager.rows(
            "SELECT DISTINCT t.norm FROM search_text AS t JOIN search_hit AS h USING (text_id) "
            "WHERE h.field = 'condition' ORDER BY t.norm LIMIT $n",
            {"n": phrase_hits.WHOLE_FIELD_AFTER_LONG_RUNNING + 1})]
        for condition in conditions:
            assert found_by(eager, READER, "condition", [condition], None) == \
                found_by(default, READER, "condition", [condition], None)
        assert eager.phrase_hits.fields_held() == {"condition"}
        assert default.phrase_hits.fields_held() == set()


def test_rows_out_of_order_are_held_by_text_and_version():
    texts = np.array([7, 3, 7, 3, 9], np.int64)
    versions = np.array([50, 40, 20, 10, 30], np.int64)
    held = FieldHits.of_rows(texts, versions, np.array([1, 2, 4, 8, 16], np.uint32))
    packed = held.hits_of(np.array([3 << 1, (7 << 1) | 1, 5 << 1], np.int64))  # text 5 is not held
    assert [(int(v >> 17), int(v >> 16) & 1, int(v & 0xFFFF)) for v in packed] == [
        (10, 0, 8), (40, 0, 2), (20, 1, 4), (50, 1, 1)]
    assert len(FieldHits.of_rows(*(np.empty(0, np.int64),) * 3).hits_of(np.array([2], np.int64))) == 0


def test_a_version_too_large_or_areas_too_wide_to_pack_are_refused():
    with pytest.raises(ValueError, match="version number"):
        FieldHits.of_rows(np.array([1]), np.array([VERSION_LIMIT]), np.array([1]))
    with pytest.raises(ValueError, match="area mask"):
        FieldHits.of_rows(np.array([1]), np.array([1]), np.array([1 << 16]))


def test_a_batch_of_search_trials_joins_its_texts_rows_in_the_plan_and_answers_as_each_call_alone(
        sample_warehouse, tmp_path, monkeypatch):
    """One search_trials call reads its texts' rows from the reader's function; a batch's calls, from one join in
    the plan ($many_calls: hits_in_plan), with the answers each call has alone."""
    calls = [("search_trials", {"drug": drug, "condition": condition, "date_before": cutoff})
             for drug, condition, cutoff in [("insulin", "diabetes", None), ("metformin", "type 2 diabetes", None),
                                             ("tadalafil", "erectile dysfunction", "2015-01-01"),
                                             ("insulin glargine", "diabetes mellitus", "2012-06-30")]]
    asked = []  # the (field, query) pairs the reader's function answered
    answer = phrase_hits.PhraseHits._packed_hits
    monkeypatch.setattr(phrase_hits.PhraseHits, "_packed_hits",
                        lambda self, *arguments: asked.append(arguments[:2]) or answer(self, *arguments))
    with Mirror(alone(sample_warehouse, tmp_path)) as mirror:
        each_alone = [mirror.call(name, **arguments) for name, arguments in calls]
        assert sum(map(bool, each_alone)) >= 3
        assert {("intervention", query_norm("insulin")), ("condition", query_norm("diabetes"))} <= set(asked)
        asked.clear()
        assert mirror.batch(calls) == each_alone
        assert asked == []
