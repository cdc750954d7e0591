"""The readers' matcher of Essie's scattered words (ctmirror/read/word_postings.py): the versions holding every word
of an unquoted query, intersected outside DuckDB's plan, are the ones the catalog's own macro finds in SQL."""

from __future__ import annotations

import threading
import time

import duckdb
import pyarrow as pa
import pytest
from held_readers import alone, macro_definitions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctmirror import Mirror
from ctmirror.core.sqlfiles import read_sql
from ctmirror.read import word_postings
from ctmirror.read.readonly import QueryFailed
from ctmirror.read.word_postings import VERSION_LIMIT, FieldPostings, WordVersions

READER = "scattered_word_versions_many"  # the reader's temporary macro, found before the catalog's
CATALOG = "catalog.main.scattered_word_versions_many"  # the catalog's own, in SQL
FOUND = ("SELECT k, version_no, area_mask FROM {macro}($field, $queries::VARCHAR[], within := $within::UINTEGER) "
         "ORDER BY ALL")


@pytest.fixture(scope="module", params=["word by word", "whole fields"])
def m(request, sample_warehouse, tmp_path_factory):
    """A reader that reads each word's versions with a query of its own, or one holding both fields' whole rows."""
    with pytest.MonkeyPatch.context() as patch, \
            Mirror(alone(sample_warehouse, tmp_path_factory.mktemp("words"))) as mirror:
        if request.param == "word by word":
            patch.setattr(word_postings, "WHOLE_FIELD_AFTER", 10 ** 9)
        else:
            for field in ("condition", "intervention"):
                mirror.word_versions._hold_whole_field(field)
            assert mirror.word_versions.fields_held() == {"condition", "intervention"}
        yield mirror
        assert mirror.word_versions.fields_held() == (set() if request.param == "word by word"
                                                      else {"condition", "intervention"})


@pytest.fixture(scope="module")
def vocabulary(m) -> dict[str, list[str]]:
    """Each field's words, the commonest first: pairs of them are found together in some studies, not in others."""
    rows = m.rows("SELECT field, token FROM search_word GROUP BY ALL HAVING count(*) >= 3 "
                  "ORDER BY field, count(*) DESC, token")
    words: dict[str, list[str]] = {}
    for row in rows:
        words.setdefault(row["field"], []).append(row["token"])
    return {field: found[:300] for field, found in words.items()}


def found_by(m: Mirror, macro: str, field: str, queries: list[str], within: int | None = None) -> list[tuple]:
    return [tuple(row.values()) for row in m.rows(FOUND.format(macro=macro),
                                                  {"field": field, "queries": queries, "within": within})]


def test_the_reader_intersects_outside_the_plan(m):
    macros = macro_definitions(m, READER)
    assert macros.keys() == {"temp", "catalog"}
    assert "intersect_word_versions" in macros["temp"]
    assert "intersect_word_versions" not in macros["catalog"]


def test_the_sample_conditions_and_drugs_find_what_the_catalogs_macro_finds(m):
    for field in ("condition", "intervention"):
        queries = [row["norm"] for row in m.rows(
            "SELECT DISTINCT t.norm FROM search_text AS t JOIN search_hit AS h USING (text_id) "
            "WHERE h.field = $field AND t.norm LIKE '% % %' ORDER BY t.norm LIMIT 150",
            {"field": field})]
        found = found_by(m, READER, field, queries)
        assert len({k for k, _, _ in found}) > 100  # most of them are found, each by its own words at least
        assert found == found_by(m, CATALOG, field, queries)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_words_within_any_areas_find_what_the_catalogs_macro_finds(m, vocabulary, data):
    field = data.draw(st.sampled_from(["condition", "intervention"]))
    queries = [" ".join(data.draw(st.lists(st.sampled_from(vocabulary[field]), min_size=2, max_size=4)))
               for _ in range(data.draw(st.integers(1, 3)))]
    within = data.draw(st.none() | st.integers(1, 2 ** 11 - 1))
    assert found_by(m, READER, field, queries, within) == found_by(m, CATALOG, field, queries, within)


