"""Registry statistics, checked against counts computed by hand from the raw records of the sample."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from datetime import date

import pytest

from ctmirror import InvalidArgument, Mirror
from ctmirror.read.registry import STATISTIC_NAMES as STATS

PHASE_LABEL = {"EARLY_PHASE1": "Early Phase 1", "PHASE1": "Phase 1", "PHASE2": "Phase 2", "PHASE3": "Phase 3",
               "PHASE4": "Phase 4", "NA": "Not Applicable"}


@pytest.fixture(scope="module")
def m(sample_mirror):
    return sample_mirror


def ps(record: dict) -> dict:
    return record["protocolSection"]


def as_counts(rows: list[dict], key: str) -> dict:
    return {r[key]: r["trials"] for r in rows}


def test_by_phase_status_type_and_sex(m, records):
    phases = Counter("/".join(PHASE_LABEL[p] for p in ps(r).get("designModule", {}).get("phases", [])) or "(none)"
                     for r in records)
    statuses = Counter(ps(r).get("statusModule", {}).get("overallStatus", "(none)") for r in records)
    types = Counter(ps(r).get("designModule", {}).get("studyType", "(none)") for r in records)
    sexes = Counter(ps(r).get("eligibilityModule", {}).get("sex", "(none)") for r in records)
    assert as_counts(m.stats("stats_by_phase"), "phase") == phases
    assert as_counts(m.stats("stats_by_status"), "overall_status") == statuses
    assert as_counts(m.stats("stats_by_study_type"), "study_type") == types
    assert as_counts(m.stats("stats_by_sex"), "sex") == sexes
    assert sum(r["share"] for r in m.stats("stats_by_phase")) == pytest.approx(1.0, abs=0.001)


def test_by_age_group_intervention_type_and_start_year(m, records):
    """Each also counts the trials lacking the field it counts, as '(none)' (start year: None)."""
    ages = Counter(a for r in records for a in set(ps(r).get("eligibilityModule", {}).get("stdAges", [])) or {"(none)"})
    kinds = Counter(k for r in records for k in {i.get("type").replace("_", " ").title() for i in ps(r).get(
        "armsInterventionsModule", {}).get("interventions", []) if i.get("type")} or {"(none)"})
    years = Counter(int(ps(r)["statusModule"]["startDateStruct"]["date"][:4])
                    if ps(r).get("statusModule", {}).get("startDateStruct", {}).get("date") else None for r in records)
    assert as_counts(m.stats("stats_by_age_group"), "age_group") == ages and ages["(none)"] > 400
    assert as_counts(m.stats("stats_by_intervention_type"), "intervention_type") == kinds and kinds["(none)"] > 400
    assert as_counts(m.stats("stats_by_start_year"), "start_year") == years and years[None] > 400
    assert m.stats("stats_by_start_year")[-1]["start_year"] is None


def test_by_country_sponsor_class_and_enrollment(m, records):
    countries = Counter(c for r in records for c in {x.get("country") for x in ps(r).get("contactsLocationsModule", {})
                                                    .get("locations", []) if x.get("country")} or {"(none)"})
    classes = Counter(ps(r).get("sponsorCollaboratorsModule", {}).get("leadSponsor", {}).get("class", "(none)")
                      for r in records)

    def band(n):
        return "unknown" if not n or n <= 0 else "1-50" if n <= 50 else "51-100" if n <= 100 else \
            "101-500" if n <= 500 else "501-1000" if n <= 1000 else "1000+"

    bands = Counter(band(ps(r).get("designModule", {}).get("enrollmentInfo", {}).get("count")) for r in records)
    assert as_counts(m.stats("stats_by_country"), "country") == countries
    assert as_counts(m.stats("stats_by_sponsor_class"), "sponsor_class") == classes
    assert as_counts(m.stats("stats_enrollment"), "enrollment") == bands


def test_completion_results_and_funnel(m, records):
    statuses = Counter(ps(r).get("statusModule", {}).get("overallStatus") for r in records)
    [completion] = m.stats("stats_completion")
    closed = statuses["COMPLETED"] + statuses["TERMINATED"] + statuses["WITHDRAWN"]
    assert (completion["trials"], completion["closed"], completion["terminated"]) == \
        (len(records), closed, statuses["TERMINATED"])
    assert completion["completion_rate"] == round(statuses["COMPLETED"] / closed, 4)
    completed = [r for r in records if ps(r).get("statusModule", {}).get("overallStatus") == "COMPLETED"]
    [reporting] = m.stats("stats_results_reporting")
    assert (reporting["completed"], reporting["with_results"]) == \
        (len(completed), sum(1 for r in completed if r.get("hasResults")))
    funnel = as_counts(m.stats("stats_recruitment_funnel"), "stage")
    assert funnel["recruiting"] == statuses["RECRUITING"] + statuses["ENROLLING_BY_INVITATION"]
    assert funnel["stopped early"] == statuses["TERMINATED"] + statuses["WITHDRAWN"] + statuses["SUSPENDED"]
    assert sum(funnel.values()) == len(records)


def test_filters_use_the_methods_matching_and_cutoff(m):
    scope = {i.nct_id for i in m.search(condition="erectile dysfunction", page_size=200).items}
    total = m.search(condition="erectile dysfunction", page_size=1).pagination.total_count
    assert sum(r["trials"] for r in m.stats("stats_by_status", condition="erectile dysfunction")) == total
    assert scope
    strict = m.stats("stats_by_status", condition="erectile dysfunction", date_before=date(2012, 1, 1))
    parity = m.stats("stats_by_status", condition="erectile dysfunction", date_before=date(2012, 1, 1),
                     holdout="first_posted")
    # Strict scope learns synonyms only from studies that existed at the cutoff, so it can be smaller.
    assert 0 < sum(r["trials"] for r in strict) <= sum(r["trials"] for r in parity) < total
    assert as_counts(strict, "overall_status").get("TERMINATED", 0) < as_counts(parity, "overall_status")["TERMINATED"]
    bayer = m.stats("stats_by_sponsor", sponsor="Bayer")
    assert bayer and all("bayer" in r["sponsor"].lower() for r in bayer)


def test_the_scope_at_a_cutoff_is_what_search_shows_then(m):
    # the scope's rows are chosen by their keys and then read by number (sql/stats/_scope.sql): at every cutoff and
    # holdout, with or without a filter, a statistic counts the trials search finds then
    for condition in ("erectile dysfunction", "diabetes"):
        for cutoff in (date(2010, 1, 1), date(2018, 6, 1)):
            for extra in ({}, {"holdout": "first_posted"}, {"status": ["COMPLETED"]}):
                counted = sum(r["trials"] for r in m.stats("stats_by_status", condition=condition,
                                                            date_before=cutoff, **extra))
                found = m.search(condition=condition, date_before=cutoff, page_size=1, **extra)
                assert counted == found.pagination.total_count > 0, (condition, cutoff, extra)


@pytest.mark.slow
def test_every_statistic_runs_through_sql_python_and_cli(m, sample_warehouse):
    for name in STATS:
        python = m.stats(name, condition="diabetes")
        sql = m.rows(f"SELECT * FROM {name}('diabetes', NULL, NULL, NULL)")
        assert python == sql and python, name
    # every statistic's macro is the one template's (search's filters named): one of each shape of body
    for name in ("stats_by_country", "stats_by_start_year", "stats_results_reporting", "stats_top_interventions"):
        assert m.stats(name, **FILTERS) == m.rows(
            f"SELECT * FROM {name}(NULL, NULL, NULL, NULL, status_list := $status, phase_list := $phase, "
            "location_query := $location, sponsor_class_list := $sponsor_class, study_type_wanted := $study_type)",
            FILTERS), name
    done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "stats", "stats_by_phase",
                           "--condition", "diabetes", "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout) == m.stats("stats_by_phase", condition="diabetes")
    filtered = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "stats",
                               "stats_top_interventions", "--condition", "cancer", "--status", "RECRUITING",
                               "--phase", "PHASE2,PHASE3", "--location", "Germany", "--sponsor-class", "INDUSTRY",
                               "--study-type", "INTERVENTIONAL", "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(filtered.stdout) == m.stats("stats_top_interventions", condition="cancer", status="RECRUITING",
                                                  phase=["PHASE2", "PHASE3"], location="Germany",
                                                  sponsor_class="INDUSTRY", study_type="INTERVENTIONAL") != []
    with pytest.raises(InvalidArgument, match="unknown statistic"):
        m.stats("stats_by_mood")


def partial(value: str | None) -> date | None:
    if not value:
        return None
    return date.fromisoformat((value + "-01-01"[len(value) - 4:])[:10] if len(value) < 10 else value)


def test_duration_facility_sponsor_and_results_delay(m, records):
    def band(r):
        status = ps(r).get("statusModule", {})
        start = partial(status.get("startDateStruct", {}).get("date"))
        end = partial(status.get("primaryCompletionDateStruct", {}).get("date"))
        if not start or not end or end < start:
            return "unknown"
        months = (end.year - start.year) * 12 + (end.month - start.month) - (end.day < start.day)
        return "< 6 months" if months < 6 else "6-12 months" if months < 12 else "1-2 years" if months < 24 \
            else "2-5 years" if months < 60 else "5+ years"

    assert as_counts(m.stats("stats_by_duration"), "duration") == Counter(band(r) for r in records)

    facilities = Counter((x["facility"], x.get("city"), x.get("country")) for r in records
                         for x in {(s.get("facility"), s.get("city"), s.get("country")): s
                                   for s in ps(r).get("contactsLocationsModule", {}).get("locations", [])
                                   if s.get("facility")}.values())
    top = m.stats("stats_by_facility")
    assert len(top) == 100
    assert all(facilities[(t["facility"], t["city"], t["country"])] == t["trials"] for t in top)
    assert top[0]["trials"] == max(facilities.values())

    sponsors = Counter(ps(r).get("sponsorCollaboratorsModule", {}).get("leadSponsor", {}).get("name") for r in records)
    unnamed = sponsors.pop(None, 0)
    by_sponsor = m.stats("stats_by_sponsor")
    assert unnamed > 400 and by_sponsor[-1]["sponsor"] == "(none)" and by_sponsor[-1]["trials"] == unnamed
    assert [(s["sponsor"], s["trials"]) for s in by_sponsor[:5]] == \
        sorted(sponsors.items(), key=lambda kv: (-kv[1], kv[0]))[:5]

    delays = sorted((partial(ps(r)["statusModule"]["resultsFirstPostDateStruct"]["date"])
                     - partial(ps(r)["statusModule"]["primaryCompletionDateStruct"]["date"])).days
                    for r in records if ps(r).get("statusModule", {}).get("overallStatus") == "COMPLETED"
                    and r.get("hasResults") and ps(r)["statusModule"].get("resultsFirstPostDateStruct")
                    and ps(r)["statusModule"].get("primaryCompletionDateStruct"))
    [reporting] = m.stats("stats_results_reporting")
    middle = len(delays) // 2
    expected = delays[middle] if len(delays) % 2 else (delays[middle - 1] + delays[middle]) / 2
    assert reporting["median_delay_days"] == expected


FILTERS = {"status": ["RECRUITING", "NOT_YET_RECRUITING"], "phase": ["PHASE2", "PHASE3"], "location": "Germany",
           "sponsor_class": ["INDUSTRY"], "study_type": "INTERVENTIONAL"}


def searched(m: Mirror, **arguments) -> set[str]:
    found, cursor = set(), None
    while True:
        page = m.search(page_size=200, cursor=cursor, **arguments)
        found |= {item.nct_id for item in page.items}
        if not (cursor := page.pagination.cursor):
            return found


@pytest.mark.slow  # every statistic with every filter, twice
def test_every_statistic_takes_the_searchs_filters_in_python_and_sql(m):
    """The same filters as search, with the lead sponsor's class besides: the scope is the studies search finds."""
    in_search = searched(m, condition="cancer", **{k: v for k, v in FILTERS.items() if k != "sponsor_class"})
    industry = {r["nct_id"] for r in m.rows("SELECT nct_id FROM studies WHERE lead_sponsor_class = 'INDUSTRY'")}
    rows = m.stats("stats_by_status", condition="cancer", **FILTERS)
    assert sum(r["trials"] for r in rows) == len(in_search & industry) > 0
    assert set(as_counts(rows, "overall_status")) <= set(FILTERS["status"])
    sql = m.rows("SELECT * FROM stats_by_status('cancer', NULL, NULL, NULL, status_list := $status, "
                 "phase_list := $phase, location_query := $location, sponsor_class_list := $sponsor_class, "
                 "study_type_wanted := $study_type)", FILTERS)
    assert sql == rows
    everything = sum(r["trials"] for r in m.stats("stats_by_phase", condition="cancer"))
    for name, value in FILTERS.items():  # each narrows the scope alone, to what search finds with it
        alone = sum(r["trials"] for r in m.stats("stats_by_phase", condition="cancer", **{name: value}))
        if name != "sponsor_class":
            assert alone == len(searched(m, condition="cancer", **{name: value})), name
        assert 0 < alone < everything, name
    with pytest.raises(InvalidArgument, match="sponsor_class"):
        m.stats("stats_by_phase", sponsor_class="PHARMA")


