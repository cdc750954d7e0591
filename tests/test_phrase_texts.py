"""The readers' matcher of a query's phrases and concepts (ctmirror/read/phrase_texts.py): the texts found outside
DuckDB's plan, from what the reader holds, are the ones the catalog's own field_texts_many finds in SQL, for every
field, cutoff and flag."""

from __future__ import annotations

import gc
import shutil
import weakref

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from held_readers import field_vocabulary, macro_definitions, sample_queries
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctmirror import Mirror
from ctmirror.core.words import query_norm
from ctmirror.read import list_answers
from ctmirror.read.list_answers import ListAnswers
from ctmirror.read.phrase_texts import SortedLookup, held_for

READER = "field_texts_many"  # the reader's temporary macro, found before the catalog's
CATALOG = "catalog.main.field_texts_many"  # the catalog's own, in SQL
FOUND = ("SELECT k, text_id, learned FROM {macro}($field, $queries::VARCHAR[], $as_ofs::DATE[], "
         "expand := $expand::BOOLEAN, skip_scattered := $skip::BOOLEAN) ORDER BY ALL")
CUTOFFS = [None, "2008-01-01", "2016-06-30", "2021-03-01"]


@pytest.fixture(scope="module")
def m(sample_warehouse):
    with Mirror(sample_warehouse) as mirror:
        yield mirror


def found_by(m: Mirror, macro: str, field: str, queries: list[str], as_of: str | None, expand: bool = True,
             skip: bool = False) -> list[tuple]:
    return [tuple(row.values()) for row in m.rows(FOUND.format(macro=macro), {
        "field": field, "queries": queries, "as_ofs": [as_of] * len(queries), "expand": expand, "skip": skip})]


def test_the_reader_finds_phrases_outside_the_plan(m):
    macros = macro_definitions(m, READER)
    assert macros.keys() == {"temp", "catalog"}
    assert "field_phrase_texts" in macros["temp"]
    assert "field_phrase_texts" not in macros["catalog"]


@pytest.fixture(scope="module")
def queries(m) -> dict[str, list[str]]:
    return sample_queries(m)


@pytest.mark.parametrize("field", ["condition", "intervention", "term"])
def test_the_sample_texts_find_what_the_catalogs_macro_finds_at_every_cutoff(m, queries, field):
    learned_at = {}
    for as_of in CUTOFFS[:3]:
        for expand, skip in [(True, False), (True, True), (False, False)]:
            found = found_by(m, READER, field, queries[field], as_of, expand, skip)
            assert found == found_by(m, CATALOG, field, queries[field], as_of, expand, skip)
            if expand and not skip:
                learned_at[as_of] = sum(learned for _, _, learned in found)
    # the cases compared are not trivial: links (headings, other names) were found, fewer at an earlier cutoff
    assert learned_at[None] > learned_at["2008-01-01"]


@pytest.fixture(scope="module")
def vocabulary(m) -> list[str]:
    return field_vocabulary(m)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_words_find_what_the_catalogs_macro_finds(m, vocabulary, data):
    field = data.draw(st.sampled_from(["condition", "intervention", "term"]))
    words = data.draw(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=4))
    query = query_norm(('"' if data.draw(st.booleans()) else "") + " ".join(words))
    as_of = data.draw(st.sampled_from(CUTOFFS))
    expand, skip = data.draw(st.booleans()), data.draw(st.booleans())
    assert (found_by(m, READER, field, [query], as_of, expand, skip)
            == found_by(m, CATALOG, field, [query], as_of, expand, skip))


def test_short_answers_come_as_text_and_long_ones_through_arrow_with_the_same_rows(m, queries, monkeypatch):
    taken = []  # the queries whose texts the Arrow function answered
    take = ListAnswers.take
    monkeypatch.setattr(ListAnswers, "take",
                        lambda self, *arguments: taken.append(arguments[1]) or take(self, *arguments))
    field, sample = "condition", queries["condition"]
    found = found_by(m, READER, field, sample, None)
    assert found == found_by(m, CATALOG, field, sample, None)
    texts = [(query, sum(1 for k, _, _ in found if k == i)) for i, query in enumerate(sample, 1)]
    # the queries answered through Arrow are those with more texts than a text answer holds, and there are both
    assert sorted(taken) == sorted(query for query, n in texts if n > list_answers.LISTED_LIMIT)
    assert 0 < len(taken) < len([n for _, n in texts if n])
    assert not m.phrase_texts._answers._kept  # each long answer the native function kept, its Arrow call took
    taken.clear()
    monkeypatch.setattr(list_answers, "LISTED_LIMIT", 0)  # every answer with a text is long now
    assert found_by(m, READER, field, sample, None) == found
    assert sorted(taken) == sorted(query for query, n in texts if n)


