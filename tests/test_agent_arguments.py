"""Agent tools take JSON as their schemas type it: no string booleans, no booleans as numbers, bounds held."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from agent_calls import ANSWER_BUDGET, WRONG_JSON_TYPES, broadest_calls

from ctmirror import Mirror
from ctmirror.core.errors import InvalidArgument
from ctmirror.server import v2
from ctmirror.server.agent_tools import json_text, run_tool


@pytest.fixture(scope="module")
def m(sample_mirror):
    return sample_mirror


@pytest.mark.parametrize("name, arguments, says", WRONG_JSON_TYPES)
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



def test_get_study_cuts_every_list_of_the_record_and_names_each_cut_by_its_path(m):
    """max_list_items cuts each list of the record, however deep, to that many items, and `capped` names each cut
    list by its path (a.b[2].c), with its length: the record as stored, its lists cut, and nothing else changed."""
    def cut(node, path, cuts):  # the record as get_study should give it, and its cuts, written out plainly
        if isinstance(node, list):
            if len(node) > 2:
                cuts.append({"path": path, "total": len(node), "kept": 2})
            return [cut(item, f"{path}[{i}]", cuts) for i, item in enumerate(node[:2])]
        if isinstance(node, dict):
            return {k: cut(v, f"{path}.{k}" if path else k, cuts) for k, v in node.items()}
        return node

    crowded = m.rows("SELECT nct_id FROM locations GROUP BY 1 ORDER BY count(*) DESC LIMIT 3")
    resulted = m.rows("SELECT nct_id FROM trial_card WHERE is_current AND results_posted ORDER BY nct_id LIMIT 3")
    nested = 0
    for nct_id in [row["nct_id"] for row in crowded + resulted]:
        answer = run_tool(m, "get_study", {"nct_id": nct_id, "max_list_items": 2})
        expected: list[dict] = []
        assert answer["study"] == cut(v2.study(m, nct_id, {}, None)[1], "", expected)
        assert answer["capped"] == expected and expected
        nested += sum("[" in c["path"] for c in expected)
    assert nested  # lists inside lists' items were cut and named


@pytest.mark.slow  # every tool on the broadest queries
def test_at_default_arguments_no_answer_exceeds_the_budget_and_what_was_cut_is_said(m):
    """The broadest questions of the sample, at each tool's default arguments: every answer within 25,000 characters;
    where lists were cut, `capped` says which and how long they were."""
    crowded = m.rows("SELECT nct_id FROM locations GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")[0]["nct_id"]
    cut = set()
    for name, arguments in broadest_calls(m):
        answer = run_tool(m, name, arguments)
        assert len(json_text(answer)) <= ANSWER_BUDGET, (name, arguments, len(json_text(answer)))
        for capped in answer.get("capped", []):
            assert capped["kept"] < capped["total"], (name, capped)
            cut.add(name)
    # the crowded trial's 1,101 sites, a record's lists, a sponsor field's values, results: said, not dropped silently
    assert {"get_trial_details", "get_study", "field_values", "get_results", "find_eligible"} <= cut
    details = run_tool(m, "get_trial_details", {"nct_id": crowded})
    assert "budget_note" in details and details["capped"][0]["path"] == "locations"


def test_a_size_asked_for_is_given_whole(m):
    default = run_tool(m, "search_trials", {"drug": "placebo", "condition": "cancer"})
    asked = run_tool(m, "search_trials", {"drug": "placebo", "condition": "cancer", "max_results": 25})
    assert len(asked["results"]) == 25 and "capped" not in asked and len(json_text(asked)) > ANSWER_BUDGET
    assert default["results"] == asked["results"][:len(default["results"])]
    page = run_tool(m, "search", {"condition": "cancer"})
    assert len(page["items"]) == 10 and page["pagination"]["cursor"]  # the tool's own page size, paged on


def test_a_patients_trials_and_their_landscape_in_two_calls_within_30000_characters(m):
    """The task of an agent: recruiting phase 3 trials of HER2-positive breast cancer that a 55-year-old woman in
    Germany could join, and the competitive landscape. Two tool calls answer it in under 30,000 characters, with the
    trials the search method finds under the same filters, and only the sites in Germany."""
    patient = {"conditions": ["HER2-positive breast cancer"], "age_years": 55, "sex": "FEMALE",
               "location": "Germany", "phases": ["PHASE3"]}
    eligible = run_tool(m, "find_eligible", patient)
    landscape = run_tool(m, "get_landscape", {"condition": "HER2-positive breast cancer"})
    assert len(json_text(eligible)) + len(json_text(landscape)) <= 30_000
    found = {s["protocolSection"]["identificationModule"]["nctId"] for s in eligible["studies"]}
    expected = {item.nct_id.replace("NCT:", "NCT") for item in m.search(
        condition="HER2-positive breast cancer", status=["RECRUITING"], phase="PHASE3", location="Germany",
        sex="FEMALE", min_age=55, page_size=200).items}
    assert found == expected and len(found) >= 2
    for study in eligible["studies"]:
        sites = study["protocolSection"]["contactsLocationsModule"]["locations"]
        assert sites and all(site["country"] == "Germany" for site in sites)
        assert study["sitesElsewhere"] >= 0
    assert landscape["total_trial_count"] >= len(found) and landscape["competitors"]


def test_count_studies_lists_the_studies_it_counts_when_asked(m):
    counted = run_tool(m, "count_studies", {"query.cond": "asthma"})
    listed = run_tool(m, "count_studies", {"query.cond": "asthma", "list": 1000})
    assert counted["nct_ids"] == [] and counted["total"] == listed["total"] == len(listed["nct_ids"]) > 0
    expected = {i.nct_id.replace("NCT:", "NCT") for i in m.search(condition="asthma", page_size=200).items}
    assert set(listed["nct_ids"]) == expected
    assert run_tool(m, "count_studies", {"query.cond": "asthma", "list": 3})["nct_ids"] == listed["nct_ids"][:3]
    with pytest.raises(InvalidArgument, match="list must be"):
        run_tool(m, "count_studies", {"query.cond": "asthma", "list": True})


def test_search_takes_an_essie_expression_as_the_v2_api_reads_it(m, monkeypatch):
    essie = "(asthma OR copd) AND NOT AREA[Phase]PHASE4"
    counted = run_tool(m, "count_studies", {"query.term": essie, "filter.overallStatus": "RECRUITING,COMPLETED",
                                            "list": 1000})
    found = run_tool(m, "search", {"essie": essie, "status": ["RECRUITING", "COMPLETED"], "page_size": 200})
    assert {i["nct_id"] for i in found["items"]} == set(counted["nct_ids"])
    assert found["pagination"]["total_count"] == counted["total"] > 2
    some = [*counted["nct_ids"][:2], "NCT00711542"]  # with nct_ids: those of them it finds
    assert {i["nct_id"] for i in run_tool(m, "search", {"essie": essie, "nct_ids": some})["items"]} == set(some[:2])
    assert run_tool(m, "search", {"essie": "AREA[NCTId]NCT00711542 AND copd"})["items"] == []
    with pytest.raises(InvalidArgument, match="essie"):
        run_tool(m, "search", {"essie": "(unclosed"})
    monkeypatch.setattr("ctmirror.server.agent_tools.ESSIE_TRIALS_MAX", 2)
    with pytest.raises(InvalidArgument, match="more than the 2 it can list"):
        run_tool(m, "search", {"essie": essie})


def test_get_study_gives_the_sections_asked_for_and_the_sites_at_a_place(m):
    nct_id = m.rows("SELECT s.nct_id FROM studies AS s JOIN locations AS l USING (nct_id) WHERE s.has_results "
                    "GROUP BY 1 HAVING count(*) FILTER (WHERE l.country = 'Germany') BETWEEN 1 AND count(*) - 1 "
                    "ORDER BY 1 LIMIT 1")[0]["nct_id"]
    whole = run_tool(m, "get_study", {"nct_id": nct_id, "max_list_items": 1000})["study"]
    part = run_tool(m, "get_study", {"nct_id": nct_id, "sections": ["eligibility", "results"],
                                     "max_list_items": 1000})["study"]
    assert part["protocolSection"] == {key: whole["protocolSection"][key]
                                       for key in ("identificationModule", "eligibilityModule")}
    assert part["resultsSection"] == whole["resultsSection"] and part["hasResults"] is True
    eligibility = run_tool(m, "get_study", {"nct_id": nct_id, "sections": ["eligibility"]})["study"]
    assert len(json.dumps(eligibility)) < len(json.dumps(whole)) / 10  # what an agent checking eligibility pays
    sites = whole["protocolSection"]["contactsLocationsModule"]["locations"]
    there = run_tool(m, "get_study", {"nct_id": nct_id, "sections": ["locations"], "location": "Germany"})["study"]
    kept = there["protocolSection"]["contactsLocationsModule"]["locations"]
    assert kept == [site for site in sites if site.get("country") == "Germany"] != []
    assert there["sitesElsewhere"] == len(sites) - len(kept) > 0
    with pytest.raises(InvalidArgument, match="sections"):
        run_tool(m, "get_study", {"nct_id": nct_id, "sections": ["colour"]})


def test_a_statistic_is_named_with_or_without_its_stats_prefix(m):
    short = run_tool(m, "statistics", {"statistic": "top_conditions", "phase": ["PHASE3"]})
    assert short == run_tool(m, "statistics", {"statistic": "stats_top_conditions", "phase": ["PHASE3"]})
    assert short["results"] == m.stats("stats_top_conditions", phase="PHASE3") != []
    with pytest.raises(InvalidArgument, match="by_phase, by_status"):
        run_tool(m, "statistics", {"statistic": "by_colour"})


def test_find_eligible_takes_the_statuses_a_patient_could_join_in(m):
    joinable = ["RECRUITING", "NOT_YET_RECRUITING", "ENROLLING_BY_INVITATION"]
    funnel = {s["stage"]: s["studies"] for s in run_tool(m, "find_eligible", {"conditions": ["cancer"],
                                                                             "statuses": joinable})["funnel"]}
    counted = run_tool(m, "count_studies", {"query.cond": "(cancer)", "filter.overallStatus": ",".join(joinable)})
    default = {s["stage"]: s["studies"] for s in run_tool(m, "find_eligible", {"conditions": ["cancer"]})["funnel"]}
    assert funnel["status"] == counted["total"] > default["status"] > 0
    assert [s["stage"] for s in run_tool(m, "find_eligible", {"conditions": ["cancer"], "statuses": []})["funnel"]] \
        == ["conditions"]
    with pytest.raises(InvalidArgument, match="statuses"):
        run_tool(m, "find_eligible", {"conditions": ["cancer"], "statuses": ["OPEN"]})