def test_top_conditions_and_interventions(m, records):
    """Counted from the records: each trial once per condition (case and spacing aside), placebo left out."""
    conditions = Counter(c for r in records for c in {c.strip().lower() for c in ps(r).get(
        "conditionsModule", {}).get("conditions", []) if c.strip()})
    top = m.stats("stats_top_conditions")
    assert len(top) == 100 and [r["trials"] for r in top] == sorted((r["trials"] for r in top), reverse=True)
    above = top[19]["trials"]  # the conditions above the 20th's count (ties at it fall either way)
    assert {r["condition"].lower(): r["trials"] for r in top if r["trials"] > above} == {
        c: n for c, n in conditions.items() if n > above}
    diabetes = searched(m, condition="diabetes")
    drugs = Counter(i["name"].strip().lower() for r in records if ps(r)["identificationModule"]["nctId"] in diabetes
                    for i in {i["name"].strip().lower(): i for i in ps(r).get("armsInterventionsModule", {}).get(
                        "interventions", [])}.values())
    drugs = Counter({name: n for name, n in drugs.items() if not any(
        w in name.split() for w in ("placebo", "placebos", "sham", "vehicle", "dummy"))})
    rows = m.stats("stats_top_interventions", condition="diabetes")
    assert (rows[0]["intervention"].lower(), rows[0]["trials"]) == drugs.most_common(1)[0]
    assert {r["intervention"].lower(): r["trials"] for r in rows} == {k: v for k, v in drugs.items()
                                                                      if k in {r["intervention"].lower() for r in rows}}
    assert all(r["intervention_type"] for r in rows) and diabetes
    assert not any("placebo" in r["intervention"].lower() for r in rows)


