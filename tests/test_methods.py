"""The contract methods on the real sample: answers checked against the raw JSON, and bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date

import duckdb
import pytest
from conftest import nct

from ctmirror import InvalidArgument, Mirror
from ctmirror.core.errors import InvalidNctId
from ctmirror.core.words import search_norm
from ctmirror.read.arguments import age_days


@pytest.fixture(scope="module")
def m(sample_mirror):
    return sample_mirror


def words(text: str | None) -> str:
    return " " + " ".join(re.sub(r"[^0-9a-z]+", " ", (text or "").lower()).split()) + " "


def intervention_texts(record: dict) -> list[str]:
    arms = record["protocolSection"].get("armsInterventionsModule", {})
    texts = []
    for i in arms.get("interventions", []):
        texts += [i.get("name")] + i.get("otherNames", [])
    for a in arms.get("armGroups", []):
        texts += [a.get("label"), a.get("description")]
    derived = record.get("derivedSection", {}).get("interventionBrowseModule", {})
    texts += [x["term"] for x in derived.get("meshes", []) + derived.get("ancestors", [])]
    return texts


def condition_texts(record: dict) -> list[str]:
    ps = record["protocolSection"]
    ident = ps["identificationModule"]
    derived = record.get("derivedSection", {}).get("conditionBrowseModule", {})
    return (ps.get("conditionsModule", {}).get("conditions", []) + [ident.get("briefTitle"), ident.get("officialTitle")]
            + ps.get("conditionsModule", {}).get("keywords", [])
            + [x["term"] for x in derived.get("meshes", []) + derived.get("ancestors", [])])


def mentions(texts: list[str], phrase: str) -> bool:
    return any(words(phrase) in words(t) for t in texts)


def test_search_trials_finds_what_reading_the_records_finds(m, records):
    by_hand = {nct(r) for r in records
               if mentions(intervention_texts(r), "tadalafil")
               and (mentions(condition_texts(r), "erectile dysfunction") or mentions(condition_texts(r), "impotence"))}
    found = m.search_trials("tadalafil", "erectile dysfunction", max_results=1000)
    assert len(by_hand) >= 40
    assert by_hand <= {t.nct_id for t in found}
    relevance = [t.relevance for t in found]
    assert relevance == sorted(relevance, reverse=True)
    for a, b in zip(found, found[1:]):
        assert a.relevance > b.relevance or a.nct_id < b.nct_id  # ties broken by nct_id


def test_a_trial_has_every_contract_field_from_its_record(m, records_by_id):
    [trial] = [t for t in m.search_trials("tadalafil", "prostate cancer") if t.nct_id == "NCT00215631"]
    raw = records_by_id["NCT00215631"]["protocolSection"]
    assert trial.title == raw["identificationModule"]["briefTitle"]
    assert trial.phase == "Phase 3" and trial.phases == ["PHASE3"]
    assert trial.overall_status == "TERMINATED" and trial.why_stopped == "slow recruitment"
    assert trial.conditions == ["Prostate Cancer", "Erectile Dysfunction"]
    assert [(i.intervention_type, i.intervention_name) for i in trial.interventions] == [("Drug", "tadalafil")]
    assert trial.sponsor == raw["sponsorCollaboratorsModule"]["leadSponsor"]["name"]
    assert trial.study_type == "INTERVENTIONAL"
    recorded = [o["measure"] for o in raw["outcomesModule"]["primaryOutcomes"]]
    assert [o.measure for o in trial.primary_outcomes] == recorded


def test_references_are_pmids(m, records_by_id):
    with_refs = [(k, r) for k, r in records_by_id.items()
                 if any(x.get("pmid") for x in r["protocolSection"].get("referencesModule", {}).get("references", []))]
    nct_id, record = with_refs[0]
    expected = [x["pmid"] for x in record["protocolSection"]["referencesModule"]["references"] if x.get("pmid")]
    assert m.get_trial(nct_id).references == expected


def test_get_terminated_by_drug_and_by_condition_with_the_stop_category(m):
    by_drug = {t.nct_id: t for t in m.get_terminated("tadalafil")}
    by_condition = {t.nct_id: t for t in m.get_terminated("prostate cancer")}
    for found in (by_drug, by_condition):
        trial = found["NCT00215631"]
        expected = ("enrollment", "slow recruitment", "tadalafil")
        assert (trial.stop_category, trial.why_stopped, trial.drug_name) == expected
    futile = {t.nct_id: t for t in m.get_terminated("suicidal ideation")}["NCT05144685"]
    assert futile.stop_category == "efficacy" and futile.termination_date == "2024-06-14"
    assert all(t.status in ("TERMINATED", "WITHDRAWN", "SUSPENDED") for t in m.get_terminated("erectile dysfunction"))


@pytest.mark.parametrize("why, category", [
    ("Business decision, not related to safety.", "business"),
    ("Strategic business decision (unrelated to safety)", "business"),
    ("Lack of efficacy", "efficacy"),
    ("Safety concerns", "safety"),
    ("Slow recruitment", "enrollment"),
    ("Funding ended", "business"),
    ("The project was not funded.", "business"),
    ("Due to COVID-19 Pandemic", "other"),
    (None, "unknown"),
    # a consequence of the stop is not its reason, when the text names one
    ("withdrawn due to a strategic business decision; no participants were enrolled", "business"),
    ("Sponsor decision. No subjects were randomized.", "business"),
    ("The drug was found to be toxic in another study; 0 participants", "safety"),
    ("Study withdrawn for lack of funding, the trial never enrolled", "business"),
    ("No participants enrolled", "enrollment"),  # real (sample): nothing else is said
    ("The study never enrolled", "enrollment"),
    ("No patients were recruited", "enrollment"),
    # while these are reasons
    ("low enrollment", "enrollment"),
    ("slow accrual", "enrollment"),
    ("Enrollment challenges", "enrollment"),
    ("Not enough patients", "enrollment"),
    ("Insufficient number of participants; business decision", "enrollment"),
])
def test_stop_categories(m, why, category):
    assert m.rows("SELECT stop_category($w) AS c", {"w": why})[0]["c"] == category


def test_whitespace_with_sensible_condition_drugs(m):
    result = m.detect_whitespace("tadalafil", "NASH")
    assert result.is_whitespace and result.exact_match_count == 0
    by_drug = m.rows("SELECT count(*) AS n FROM field_matches('intervention', 'tadalafil')")[0]["n"]
    assert result.drug_only_trials == by_drug > 40
    assert result.condition_only_trials == 11
    drugs = result.condition_drugs
    assert drugs[0].drug_name == "Saroglitazar" and drugs[0].phase == "Phase 4" and drugs[0].status == "RECRUITING"
    assert len({d.drug_name.lower() for d in drugs}) == len(drugs)
    assert not any(re.search(r"placebo|sham|vehicle", d.drug_name, re.I) for d in drugs)
    assert all(d.phase not in ("Phase 1", "Early Phase 1", "Not Applicable", "") for d in drugs)
    ranks = [("Phase 4", "Phase 3", "Phase 2/Phase 3", "Phase 2", "Phase 1/Phase 2").index(d.phase) for d in drugs]
    assert ranks == sorted(ranks)
    assert [d.drug_name for d in drugs if d.phase == "Phase 2"] == ["AZD2693", "CS0159 (Linafexor)"]  # recruiting first


def test_not_whitespace_has_no_condition_drugs(m):
    result = m.detect_whitespace("tadalafil", "erectile dysfunction")
    assert not result.is_whitespace and result.exact_match_count >= 40 and result.condition_drugs == []


def test_landscape_groups_and_ranks_as_the_rules_say(m, records_by_id):
    result = m.get_landscape("NASH")
    trial_ids = [r["nct_id"] for r in m.rows(
        "SELECT nct_id FROM field_matches('condition', 'NASH') JOIN trial_card USING (nct_id) WHERE is_current AND "
        "list_has_any(phases, ['EARLY_PHASE1','PHASE1','PHASE2','PHASE3','PHASE4'])")]
    assert result.total_trial_count == len(trial_ids) == sum(result.phase_distribution.values())
    groups: dict = {}
    for nct_id in trial_ids:
        ps = records_by_id[nct_id]["protocolSection"]
        sponsor = ps["sponsorCollaboratorsModule"]["leadSponsor"]["name"]
        for i in ps["armsInterventionsModule"]["interventions"]:
            if i["type"] in ("DRUG", "BIOLOGICAL") and "placebo" not in i["name"].lower():
                g = groups.setdefault((sponsor, i["name"].lower()), {"trials": set(), "enrollment": 0})
                if nct_id not in g["trials"]:
                    g["trials"].add(nct_id)
                    g["enrollment"] += ps["designModule"].get("enrollmentInfo", {}).get("count", 0)
    assert {(c.sponsor, c.drug_name.lower()) for c in result.competitors} == set(groups)
    for c in result.competitors:
        g = groups[(c.sponsor, c.drug_name.lower())]
        assert (c.trial_count, c.total_enrollment) == (len(g["trials"]), g["enrollment"])
    order = [(-["Early Phase 1", "Phase 1", "Phase 2", "Phase 3", "Phase 4"].index(c.max_phase), -c.total_enrollment)
             for c in result.competitors]
    assert order == sorted(order)


def test_recent_starts_follow_the_reference_date(m):
    cutoff = date(2024, 6, 1)
    recent = m.get_landscape("erectile dysfunction", date_before=cutoff).recent_starts
    assert recent and all("2022-01-01" <= r.start_date[:10].ljust(10, "0") for r in recent)
    starts = [r.start_date for r in recent]
    assert all(s[:7] <= "2024-06" for s in starts)


def test_a_landscape_without_date_before_counts_recent_starts_from_today(m):
    """today: the reference day of calls without a date_before (the Python API passes it; SQL defaults it)."""
    given = m.rows("SELECT recent_starts, total_trial_count FROM get_landscape_many(['erectile dysfunction'], "
                   "[NULL::DATE], [NULL::DATE], [10], today := DATE '2012-06-30')")[0]
    starts = [r["start_date"] for r in given["recent_starts"]]
    assert starts and all("2010-01" <= s[:7] <= "2012-06" for s in starts)
    assert given["total_trial_count"] == m.get_landscape("erectile dysfunction").total_trial_count
    today = [r.start_date for r in m.get_landscape("erectile dysfunction").recent_starts]
    in_sql = m.rows("SELECT recent_starts FROM get_landscape_many(['erectile dysfunction'], [NULL::DATE], "
                    "[NULL::DATE], [10], today := current_date)")[0]["recent_starts"]
    assert today == [r["start_date"] for r in in_sql]  # whatever today is, the same reference day
    assert all(s[:4] >= str(date.today().year - 2) for s in today)


def test_synonyms_the_file_and_the_data_teach(m):
    nash = {t.nct_id for t in m.search_trials("AZD2693", "NASH")}
    assert nash == {t.nct_id for t in m.search_trials("AZD2693", "non-alcoholic steatohepatitis")} == {"NCT05809934"}
    spelled_out = m.get_landscape("nonalcoholic steatohepatitis").total_trial_count
    assert m.get_landscape("NASH").total_trial_count == spelled_out
    # NCT05872269 lists only "NAFLD": it is found for NASH through the MeSH term studies listing NASH carry.
    assert "NCT05872269" in {r["nct_id"] for r in m.rows("SELECT nct_id FROM field_matches('condition', 'NASH')")}


def test_a_compound_condition_teaches_no_synonym(m):
    # "Erectile Dysfunction With Type 1 Diabetes Mellitus" was indexed under Erectile Dysfunction (found as
    # "Erectile Dysfunction"): that must not make a diabetes query find erectile dysfunction trials.
    diabetes = {r["nct_id"] for r in m.rows(
        "SELECT nct_id FROM field_matches('condition', 'Type 1 Diabetes Mellitus')")}
    assert "NCT00215631" not in diabetes  # tadalafil after prostate radiotherapy
    # nor a study of type 1 diabetes alone be found for NASH
    assert "NCT06748963" not in {r["nct_id"] for r in m.rows("SELECT nct_id FROM field_matches('condition', 'NASH')")}


def test_whole_words_only(m):
    assert m.rows("SELECT contains(search_norm('Glasgow Coma Scale'), search_norm('ASA')) AS hit")[0]["hit"] is False
    assert m.rows("SELECT contains(search_norm('Non-Alcoholic Steatohepatitis'), search_norm('non alcoholic')) "
                  "AS hit")[0]["hit"]
    assert all("nas " not in words(c) for t in m.search_trials("tadalafil", "NAS") for c in t.conditions)


def test_date_before_is_first_posted_on_or_before(m, records_by_id):
    cutoff = date(2010, 1, 1)
    trials = m.search_trials("tadalafil", "erectile dysfunction", date_before=cutoff, max_results=1000)
    assert trials
    for t in trials:
        posted = records_by_id[t.nct_id]["protocolSection"]["statusModule"]["studyFirstPostDateStruct"]["date"]
        assert posted <= "2010-01-01"
    later = {t.nct_id for t in m.search_trials("tadalafil", "erectile dysfunction", max_results=1000)}
    assert {t.nct_id for t in trials} < later


def test_phase_filter(m):
    trials = m.search_trials("tadalafil", "erectile dysfunction", phase_filter="(PHASE2 OR PHASE3)", max_results=1000)
    assert trials and all(set(t.phases) & {"PHASE2", "PHASE3"} for t in trials)
    phase3 = m.search_trials("tadalafil", "erectile dysfunction", phase_filter="PHASE3", max_results=1000)
    assert phase3 and all("PHASE3" in t.phases for t in phase3)
    assert {t.nct_id for t in phase3} < {t.nct_id for t in trials}


def test_get_trial_aliases_and_bad_ids(m):
    assert m.get_trial("NCT00075127").nct_id == "NCT00057759"  # an alias resolves to its study
    assert m.get_trial("nct00711542").nct_id == "NCT00711542"
    assert m.get_trial("NCT99999999") is None
    for bad in ("NCT123", "12345678", "NCT0000000X", "", None):
        with pytest.raises(InvalidNctId):
            m.get_trial(bad)


def test_details_add_eligibility_sites_and_mesh(m, records_by_id):
    details = m.get_trial_details("NCT00711542")
    raw = records_by_id["NCT00711542"]["protocolSection"]
    assert details.eligibility_criteria == raw["eligibilityModule"]["eligibilityCriteria"]
    assert details.sex == raw["eligibilityModule"]["sex"]
    assert [x.city for x in details.locations] == [x["city"] for x in raw["contactsLocationsModule"]["locations"]]
    assert "Coronary Disease" in details.condition_ancestor_terms


@pytest.mark.parametrize("text", ["'; DROP TABLE studies; --", "100% _x_", '"quoted" O\'Brien', "SELECT * FROM studies",
                                  "x" * 10_000, "糖尿病", "диабет", "🙂💊", "a AND b OR c", "\\", "%"])
def test_any_text_is_searched_as_text(m, text):
    m.search_trials(text, text)
    m.detect_whitespace(text, "NASH")
    m.get_landscape(text)
    m.get_terminated(text)
    m.search(query=text, condition=text)
    m.search(location=text)
    assert m.sql("SELECT count(*) AS n FROM studies")["n"][0] == 2279


@pytest.mark.parametrize("punctuation", ["%", "_", "-", "*", "…", "，"])
def test_punctuation_alone_matches_nothing_in_any_argument(m, punctuation):
    assert m.search(location=punctuation).pagination.total_count == 0
    assert m.search(condition=punctuation).pagination.total_count == 0
    assert m.search(query=punctuation).pagination.total_count == 0
    assert m.search_trials(punctuation, punctuation) == []
    # a punctuation part beside a real one is no condition: "Boston, %" is "Boston"
    assert (m.search(location="Boston, %").pagination.total_count
            == m.search(location="Boston").pagination.total_count > 0)


@pytest.mark.parametrize("call", [
    lambda m, bad: m.search_trials(bad, "NASH"), lambda m, bad: m.get_landscape(bad),
    lambda m, bad: m.search(location=bad), lambda m, bad: m.get_terminated(bad),
    lambda m, bad: m.stats("stats_by_phase", condition=bad)])
def test_a_lone_surrogate_is_an_invalid_argument(m, call):
    with pytest.raises(InvalidArgument, match="lone surrogate") as caught:
        call(m, "asthma \udc80")
    assert caught.value.envelope()["error"]["code"] == "INVALID_INPUT"


@pytest.mark.parametrize("call", [
    lambda m: m.search_trials("", "NASH"), lambda m: m.search_trials("x", "   "),
    lambda m: m.get_terminated(" "), lambda m: m.get_landscape("NASH", top_n=0),
    lambda m: m.search_trials("x", "y", max_results=0), lambda m: m.search_trials("x", "y", phase_filter="PHASE5"),
    lambda m: m.search_trials("x", "y", date_before="June 2019"), lambda m: m.search(status="DONE"),
    lambda m: m.search(phase="Phase 5"), lambda m: m.search(condition="x", page_size=201), lambda m: m.search(),
])
def test_bad_arguments_are_invalid_input(m, call):
    with pytest.raises(InvalidArgument) as caught:
        call(m)
    envelope = caught.value.envelope()
    assert envelope["error"]["code"] == "INVALID_INPUT" and envelope["error"]["recovery_hint"]


def test_invalid_phase_names_the_allowed_values(m):
    with pytest.raises(InvalidArgument, match="Must be one of: EARLY_PHASE1, PHASE1, PHASE2, PHASE3, PHASE4, NA"):
        m.search(condition="diabetes", phase="Phase 5")


@pytest.mark.slow
def test_sql_python_and_cli_give_the_same_answers(m, sample_warehouse):
    def cli(*args):
        done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), *args, "--json"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    python = [t.model_dump(mode="json") for t in m.search_trials("tadalafil", "erectile dysfunction")]
    sql = m.rows("SELECT nct_id, relevance FROM search_trials('tadalafil', 'erectile dysfunction', NULL, NULL, 200)")
    assert [t["nct_id"] for t in python] == [r["nct_id"] for r in sql] == \
        [t["nct_id"] for t in cli("search-trials", "tadalafil", "erectile dysfunction")]
    assert cli("whitespace", "tadalafil", "NASH") == m.detect_whitespace("tadalafil", "NASH").model_dump(mode="json")
    assert cli("landscape", "NASH") == m.get_landscape("NASH").model_dump(mode="json")
    assert cli("terminated", "tadalafil") == [t.model_dump(mode="json") for t in m.get_terminated("tadalafil")]
    assert cli("trial", "NCT00711542") == m.get_trial("NCT00711542").model_dump(mode="json")
    assert cli("details", "NCT00711542") == m.get_trial_details("NCT00711542").model_dump(mode="json")
    assert cli("search", "--condition", "diabetes", "--page-size", "5") == \
        m.search(condition="diabetes", page_size=5).contract_json()


def test_search_filters(m, records_by_id):
    page = m.search(condition="diabetes", status="RECRUITING", sex="FEMALE", min_age=30, max_age=60, page_size=200)
    assert page.pagination.total_count == len(page.items) > 0
    for item in page.items:
        e = records_by_id[item.nct_id]["protocolSection"]["eligibilityModule"]
        assert item.status == "RECRUITING" and e.get("sex", "ALL") in ("ALL", "FEMALE")
        if "minimumAge" in e and e["minimumAge"].endswith("Years"):
            assert float(e["minimumAge"].split()[0]) <= 30
        if "maximumAge" in e and e["maximumAge"].endswith("Years"):
            assert float(e["maximumAge"].split()[0]) >= 60
    boston = m.search(condition="diabetes", location="Boston, MA", page_size=200)
    for item in boston.items:
        sites = records_by_id[item.nct_id]["protocolSection"]["contactsLocationsModule"]["locations"]
        assert any(s.get("city") == "Boston" and s.get("state") == "Massachusetts" for s in sites)


def test_paging_returns_every_match_once(m):
    first = m.search(condition="diabetes", page_size=200)
    seen, cursor = [], None
    while True:
        page = m.search(condition="diabetes", page_size=37, cursor=cursor)
        seen += [i.nct_id for i in page.items]
        cursor = page.pagination.cursor
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == first.pagination.total_count
    assert seen[:200] == [i.nct_id for i in first.items]
    assert m.search(condition="diabetes", page_size=5).items[0].id.startswith("NCT:")


def test_a_cursor_for_another_query_or_garbage_is_refused(m):
    cursor = m.search(condition="diabetes", page_size=5).pagination.cursor
    with pytest.raises(InvalidArgument, match="another search|other parameters"):
        m.search(condition="asthma", page_size=5, cursor=cursor)
    with pytest.raises(InvalidArgument, match="not one this search returned"):
        m.search(condition="diabetes", page_size=5, cursor="not-a-cursor")


@pytest.mark.slow
def test_every_study_of_the_sample_is_a_valid_trial_and_details(m, records):
    """Every study's card validates as a Trial (in one batch), and every 50th alone as a Trial and TrialDetails."""
    trials = m.batch([("get_trial", {"nct_id": nct(record)}) for record in records])
    assert [t.nct_id for t in trials] == [nct(record) for record in records]
    for record, batched in zip(records[::50], trials[::50]):
        assert m.get_trial(nct(record)) == batched
        assert m.get_trial_details(nct(record)).nct_id == nct(record)