def test_a_long_answer_is_computed_once_and_kept_for_its_arrow_call_alone(monkeypatch):
    computed = []

    def answer(size: int) -> np.ndarray:
        computed.append(size)
        return np.arange(size, dtype=np.int64)

    answers = ListAnswers(answer)
    assert answers.listed(3) == "[0,1,2]" and answers.listed(0) == "[]"
    long = list_answers.LISTED_LIMIT + 1
    assert answers.listed(long) is None
    assert answers.take(long).tolist() == list(range(long)) and computed == [3, 0, long]  # kept, not computed again
    assert answers.take(long).tolist() == list(range(long)) and computed == [3, 0, long, long]  # taken once
    monkeypatch.setattr(list_answers, "KEPT_BYTES", 10 * long * 8)  # ten long answers
    for size in range(long, long + 15):  # calls whose Arrow half never came: the oldest are let go
        answers.listed(size)
    assert list(answers._kept) == [(size,) for size in range(long + 6, long + 15)]
    assert answers._kept_bytes == sum(found.nbytes for found in answers._kept.values())


def test_a_word_no_text_holds_and_an_empty_query_find_nothing(m):
    for query in [" zzqxv ", ' " ', "   ", " cancer zzqxv "]:
        for field in ("condition", "intervention", "term"):
            assert found_by(m, READER, field, [query], None) == found_by(m, CATALOG, field, [query], None) == []


def test_the_lookup_finds_every_key_in_the_order_duckdb_sorts_them():
    keys = ["b", "a", "é", "ä", "z", "中", "ab", "a b", "ß", "ǅ", "\U0001f600"]
    rows = duckdb.sql("SELECT k, i FROM (SELECT unnest($keys) AS k, generate_subscripts($keys, 1) AS i) ORDER BY k",
                      params={"keys": keys}).to_arrow_table()
    lookup = SortedLookup(rows.column(0).combine_chunks(), rows.column(1).combine_chunks())
    assert [lookup.get(key) for key in keys] == list(range(1, len(keys) + 1))
    assert lookup.get("aa") is None and lookup.get("") is None and lookup.get("\U0001f601") is None
    assert SortedLookup(pa.array([], pa.string()), pa.array([], pa.int32())).get("a") is None


def test_readers_of_one_catalog_share_what_they_hold_and_another_file_is_held_apart(sample_warehouse, tmp_path):
    with Mirror(sample_warehouse) as first, Mirror(sample_warehouse) as second:
        first.search_trials(drug="pembrolizumab", condition="breast cancer")
        assert second.phrase_texts._held is first.phrase_texts._held
        assert ("field_token",) in second.phrase_texts._held.items  # read by the first reader, for both
        copy = tmp_path / "catalog.duckdb"
        shutil.copyfile(first.state.catalog, copy)
        assert held_for(copy) is not first.phrase_texts._held
        assert held_for(first.state.catalog) is first.phrase_texts._held


def test_what_readers_held_is_let_go_when_the_last_reader_of_the_catalog_closes(sample_warehouse, tmp_path):
    """A server opens a new state's readers every night and closes the old ones: their catalog's index goes too."""
    # a copy: a catalog file no other reader of the tests holds
    alone = shutil.copytree(sample_warehouse, tmp_path / "warehouse", symlinks=True)
    with Mirror(alone) as mirror:
        mirror.get_landscape(condition="asthma")
        held = weakref.ref(mirror.phrase_texts._held)
        assert held() is not None and ("field_token",) in held().items
    del mirror
    gc.collect()
    assert held() is None
