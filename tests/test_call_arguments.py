"""A set-wise method's call alone reads its arguments from the reader's functions (answers.install_call_arguments),
not from its arguments table, and answers as the same call does in a batch, which reads the table."""

from __future__ import annotations

import pytest

from ctmirror import Mirror
from ctmirror.read import answers

CALLS = [
    ("search_trials", {"drug": "metformin", "condition": "type 2 diabetes"}),
    ("search_trials", {"drug": "insulin", "condition": "diabetes", "date_before": "2012-06-30",
                       "phase_filter": "(PHASE2 OR PHASE3)", "max_results": 5}),
    ("detect_whitespace", {"drug": "pembrolizumab", "condition": "lung cancer"}),
    ("detect_whitespace", {"drug": "tadalafil", "condition": "erectile dysfunction", "date_before": "2010-01-01"}),
    ("get_landscape", {"condition": "breast cancer", "status": ["RECRUITING", "COMPLETED"], "top_n": 5}),
    ("get_landscape", {"condition": "asthma", "date_before": "2016-01-01", "phase": ["PHASE3"]}),
    ("get_terminated", {"query": "pulmonary fibrosis"}),
    ("get_terminated", {"query": "cancer", "date_before": "2015-01-01", "max_results": 7}),
    ("get_trial", {"nct_id": "NCT00711542"}),
    ("get_trial", {"nct_id": "NCT:05144685"}),
    ("get_trial_details", {"nct_id": "NCT00711542"}),
]


@pytest.fixture(scope="module")
def m(sample_warehouse):
    with Mirror(sample_warehouse) as mirror:
        yield mirror


def test_a_call_alone_answers_as_in_a_batch_and_writes_nothing_into_its_arguments_table(m):
    for name, arguments in CALLS:
        table = m.rows(f"SELECT * FROM {name}_args")  # as the previous batch left it, or never written
        alone = m.call(name, **arguments)
        assert m.rows(f"SELECT * FROM {name}_args") == table, name  # the call alone read the functions
        in_batch, again = m.batch([(name, arguments), (name, arguments)])  # two calls: through the table
        assert m.rows(f"SELECT * FROM {name}_args") != table, name
        assert alone == in_batch == again, (name, arguments)
    assert all(m.call(name, **arguments) for name, arguments in CALLS[:4] + CALLS[8:])  # the cases answer something


def test_one_plan_answers_calls_alone_with_other_arguments(m):
    """The functions are read when the statement runs, not when it is planned: calls of one plan differ."""
    first = m.get_trial("NCT00711542")
    second = m.get_trial("NCT05144685")
    assert first and second and first.nct_id != second.nct_id
    assert "get_trial_alone" in m.prepared_calls


def test_a_once_value_python_does_not_compute_goes_through_the_table(m, monkeypatch):
    arguments = {"condition": "asthma", "top_n": 3}
    alone = m.get_landscape(**arguments)
    monkeypatch.setattr(answers, "ONCE_VALUES", {})
    assert m.get_landscape(**arguments) == alone
    assert m.rows("SELECT condition, today FROM get_landscape_args")[0]["today"] is not None


def test_a_search_reads_its_arguments_from_the_functions_unless_one_is_computed_in_the_table(m):
    """search's and the statistics' arguments, one call's, come from the reader's functions (one read a statement);
    a point to search near is computed in the arguments table (a FromQuery), and that call reads the table."""
    before = m.rows("SELECT * FROM search_args")
    page = m.search(condition="asthma", status=["COMPLETED", "RECRUITING"], phase=["PHASE3"], page_size=3)
    assert page.items and m.rows("SELECT * FROM search_args") == before
    assert m.stats_by_phase(condition="asthma") and m.rows("SELECT * FROM search_args") == before
    again = m.search(condition="asthma", status=["COMPLETED", "RECRUITING"], phase=["PHASE3"], page_size=3,
                     near="distance(42.36,-71.06,500mi)")
    written = m.rows("SELECT * FROM search_args")
    assert written != before and written[0]["condition"] == m.rows("SELECT search_norm('asthma') AS s")[0]["s"]
    assert {item.nct_id for item in again.items} <= {item.nct_id for item in m.search(
        condition="asthma", status=["COMPLETED", "RECRUITING"], phase=["PHASE3"], page_size=100).items}
