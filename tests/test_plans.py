"""Prepared plans outlive no catalog change: DuckDB plans a prepared statement afresh at every execution once a
table has been made or dropped on its connection since it was prepared (measured: 15-20 ms more a call), so a
Mirror makes every method's arguments table when it opens, before preparing anything, and the v2 server's searches
make no table at all (each is one statement)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from ctmirror import Mirror
from ctmirror.core.words import may_scatter, query_norm
from ctmirror.read.readonly import QueryFailed
from ctmirror.server import v2
from ctmirror.server.v2.matcher import Matcher

PREPARED = "SELECT name FROM duckdb_prepared_statements() ORDER BY name"


def names(mirror: Mirror) -> list[str]:
    return [row["name"] for row in mirror.rows(PREPARED)]


def test_the_arguments_tables_are_made_first_so_no_method_outdates_another(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        made = {r["table_name"] for r in m.rows("SELECT table_name FROM duckdb_tables() WHERE temporary")}
        assert {"search_trials_args", "detect_whitespace_args", "get_landscape_args", "get_terminated_args",
                "search_args"} <= made
        first = m.get_landscape("asthma")
        m.search_trials("metformin", "diabetes")
        m.search(condition="asthma")
        # each prepared once, kept; calls on the current state have plans of their own, and calls alone (their
        # arguments read from the reader's functions); a search, one per shape
        prepared = names(m)
        assert len(prepared) == 3 and prepared[::2] == ["get_landscape_current_alone", "search_trials_alone"]
        assert prepared[1].startswith("search_page_") and prepared[1].endswith("_50")
        m.search(condition="copd")
        assert m.get_landscape("asthma") == first and names(m) == prepared
        m.get_landscape("asthma", date_before="2020-01-01")
        assert "get_landscape_alone" in names(m) and "get_landscape_current_alone" in names(m)


# Every set-wise method's macro as the Python API calls it, with the same calls on the current state.
CURRENT_STATE_CALLS = {
    "get_landscape": "get_landscape_many({q}, {nulls}, {nulls}, {tens}, current_state := {current})",
    "detect_whitespace": "detect_whitespace_many({drugs}, {q}, {nulls}, {nulls}, current_state := {current})",
    "get_terminated": "get_terminated_many({q}, {nulls}, {nulls}, {tens}, current_state := {current})",
}
QUERIES = ["asthma", "breast cancer", "diabetes", "covid", "zzqx"]
DRUGS = ["placebo", "pembrolizumab", "metformin", "vaccine", "aspirin"]
# Read from a table, as the Python API's arguments are: NULL constants would fold the same rules away.
NO_DATES = "(SELECT d FROM (VALUES ([NULL, NULL, NULL, NULL, NULL]::DATE[])) AS v(d))"


def test_calls_on_the_current_state_plan_without_the_cutoff_rules_and_answer_the_same(sample_warehouse):
    """current_state := true (the plan the Python API prepares for calls without a cutoff) folds the cutoff rules
    away: trial_card's date columns are not read, and every answer is the one the plan for any cutoff gives."""
    with Mirror(sample_warehouse) as m:
        for method, call in CURRENT_STATE_CALLS.items():
            def query(current: str) -> str:
                return "SELECT * FROM " + call.format(q=QUERIES, drugs=DRUGS, nulls=NO_DATES, tens=[10] * 5,
                                                       current=current)
            folded = m.rows(query("true"))
            assert folded == m.rows(query("false")), method
            assert len({row["k"] for row in folded}) >= 2, method  # the calls answered something
            plans = {current: "\n".join(r["explain_value"] for r in m.rows("EXPLAIN (FORMAT json) " + query(current)))
                     for current in ("true", "false")}
            for column in ("valid_from", "valid_to", "study_first_post_date"):
                assert column in plans["false"] and column not in plans["true"], (method, column)


# Every set-wise method's macro with its texts' relax constants, as the Python API calls it.
RELAXED_CALLS = {
    "search_trials": "search_trials_many({drugs}, {q}, {nulls}, {nulls}, {no_phases}, {tens}, "
                     "relax_drugs := {relax}, relax_conditions := {relax})",
    "get_landscape": "get_landscape_many({q}, {nulls}, {nulls}, {tens}, relax_conditions := {relax})",
    "detect_whitespace": "detect_whitespace_many({drugs}, {q}, {nulls}, {nulls}, relax_drugs := {relax}, "
                         "relax_conditions := {relax})",
    "get_terminated": "get_terminated_many({q}, {nulls}, {nulls}, {tens}, relax_queries := {relax})",
}
NO_PHASES = "(SELECT p FROM (VALUES ([NULL, NULL, NULL, NULL, NULL]::VARCHAR[])) AS v(p))"