def test_the_free_texts_and_get_terminateds_words_stay_in_sql(sample_warehouse, tmp_path):
    """The words a reader has read into its arrays are those of the calls it intersected: search_trials' drug and
    condition, a landscape's condition and a whitespace's drug, not get_terminated's query or the free text."""
    with Mirror(alone(sample_warehouse, tmp_path)) as mirror:
        mirror.get_terminated(query="pulmonary fibrosis")
        mirror.search(query="chronic pain")
        assert mirror.word_versions.words_held() == set()
        mirror.search_trials(drug="insulin glargine", condition="diabetes mellitus")
        # words as search_word holds them: a plain plural's 's' dropped (sql/methods/_matching.sql)
        assert mirror.word_versions.words_held() == {("intervention", "insulin"), ("intervention", "glargine"),
                                                     ("condition", "diabete"), ("condition", "mellitu")}
        mirror.get_landscape(condition="heart failure")
        mirror.detect_whitespace(drug="metformin hydrochloride", condition="diabetes mellitus")
        assert mirror.word_versions.words_held() == {
            ("intervention", "insulin"), ("intervention", "glargine"), ("condition", "diabete"),
            ("condition", "mellitu"), ("condition", "heart"), ("condition", "failure"),
            ("intervention", "metformin"), ("intervention", "hydrochloride")}


def test_search_trials_finds_with_the_conditions_words_intersected_what_it_finds_grouping_their_rows(m):
    """On a reader, search_trials takes the condition's intersected words (words_intersected_outside_plan true);
    any other DuckDB client groups their rows among the drug's versions: the same trials, scored alike. The pairs are
    a drug and a condition of one study, as written and with their words reversed (found as scattered words)."""
    pairs = m.rows(
        "SELECT DISTINCT i.norm AS drug, c.norm AS condition "
        "FROM search_hit AS hc JOIN search_text AS c ON c.text_id = hc.text_id "
        "JOIN search_hit AS hi ON hi.version_no = hc.version_no JOIN search_text AS i ON i.text_id = hi.text_id "
        "WHERE hc.field = 'condition' AND hi.field = 'intervention' AND c.norm LIKE '% %' AND i.norm LIKE '% %' "
        "  AND len(c.norm) < 40 AND len(i.norm) < 40 "
        "ORDER BY drug, condition LIMIT 60")
    drugs = [p["drug"] for p in pairs] + [" ".join(reversed(p["drug"].split())) for p in pairs]
    conditions = [p["condition"] for p in pairs] + [" ".join(reversed(p["condition"].split())) for p in pairs]
    nulls = [None] * len(drugs)
    query = ("SELECT * FROM search_trials_many($drugs::VARCHAR[], $conditions::VARCHAR[], $nulls::DATE[], "
             "$nulls::DATE[], $nulls::VARCHAR[], $limits::INTEGER[]) ORDER BY ALL")
    arguments = {"drugs": drugs, "conditions": conditions, "nulls": nulls, "limits": [50] * len(drugs)}
    intersected = m.rows(query, arguments)
    try:
        m.con.execute("CREATE OR REPLACE TEMP MACRO words_intersected_outside_plan() AS false")
        grouped = m.rows(query, arguments)
    finally:
        m.con.execute(read_sql("calls/word_postings.sql", "words_intersected_outside_plan"))
    assert intersected == grouped
    assert len({row["k"] for row in grouped if row["k"] > len(pairs)}) > len(pairs) // 2  # reversed words found too