@pytest.mark.slow  # every macro against plain SQL, field by field
def test_every_macro_answers_from_plain_sql_as_the_python_api_does(m, sample_warehouse):
    """The Python API runs the set-wise macros and reads cards; an analyst calls the one-call macros from any
    DuckDB session. Both must give the same answers, field by field."""
    from ctmirror.read.models import ConditionLandscape, TerminatedTrial, Trial, TrialDetails, WhitespaceResult

    con = duckdb.connect(str(sample_warehouse / "ctmirror.duckdb"), read_only=True)

    def rows(query, params):
        cursor = con.execute(query, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    found = 0
    for drug, condition, cutoff in [("tadalafil", "erectile dysfunction", None),
                                    ("sildenafil", "impotence", "2012-01-01"),
                                    ("tadalafil", "NASH", None), ("metformin", "diabetes", "2019-06-01")]:
        day = None if cutoff is None else date.fromisoformat(cutoff)
        api = m.search_trials(drug, condition, cutoff, holdout="first_posted")
        sql = rows("SELECT * FROM search_trials($1, $2, $3, NULL, 200)", [drug, condition, day])
        assert [Trial.model_validate(r) for r in sql] == api
        found += len(api)
        phased = rows("SELECT * FROM search_trials($1, $2, $3, 'PHASE3', 200)", [drug, condition, day])
        assert [Trial.model_validate(r) for r in phased] == \
            m.search_trials(drug, condition, cutoff, phase_filter="PHASE3", holdout="first_posted")
        [white] = rows("SELECT * FROM detect_whitespace($1, $2, $3)", [drug, condition, day])
        by_python = m.detect_whitespace(drug, condition, cutoff, holdout="first_posted")
        assert WhitespaceResult.model_validate(white) == by_python
        [land] = rows("SELECT * FROM get_landscape($1, $2, 20)", [condition, day])
        assert ConditionLandscape.model_validate(land) == m.get_landscape(condition, cutoff, 20, holdout="first_posted")
        stopped = rows("SELECT * FROM get_terminated($1, $2, 100)", [condition, day])
        assert [TerminatedTrial.model_validate(r) for r in stopped] == \
            m.get_terminated(condition, cutoff, holdout="first_posted")
    assert found > 20, "the calls compared must find trials"
    assert m.detect_whitespace("tadalafil", "NASH").condition_drugs, "a whitespace answer lists other drugs"
    for nct_id in ["NCT00711542", "nct00711542", "NCT99999999"]:
        trial = rows("SELECT * FROM get_trial($1)", [nct_id])
        assert [Trial.model_validate(r) for r in trial] == ([m.get_trial(nct_id)] if m.get_trial(nct_id) else [])
        details = rows("SELECT * FROM get_trial_details($1)", [nct_id])
        assert [TrialDetails.model_validate(r) for r in details] == \
            ([m.get_trial_details(nct_id)] if m.get_trial_details(nct_id) else [])


def test_the_eligibility_filter_finds_what_normalising_every_criteria_text_finds(m):
    """search's eligibility keywords read each version's criteria as normalised once at publish (eligibility_text):
    the same studies as normalising every current study's criteria at the call, whole words only."""
    texts = m.rows("SELECT count(*) AS n, count(*) FILTER (WHERE e.norm IS NOT DISTINCT FROM "
                   "search_norm(d.eligibility_criteria)) AS same "
                   "FROM trial_detail AS d JOIN eligibility_text AS e USING (version_no)")
    assert texts[0]["n"] == m.rows("SELECT count(*) AS n FROM trial_detail")[0]["n"] == texts[0]["same"] > 2000
    for keywords in ("pregnant", "HER2", "hepatitis B"):
        found, cursor = set(), None
        while True:
            page = m.search(eligibility_keywords=keywords, page_size=200, cursor=cursor)
            found |= {item.nct_id.replace("NCT:", "NCT") for item in page.items}
            if (cursor := page.pagination.cursor) is None:
                break
        wanted = {r["nct_id"] for r in m.rows(
            "SELECT nct_id FROM studies WHERE contains(search_norm(eligibility_criteria), search_norm($k))",
            {"k": keywords})}
        assert found == wanted and found, keywords


SEARCH_SHAPES = [
    {"condition": "diabetes"},
    {"condition": "diabetes", "status": "RECRUITING", "sex": "FEMALE", "min_age": 30, "max_age": 60},
    {"query": "insulin", "phase": "PHASE3"},
    {"intervention": "metformin", "date_before": "2015-01-01", "study_type": "INTERVENTIONAL"},
    {"condition": "cancer", "location": "Boston, MA"},
    {"condition": "diabetes", "eligibility_keywords": "pregnant"},
    {"query": "pain", "condition": "cancer", "intervention": "morphine"},
    {"condition": "breast cancer", "intervention": "trastuzumab"},  # words that may scatter, beside one word
    {"status": "COMPLETED"},
    {"condition": "no such condition anywhere", "status": "COMPLETED"},
]


def _macro_page(con, call: dict, limit: int, offset: int) -> list[tuple]:
    """The page from the page macro with every argument bound: one generic plan, nothing folded away. Its texts
    are normalised, as the Python API binds them. The calls compared are holdout="first_posted": the date is
    the cutoff, and the rows (and the concepts the records teach) are the current state's (as_of NULL)."""
    status = call.get("status")
    norm = lambda text: None if text is None else search_norm(text)  # noqa: E731
    return con.execute(
        "SELECT nct_id, relevance::DOUBLE, total_matches "
        "FROM search_studies_page($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, $13, $14)",
        [norm(call.get("query")), norm(call.get("condition")), norm(call.get("intervention")),
         None if status is None else [status], call.get("location"), [call["phase"]] if "phase" in call else None,
         norm(call.get("eligibility_keywords")),
         age_days("min_age", call.get("min_age")), age_days("max_age", call.get("max_age")),
         call.get("sex"), call.get("study_type"), date.fromisoformat(call["date_before"]) if "date_before" in call
         else None, limit, offset]).fetchall()


@pytest.mark.slow  # every shape of search's plans against the generic one
def test_search_plans_by_shape_answer_as_the_generic_macro(sample_warehouse):
    """The Python API prepares search once per set of given arguments with the absent ones folded away; the
    public macro, planned with all of them bound, must give the same pages, totals and order. Two plans are kept
    here, so the ten shapes also evict and prepare plans again."""
    con = duckdb.connect(str(sample_warehouse / "ctmirror.duckdb"), read_only=True)
    found = 0
    with Mirror(sample_warehouse) as mirror:
        import ctmirror.read.answers as answers

        kept, answers.SHAPED_PLANS_KEPT = answers.SHAPED_PLANS_KEPT, 2
        try:
            for _ in range(2):
                for call in SEARCH_SHAPES:
                    first = mirror.search(**call, page_size=7, holdout="first_posted")
                    second = mirror.search(**call, page_size=7, cursor=first.pagination.cursor,
                                           holdout="first_posted") if first.pagination.cursor else None
                    for page, offset in ((first, 0), (second, 7)):
                        if page is None:
                            continue
                        api = [(i.nct_id, i.relevance, page.pagination.total_count) for i in page.items]
                        assert api == _macro_page(con, call, 7, offset), call
                        found += len(api)
                    assert len(mirror.shaped_plans) <= 2
            nothing = mirror.search(**SEARCH_SHAPES[-1])
            assert nothing.items == [] and nothing.pagination.total_count == 0 and nothing.pagination.cursor is None
        finally:
            answers.SHAPED_PLANS_KEPT = kept
    assert found > 100, "the shapes compared must find trials"


class _FailingOnce:
    """A DuckDB connection whose next query fails as DuckDB's internal errors do."""

    def __init__(self, con):
        self.con = con

    def execute(self, *args, **kwargs):
        raise duckdb.InternalException("INTERNAL Error: Attempted to access index 0 within vector of size 0")

    def close(self):
        self.con.close()


def test_a_call_goes_on_after_an_internal_error_of_duckdb(sample_warehouse):
    with Mirror(sample_warehouse) as mirror:
        expected = mirror.search_trials("tadalafil", "erectile dysfunction")
        page = mirror.search(condition="diabetes", page_size=5)
        assert expected and page.items
        mirror.con = _FailingOnce(mirror.con)
        assert mirror.search_trials("tadalafil", "erectile dysfunction") == expected
        mirror.con = _FailingOnce(mirror.con)
        assert mirror.search(condition="diabetes", page_size=5).items == page.items
        assert mirror.batch([("get_trial", {"nct_id": "NCT00711542"})]) == [mirror.get_trial("NCT00711542")]


def test_search_takes_several_phases_and_finds_a_study_in_any_of_them(m):
    both = m.search(condition="cancer", phase="PHASE2,PHASE3", page_size=200)
    listed = m.search(condition="cancer", phase=["PHASE3", "PHASE2"], page_size=200)
    each = {phase: {i.nct_id for i in m.search(condition="cancer", phase=phase, page_size=200).items}
            for phase in ("PHASE2", "PHASE3")}
    assert {i.nct_id for i in both.items} == {i.nct_id for i in listed.items} == each["PHASE2"] | each["PHASE3"]
    assert each["PHASE2"] - each["PHASE3"] and each["PHASE3"] - each["PHASE2"]
    with pytest.raises(InvalidArgument, match="Invalid phase value"):
        m.search(condition="cancer", phase=["PHASE2", "PHASE9"])


def every_item(m: Mirror, **arguments) -> list:
    """Every item a search finds, page by page, in its order."""
    items, cursor = [], None
    while True:
        page = m.search(page_size=40, cursor=cursor, **arguments)
        items += page.items
        if not (cursor := page.pagination.cursor):
            return items


@pytest.mark.parametrize("sort, key", [("StartDate", "start_date"), ("EnrollmentCount:desc", "enrollment"),
                                       ("EnrollmentCount", "enrollment"), ("PrimaryCompletionDate:asc",
                                                                            "primary_completion_date")])
def test_search_sorts_by_a_date_or_the_enrollment_across_pages(m, sort, key):
    """Dates descending by default (the v2 spec's), the enrollment ascending; trials without the value last."""
    items = every_item(m, condition="breast cancer", sort=sort)
    assert {i.nct_id for i in items} == {i.nct_id for i in every_item(m, condition="breast cancer")}
    values = [getattr(i, key) for i in items]
    given = [v if key == "enrollment" else date.fromisoformat((v + "-01")[:10]) for v in values if v is not None]
    descending = sort.endswith(":desc") or (":" not in sort and key != "enrollment")
    assert given == sorted(given, reverse=descending) and len(set(given)) > 5
    assert values[len(given):] == [None] * (len(values) - len(given))


def test_search_near_a_point_finds_what_the_v2_apis_filter_geo_finds(m):
    from ctmirror.server import v2

    near = {i.nct_id for i in every_item(m, condition="cancer", near="52.52,13.40,100km")}
    page, _ = v2.studies(m, {"query.cond": "cancer", "filter.geo": "distance(52.52,13.40,100km)", "pageSize": "1000",
                             "fields": "NCTId"}, None)
    assert near == {s["protocolSection"]["identificationModule"]["nctId"] for s in page["studies"]} != set()
    assert {i.nct_id for i in every_item(m, condition="cancer", near="distance(52.52,13.40,62.1371mi)")} == near
    assert near < {i.nct_id for i in every_item(m, condition="cancer", near="52.52,13.40,2000km")}
    with pytest.raises(InvalidArgument, match="near must look like"):
        m.search(condition="cancer", near="52.52,13.40")


@pytest.mark.parametrize("lat, lon, km", [(42.36, -71.06, 80), (39.0, -77.1, 800), (64.1, -21.9, 3000),
                                           (-33.9, 151.2, 50), (0.0, 179.9, 2500), (89.0, 0.0, 20000)])
def test_the_sites_near_a_point_are_every_site_within_the_distance(m, lat, lon, km):
    """versions_within reads a band of latitudes first (a degree is at least 111.19 km): every site within the
    distance is in it, at the equator, across the antimeridian and near a pole alike."""
    within = m.rows("SELECT version_no, km FROM versions_within($lat, $lon, $km) ORDER BY 1",
                    {"lat": lat, "lon": lon, "km": km})
    every = m.rows("SELECT v.version_no, min(6371.0088 * 2 * asin(sqrt(pow(sin(radians(l.lat - $lat) / 2), 2) + "
                   "cos(radians($lat)) * cos(radians(l.lat)) * pow(sin(radians(l.lon - $lon) / 2), 2)))) AS km "
                   "FROM all_locations AS l JOIN study_version AS v USING (nct_id, content_hash) "
                   "WHERE l.lat IS NOT NULL AND l.lon IS NOT NULL GROUP BY 1 HAVING km <= $km ORDER BY 1",
                   {"lat": lat, "lon": lon, "km": km})
    assert within == every and (within or km < 100)


def test_search_by_nct_ids_and_aliases_with_the_keys_chosen(m):
    alias = m.rows("SELECT alias_nct_id, nct_id FROM nct_alias ORDER BY 1 LIMIT 1")[0]
    found = m.search(nct_ids=["NCT:00711542", alias["alias_nct_id"].lower()], fields=["nct_id", "status"])
    assert {i.nct_id for i in found.items} == {"NCT00711542", alias["nct_id"]}
    assert all(set(item) == {"id", "nct_id", "status"} for item in found.model_dump(mode="json")["items"])
    narrowed = m.search(nct_ids="NCT00711542," + alias["nct_id"], status="COMPLETED")
    assert {i.nct_id for i in narrowed.items} == {i.nct_id for i in found.items if i.status == "COMPLETED"}
    with pytest.raises(InvalidArgument, match="Invalid fields value"):
        m.search(condition="asthma", fields=["nct_id", "colour"])
    with pytest.raises(InvalidArgument, match="sort must be one of"):
        m.search(condition="asthma", sort="Colour:asc")


def test_get_landscape_takes_searchs_status_phase_and_location_alone_and_in_a_batch(m):
    calls = [("get_landscape", {"condition": "breast cancer", "location": "Germany"}),
             ("get_landscape", {"condition": "asthma"}),
             ("get_landscape", {"condition": "cancer", "status": ["COMPLETED"], "date_before": "2020-01-01"}),
             ("get_landscape", {"condition": "cancer", "phase": "PHASE2", "status": "RECRUITING"})]
    assert m.batch(calls) == [m.get_landscape(**arguments) for _, arguments in calls]
    phases = ["EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE3", "PHASE4"]  # the landscape's trials have one of these
    for _, arguments in calls:
        filters = {k: v for k, v in arguments.items() if k in ("status", "location", "phase")}
        if not filters or "date_before" in arguments:
            continue
        found = m.search(condition=arguments["condition"], page_size=1, **{"phase": phases, **filters})
        assert m.get_landscape(**arguments).total_trial_count == found.pagination.total_count > 0
    everything = m.get_landscape("cancer").total_trial_count
    assert m.get_landscape("cancer", phase="PHASE2", status="RECRUITING").total_trial_count < everything


def test_a_card_written_in_python_is_the_catalogs_card_json_of_the_same_columns(m):
    # the Python API writes a trial card's JSON from trial_card's and trial_text's columns (answers.card_text); the
    # catalog's card_json macro, which SQL users' search_trials reads, writes it in SQL: every card of the sample,
    # the reconstructed, withheld and status-changed ones among them, is the same JSON either way
    from ctmirror.read.answers import card_text
    columns = ("x.card_head, x.references_json, t.reconstructed_from, t.overall_status, t.why_stopped, "
               "t.results_posted, t.as_of_exact, t.enrollment, t.start_date, t.completion_date, t.withheld")
    rows = m.con.execute(f"SELECT card_json({columns}), {columns} FROM trial_card AS t "
                         "JOIN trial_text AS x USING (version_no)").fetchall()
    assert len(rows) > 2_279
    assert {row[7] for row in rows} == {True, False}  # as_of_exact: references shown and not
    assert any(row[3] is not None for row in rows) and any(row[11] for row in rows)  # reconstructed, withheld
    for in_sql, *values in rows:
        assert json.loads(card_text(*values)) == json.loads(in_sql)