def test_calls_of_one_word_plan_without_scattered_words_and_answer_the_same(sample_warehouse):
    """relax_... := false (the plan the Python API prepares when no text of the calls has two words) drops the
    scattered words from the plan, and answers as the plan with them."""
    single = ["asthma", "diabetes", "covid", "cancer", "zzqx"]
    assert not any(may_scatter(query_norm(q)) for q in single + DRUGS)
    with Mirror(sample_warehouse) as m:
        for method, call in RELAXED_CALLS.items():
            def query(relax: str) -> str:
                return "SELECT * FROM " + call.format(q=single, drugs=DRUGS, nulls=NO_DATES, no_phases=NO_PHASES,
                                                       tens=[10] * 5, relax=relax)
            plain = m.rows(query("false"))
            assert plain == m.rows(query("true")), method
            assert len({row["k"] for row in plain}) >= 2, method
            operators = {relax: "\n".join(r["explain_value"] for r in m.rows("EXPLAIN (FORMAT json) " + query(relax)))
                         .count('"name"') for relax in ("true", "false")}
            assert operators["true"] - operators["false"] >= 8, (method, operators)  # for each text field


def test_a_text_the_python_api_says_cannot_scatter_scatters_nothing(sample_warehouse, records):
    """words.may_scatter, which picks the plan without scattered words, is never false of a text the matcher
    scatters: a sixth of the sample's condition and intervention names, and texts quoted, spaced or of stop words."""
    texts = {c for r in records for c in r["protocolSection"].get("conditionsModule", {}).get("conditions", [])}
    texts |= {i["name"] for r in records
              for i in r["protocolSection"].get("armsInterventionsModule", {}).get("interventions", [])}
    odd = {'"breast cancer"', '  asthma  ', 'the asthma', 'of and', '"asthma', 'asthma"', 'covid-19', "t'cell"}
    with Mirror(sample_warehouse) as m:
        queries = sorted({query_norm(t) for t in texts} - {""})[::6] + sorted(query_norm(t) for t in odd)
        scattered = {row["k"] for field in ("condition", "intervention") for row in m.rows(
            "SELECT DISTINCT k FROM scattered_word_rows_many($field, $qs)", {"field": field, "qs": queries})}
    assert scattered, "no text scattered: the check below would pass on anything"
    assert not [queries[k - 1] for k in scattered if not may_scatter(queries[k - 1])]


