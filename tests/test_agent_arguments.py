"""Agent tools take JSON as their schemas type it: no string booleans, no booleans as numbers, bounds held."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from ctmirror import Mirror
from ctmirror.core.errors import InvalidArgument
from ctmirror.server.agent_tools import run_tool


@pytest.fixture(scope="module")
def m(sample_warehouse):
    with Mirror(sample_warehouse) as mirror:
        yield mirror


@pytest.mark.parametrize("name, arguments, says", [
    ("find_eligible", {"conditions": ["asthma"], "healthy_volunteer": "false"},
     "healthy_volunteer must be true or false"),
    ("find_eligible", {"conditions": ["asthma"], "max_results": True}, "max_results must be a whole number"),
    ("find_eligible", {"conditions": "asthma"}, "conditions must be a list"),
    ("get_landscape", {"condition": "NASH", "top_n": True}, "top_n must be a whole number"),
    ("get_landscape", {"condition": "NASH", "top_n": "5"}, "top_n must be a whole number"),
    ("search_trials", {"drug": "tadalafil", "condition": 7}, "condition must be a string"),
    ("get_study", {"nct_id": "NCT00711542", "max_list_items": 0}, "max_list_items must be from 1 to 1000"),
])
def test_wrong_json_types_are_refused_naming_the_argument(m, name, arguments, says):
    with pytest.raises(InvalidArgument, match=says) as refused:
        run_tool(m, name, arguments)
    assert refused.value.invalid_input is not None


def test_the_same_arguments_typed_right_are_answered(m):
    assert run_tool(m, "find_eligible", {"conditions": ["asthma"], "healthy_volunteer": False, "max_results": 3})
    assert run_tool(m, "get_landscape", {"condition": "NASH", "top_n": 5})["total_trial_count"] > 0


def test_get_study_takes_the_contracts_id_form_as_get_trial_does(m):
    assert run_tool(m, "get_trial", {"nct_id": "NCT:00711542"})["nct_id"] == "NCT00711542"
    study = run_tool(m, "get_study", {"nct_id": "NCT:00711542", "max_list_items": 2})["study"]
    assert study["protocolSection"]["identificationModule"]["nctId"] == "NCT00711542"
    [found] = run_tool(m, "get_results", {"nct_ids": ["NCT:00711542"]})["studies"]
    assert "error" not in found


def test_a_cutoff_in_the_future_is_refused_everywhere(m):
    future = (date.today() + timedelta(days=30)).isoformat()
    for call in (lambda: run_tool(m, "get_landscape", {"condition": "NASH", "date_before": future}),
                 lambda: m.get_terminated("NASH", date_before=future),
                 lambda: Mirror(m.warehouse.root, as_of=future)):
        with pytest.raises(InvalidArgument, match="in the future") as refused:
            call()
        assert refused.value.invalid_input == future
    tomorrow = (date.today() + timedelta(days=1)).isoformat()  # a clock a day ahead of ours is still answered
    assert run_tool(m, "get_landscape", {"condition": "NASH", "date_before": tomorrow})["total_trial_count"] > 0