def test_a_long_running_reader_holds_a_fields_words_after_a_few_calls_where_a_default_reader_does_not(
        sample_warehouse, tmp_path):
    """A server's or a backtest's reader (long_running) holds a field's word postings after a few calls of it; a
    default reader, after the same calls, still reads them word by word."""
    with Mirror(sample_warehouse) as m:
        conditions = [row["norm"].strip() for row in m.rows(
            "SELECT DISTINCT t.norm FROM search_text AS t JOIN search_hit AS h USING (text_id) "
            "WHERE h.field = 'condition' AND len(string_split(trim(t.norm), ' ')) = 3 ORDER BY t.norm LIMIT 60")]
    words: set[str] = set()
    chosen = [c for c in conditions if not words & set(c.split()) and not words.update(c.split())]
    chosen = chosen[:-(-word_postings.WHOLE_FIELD_AFTER_LONG_RUNNING // 3)]  # a call reads its three words
    assert len(chosen) * 3 < word_postings.WHOLE_FIELD_AFTER
    with Mirror(alone(sample_warehouse, tmp_path / "a"), long_running=True) as eager, \
            Mirror(alone(sample_warehouse, tmp_path / "b")) as default:
        for condition in chosen:
            assert eager.get_landscape(condition) == default.get_landscape(condition)
        deadline = time.monotonic() + 30  # the word postings are read in a thread of their own
        while eager.word_versions.fields_held() != {"condition"} and time.monotonic() < deadline:
            time.sleep(0.01)
        assert eager.word_versions.fields_held() == {"condition"}
        assert default.word_versions.fields_held() == set()


def test_a_reader_that_read_many_words_of_a_field_holds_the_field_whole_for_every_reader_of_its_catalog(
        sample_warehouse, tmp_path, monkeypatch):
    monkeypatch.setattr(word_postings, "WHOLE_FIELD_AFTER", 4)
    with Mirror(alone(sample_warehouse, tmp_path)) as first, Mirror(tmp_path / "warehouse") as second:
        first.get_landscape(condition="heart failure")
        assert first.word_versions.words_held() == {("condition", "heart"), ("condition", "failure")}
        assert first.word_versions.fields_held() == set()
        answer = first.get_landscape(condition="chronic kidney disease")  # the fourth word read: the field whole
        deadline = time.monotonic() + 30  # read in a thread of its own
        while first.word_versions.fields_held() != {"condition"} and time.monotonic() < deadline:
            time.sleep(0.01)
        assert first.word_versions.fields_held() == second.word_versions.fields_held() == {"condition"}
        assert first.get_landscape(condition="chronic kidney disease") == answer
        assert first.word_versions.words_held() == set()  # what the reader kept word by word is let go
        assert second.get_landscape(condition="chronic kidney disease") == answer
        assert second.word_versions.words_held() == set()  # read from the rows the first reader's catalog holds


def test_a_users_call_with_too_many_words_is_refused_saying_so(m):
    words = [f"word{i}" for i in range(33)]
    with pytest.raises(QueryFailed, match="at most 32 words a query, not 33"):
        m.rows("SELECT intersect_word_versions('condition', $words::VARCHAR[], NULL::UINTEGER)", {"words": words})
    assert m.rows("SELECT len(intersect_word_versions('condition', $words::VARCHAR[], NULL::UINTEGER)) AS n",
                  {"words": words[:32]}) == [{"n": 0}]


def unsorted_catalog() -> duckdb.DuckDBPyConnection:
    """A catalog whose search_word holds, as a night's patch leaves it, a rewritten study's rows after the rest."""
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS catalog")
    con.execute("CREATE TABLE catalog.search_word "
                "(field VARCHAR, token VARCHAR, version_no BIGINT, area_mask UINTEGER)")
    con.execute("INSERT INTO catalog.search_word VALUES "
                "('condition', 'asthma', 10, 1), ('condition', 'asthma', 20, 2), ('condition', 'asthma', 30, 1), "
                "('condition', 'severe', 20, 4), ('condition', 'severe', 30, 1), "
                "('condition', 'asthma', 5, 1), ('condition', 'severe', 5, 2), "  # the patched study, appended
                "('intervention', 'asthma', 10, 1)")
    return con


def intersect(words: WordVersions, field: str, queries: list[list[str]], within: int | None = None) -> list:
    """The function's answer for each query, each version unpacked from its number (version_no << 16 | area_mask)."""
    packed = words.intersect(pa.array([field] * len(queries)), pa.array(queries, pa.list_(pa.string())),
                             pa.array([within] * len(queries), pa.uint32())).to_pylist()
    return [[{"version_no": number >> 16, "area_mask": number & 0xFFFF} for number in found] for found in packed]


def test_a_version_number_too_large_to_pack_with_its_areas_is_refused():
    con = unsorted_catalog()
    con.execute("INSERT INTO catalog.search_word VALUES ('intervention', 'huge', $n, 1)", {"n": VERSION_LIMIT})
    with pytest.raises(ValueError, match="cannot be packed"):
        intersect(WordVersions(con), "intervention", [["huge"]])
    con.execute("UPDATE catalog.search_word SET version_no = $n WHERE token = 'huge'", {"n": VERSION_LIMIT - 1})
    assert intersect(WordVersions(con), "intervention", [["huge"]]) == [[{"version_no": VERSION_LIMIT - 1,
                                                                          "area_mask": 1}]]


def test_rows_out_of_version_order_are_intersected_in_order():
    words = WordVersions(unsorted_catalog())
    assert intersect(words, "condition", [["asthma", "severe"]]) == [[
        {"version_no": 5, "area_mask": 3}, {"version_no": 20, "area_mask": 6}, {"version_no": 30, "area_mask": 1}]]


def test_within_keeps_the_versions_holding_every_word_in_those_areas():
    words = WordVersions(unsorted_catalog())
    assert intersect(words, "condition", [["asthma", "severe"]], within=6) == [[{"version_no": 20, "area_mask": 6}]]
    assert intersect(words, "condition", [["asthma", "severe"]], within=2) == [[]]  # "severe" in another area
    assert intersect(words, "condition", [["asthma", "severe"]], within=8) == [[]]


def test_a_word_no_version_holds_and_a_field_without_the_word_find_nothing():
    words = WordVersions(unsorted_catalog())
    assert intersect(words, "condition", [["asthma", "wheeze"]]) == [[]]
    assert intersect(words, "intervention", [["asthma", "severe"]]) == [[]]


def test_words_let_go_under_a_small_budget_are_read_again():
    words = WordVersions(unsorted_catalog(), cache_bytes=1)
    first = intersect(words, "condition", [["asthma", "severe"], ["severe", "asthma"]])
    assert first == intersect(words, "condition", [["severe", "asthma"], ["asthma", "severe"]])
    assert first[0] == first[1] and len(first[0]) == 3


def test_a_thread_reads_new_words_while_another_thread_reads_and_both_keep_what_they_read():
    """DuckDB calls the function from two of its threads at once (a whitespace call's drug and condition): a read in
    progress does not hold up the other thread's, and the words both read are kept once each."""
    words = WordVersions(unsorted_catalog())
    busy = words._cursors.get()  # one thread's read under way
    answers = []
    other = threading.Thread(target=lambda: answers.append(intersect(words, "condition", [["asthma", "severe"]])),
                             daemon=True)  # were it held up, the test fails rather than hang
    other.start()
    other.join(timeout=30)
    assert not other.is_alive() and answers == [[[{"version_no": 5, "area_mask": 3}, {"version_no": 20, "area_mask": 6},
                                                   {"version_no": 30, "area_mask": 1}]]]
    words._cursors.put(busy)
    both = [threading.Thread(target=lambda: answers.append(intersect(words, "intervention", [["asthma"]])),
                             daemon=True) for _ in range(2)]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join(timeout=30)
    assert answers[1:] == [[[{"version_no": 10, "area_mask": 1}]]] * 2
    assert words.words_held() == {("condition", "asthma"), ("condition", "severe"), ("intervention", "asthma")}
    assert words._bytes == sum(run.nbytes for run in words._runs.values())


def test_a_fields_whole_rows_are_each_words_versions_in_order_whatever_order_they_are_stored_in():
    con = unsorted_catalog()
    con.execute("USE catalog")
    postings = FieldPostings.read(con, "condition")
    words = WordVersions(unsorted_catalog())
    for word in ("asthma", "severe", "wheeze"):
        run = postings.run_of(word)
        assert [(int(n) >> 16, int(n) & 0xFFFF) for n in run] == [
            (found["version_no"], found["area_mask"]) for found in intersect(words, "condition", [[word]])[0]]
    assert len(postings.run_of("asthma")) == 4 and len(postings.run_of("wheeze")) == 0