def test_current_state_is_refused_for_a_call_with_a_cutoff(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        with pytest.raises(QueryFailed, match="current_state := true is for calls without a cutoff"):
            m.rows("SELECT * FROM get_landscape_many(['asthma', 'copd'], [NULL, DATE '2019-01-01'], [NULL, NULL], "
                   "[10, 10], current_state := true)")


TABLES = "SELECT count(*) AS n FROM duckdb_tables()"


def test_a_v2_search_is_prepared_once_per_shape_and_outdates_nothing(sample_warehouse):
    """As the server's pool opens a Mirror: the table of filter.geo's versions first; then each request's shape is
    prepared once, its values read from the reader's functions, and no table is made or dropped."""
    with Mirror(sample_warehouse) as m:
        assert v2.make_search_tables(m) and not v2.make_search_tables(m)
        m.get_landscape("asthma")
        tables = m.rows(TABLES)
        first, _ = v2.studies(m, {"query.cond": "asthma OR copd", "query.term": "AREA[Phase]PHASE3"}, None)
        searches = [n for n in names(m) if n.startswith("v2_search_")]
        assert first["studies"] and len(searches) == 1 and "get_landscape_current_alone" in names(m)
        other, _ = v2.studies(m, {"query.cond": "diabetes OR obesity", "query.term": "AREA[Phase]PHASE2"}, None)
        assert other["studies"] and other != first  # the same shape, other values: the same statement
        assert [n for n in names(m) if n.startswith("v2_search_")] == searches
        assert "get_landscape_current_alone" in names(m)
        assert m.rows(TABLES) == tables


def test_a_search_statement_holds_no_value_of_the_request(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        page, _ = v2.studies(m, {"query.cond": "o'brien asthma", "filter.overallStatus": "COMPLETED",
                                 "query.term": "AREA[EnrollmentCount]RANGE[123, 4567]"}, None)
        assert page["studies"] == []  # ran, quote and all
        statements = m.rows("SELECT statement FROM duckdb_prepared_statements() WHERE name LIKE 'v2_search_%'")
        assert len(statements) == 1
        assert not any(value in statements[0]["statement"] for value in ("brien", "COMPLETED", "123", "4567"))
        assert "'condition'" in statements[0]["statement"]  # our own names are written in


def test_trial_card_stores_the_current_rows_first_and_keys_them_as_shown(sample_warehouse):
    """A call on the current state reads trial_card's first row groups alone (the join on shown_key hands the
    scan a range below 2^56): the table stores the current rows first, and only they have keys below 2^56."""
    with Mirror(sample_warehouse) as m:
        rows = m.rows("SELECT is_current, shown_key, version_no FROM trial_card")  # in stored order
        current = sum(r["is_current"] for r in rows)
        assert 0 < current < len(rows)
        assert all(r["is_current"] for r in rows[:current]) and not any(r["is_current"] for r in rows[current:])
        assert all(r["shown_key"] == r["version_no"] + (0 if r["is_current"] else 2**56) for r in rows)
        card_order = m.rows("SELECT list(card_no) AS l FROM trial_card")[0]["l"]
        assert card_order[:current] == sorted(card_order[:current])
        assert card_order[current:] == sorted(card_order[current:])


def test_a_search_with_a_text_plans_no_scan_of_every_study(sample_warehouse):
    """Which of search's texts are given is a constant of its plan: with one given, the branch that lists every
    study (for a search of filters alone) is folded away, so the planner estimates the matches as few and joins
    trial_card to them rather than the other way round; with none given, that branch is the search."""
    with Mirror(sample_warehouse) as m:
        def plan(**arguments) -> str:
            before = set(names(m))
            assert m.search(**arguments).items
            [name] = set(names(m)) - before
            statement = m.rows(f"SELECT statement FROM duckdb_prepared_statements() WHERE name = '{name}'")[0]
            explained = m.rows("EXPLAIN (FORMAT json) " + statement["statement"])
            return "\n".join(row["explain_value"] for row in explained)

        assert "study_version" not in plan(condition="asthma")
        assert "study_version" not in plan(query="asthma", intervention="placebo")
        assert "study_version" in plan(status=["COMPLETED"])


def test_a_v2_search_tests_no_column_of_trial_card_but_shown_key(sample_warehouse):
    """On the current state a v2 search tests no column of trial_card but shown_key (the key range of the current
    rows, and its matched keys), so DuckDB can look the matches up in the index of shown_key rather than scanning
    every current row (at 500,000 studies it does, for a condition of a few hundred matches); a test of another
    column (is_current, say) would turn it back into a scan. (At the sample's size the planner may hash the cards
    rather than the matches, as it estimates them: the scan's own filter is what is checked.)"""
    with Mirror(sample_warehouse) as m:
        assert v2.make_search_tables(m)
        page, _ = v2.studies(m, {"query.cond": "asthma"}, None)
        assert page["studies"]
        [statement] = m.rows("SELECT statement FROM duckdb_prepared_statements() WHERE name LIKE 'v2_search_%'")
        profile = json.loads(m.rows("EXPLAIN (ANALYZE, FORMAT json) " + statement["statement"])[0]["explain_value"])

        def scans(node: dict) -> list[dict]:
            info = node.get("extra_info", {})
            own = [info] if "trial_card" in str(info.get("Table")) else []
            return own + [s for child in node.get("children", []) for s in scans(child)]

        [matched] = [s for s in scans(profile) if "shown_key" in str(s.get("Filters"))]
        assert matched["Filters"] == f"shown_key<{2 ** 56}", matched


def test_a_text_anded_with_another_is_grouped_among_its_versions_and_answers_the_same(sample_warehouse,
                                                                                      monkeypatch):
    """A text term ANDed with another (query.cond with query.intr; words joined by AND) groups and scores its hits
    among the other's versions alone (Matcher._restrict): the same studies in the same order, at any cutoff, as the
    whole term joined to the other."""
    with Mirror(sample_warehouse) as m:
        v2.make_search_tables(m)
        pairs = [(row["condition"], row["drug"]) for row in m.rows(
            "SELECT c.norm AS condition, i.norm AS drug "
            "FROM search_hit AS hc JOIN search_text AS c ON c.text_id = hc.text_id "
            "JOIN search_hit AS hi ON hi.version_no = hc.version_no JOIN search_text AS i ON i.text_id = hi.text_id "
            "WHERE hc.field = 'condition' AND hi.field = 'intervention' "
            "ORDER BY hash(c.norm || i.norm) LIMIT 24")]
        requests = [({"query.cond": condition.strip(), "query.intr": drug.strip(), "countTotal": "true",
                      "pageSize": "1000"}, None if n % 3 else date(2018 + n % 5, 6, 1))
                    for n, (condition, drug) in enumerate(pairs)]
        requests += [({"query.term": f"{condition.split()[0]} AND {drug.split()[0]}", "countTotal": "true",
                       "pageSize": "1000"}, None) for condition, drug in pairs[:8]]

        def answers() -> list[dict]:
            return [v2.studies(m, params, as_of)[0] for params, as_of in requests]

        restricted = answers()
        statements = [row["statement"] for row in m.rows(
            "SELECT statement FROM duckdb_prepared_statements() WHERE name LIKE 'v2_search_%'")]
        assert statements and all("(version_no = ANY(SELECT version_no FROM essie_term_" in s for s in statements)
        monkeypatch.setattr(Matcher, "_restrict", lambda self, text_term, other: None)
        whole = answers()
    assert restricted == whole
    assert sum(page["totalCount"] > 1 for page in whole) >= 8