def test_top_conditions_and_interventions_of_a_past_scope_are_its_versions_own(m):
    """At a strict cutoff the scope shows the cards of the past: the conditions and interventions counted are their
    versions' own, as the records' tables hold them (the statistics read them from the cards)."""
    scope = ("SELECT DISTINCT nct_id, content_hash FROM analytics_scope("
             "'erectile dysfunction', NULL, NULL, DATE '2016-01-01', DATE '2016-01-01', NULL, NULL, NULL, NULL, NULL)")
    conditions = m.rows(f"SELECT lower(trim(condition)) AS c, count(DISTINCT nct_id) AS n FROM conditions "
                        f"SEMI JOIN ({scope}) USING (nct_id, content_hash) WHERE trim(condition) <> '' GROUP BY 1")
    interventions = m.rows(f"SELECT lower(trim(name)) AS i, count(DISTINCT nct_id) AS n FROM interventions "
                           f"SEMI JOIN ({scope}) USING (nct_id, content_hash) "
                           f"WHERE trim(name) <> '' AND NOT is_placebo(name) GROUP BY 1")
    shown = m.rows("SELECT count(*) FILTER (WHERE NOT is_current) AS old FROM analytics_scope('erectile dysfunction', "
                   "NULL, NULL, DATE '2016-01-01', DATE '2016-01-01', NULL, NULL, NULL, NULL, NULL)")
    assert shown[0]["old"] > 0  # cards of the past: what the registry showed then
    kwargs = {"condition": "erectile dysfunction", "date_before": "2016-01-01", "holdout": "strict"}
    assert {r["condition"].lower(): r["trials"] for r in m.stats("stats_top_conditions", **kwargs)} == {
        r["c"]: r["n"] for r in sorted(conditions, key=lambda r: (-r["n"], r["c"]))[:100]}
    top = m.stats("stats_top_interventions", **kwargs)
    assert {r["intervention"].lower(): r["trials"] for r in top} == {
        r["i"]: r["n"] for r in sorted(interventions, key=lambda r: (-r["n"], r["i"]))[:100]}
