"""`ctmirror serve`: real servers on loopback ports, driven over HTTP with httpx as the source design's clients do;
answers compared with the Mirror's on the same warehouse."""

from __future__ import annotations

import csv
import http.client
import io
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections import Counter
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
import uvicorn
from conftest import fingerprint, write_ndjson

from ctmirror import InvalidArgument, Mirror
from ctmirror.core.record_files import RecordFiles
from ctmirror.core.warehouse import Warehouse
from ctmirror.read.registry import METHODS
from ctmirror.server import v2
from ctmirror.server.app import Settings, create_app
from ctmirror.server.csv_columns import csv_text
from ctmirror.server.records import project
from ingest.loader import load_paths

PAGES = Path(__file__).parent / "data" / "pages"
PHASES = "AREA[Phase](EARLY_PHASE1 OR PHASE1 OR PHASE2 OR PHASE3 OR PHASE4)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackServer:
    """The app on uvicorn in a thread, on a free loopback port."""

    def __init__(self, settings: Settings) -> None:
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=self.port,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> httpx.Client:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        self.client = httpx.Client(base_url=self.url, timeout=30)
        return self.client

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def api(sample_warehouse):
    with LoopbackServer(Settings(sample_warehouse, sql=True)) as client:
        yield client


@pytest.fixture(scope="module")
def m(sample_mirror):
    return sample_mirror


def ids(page: dict) -> list[str]:
    return [s["protocolSection"]["identificationModule"]["nctId"] for s in page["studies"]]


def every_id(api: httpx.Client, params: dict) -> list[str]:
    found, token = [], None
    while True:
        response = api.get("/api/v2/studies", params={**params, **({"pageToken": token} if token else {})})
        assert response.status_code == 200, response.text
        page = response.json()
        found += ids(page)
        token = page.get("nextPageToken")
        if token is None:
            return found


# ---- the source design's requests against the Mirror's answers --------------------------------------------
@pytest.mark.parametrize("drug, condition", [("tadalafil", "erectile dysfunction"), ("semaglutide", "obesity"),
                                             ("metformin", "diabetes"), ("pembrolizumab", "cancer")])
def test_the_contracts_search_returns_search_trials_answer(api, m, drug, condition):
    """contract 000: GET /studies?query.intr=drug&query.cond=condition, and with the first-posted holdout."""
    page = api.get("/api/v2/studies", params={"query.intr": drug, "query.cond": condition, "pageSize": 1000,
                                              "countTotal": "true", "fields": "NCTId"}).json()
    expected = [t.nct_id for t in m.search_trials(drug, condition, max_results=1000)]
    assert ids(page) == expected and page["totalCount"] == len(expected) and expected
    cutoff = "2015-06-01"
    held = api.get("/api/v2/studies", params={
        "query.intr": drug, "query.cond": condition, "pageSize": 1000, "fields": "NCTId",
        "query.term": f"AREA[StudyFirstPostDate]RANGE[MIN, {cutoff}]"}).json()
    parity = m.search_trials(drug, condition, date_before=cutoff, max_results=1000, holdout="first_posted")
    assert sorted(ids(held)) == sorted(t.nct_id for t in parity)


@pytest.mark.parametrize("drug, condition", [("tadalafil", "erectile dysfunction"), ("sildenafil", "NASH")])
def test_whitespace_and_landscape_counts_are_the_apis_totals(api, m, drug, condition):
    def total(**params) -> int:
        return api.get("/api/v2/studies", params={**params, "countTotal": "true", "pageSize": 1}).json()["totalCount"]

    result = m.detect_whitespace(drug, condition)
    assert result.exact_match_count == total(**{"query.intr": drug, "query.cond": condition})
    assert result.drug_only_trials == total(**{"query.intr": drug})
    assert result.condition_only_trials == total(**{"query.cond": condition})
    assert m.get_landscape(condition).total_trial_count == total(**{"query.cond": condition, "query.term": PHASES})


def test_the_trial_matching_search_with_age_sex_and_study_type(api, m):
    """contract 002: eligibility ages as AREA[MinimumAge]RANGE, sex as aggFilters, AREA[StudyType]."""
    params = {"query.cond": "diabetes", "aggFilters": "sex:f", "pageSize": 1000, "fields": "NCTId",
              "query.term": "AREA[MinimumAge]RANGE[MIN, 18 years] AND AREA[StudyType]INTERVENTIONAL"}
    found = set(ids(api.get("/api/v2/studies", params=params).json()))
    diabetes = {r["nct_id"] for r in m.rows("SELECT nct_id FROM field_matches('condition', 'diabetes')")}
    expected = {r["nct_id"] for r in m.rows(
        "SELECT nct_id FROM trial_card WHERE is_current AND study_type = 'INTERVENTIONAL' AND minimum_age_days <= "
        "18 * 365.25 AND coalesce(sex, 'ALL') IN ('ALL', 'FEMALE')")} & diabetes
    assert found == expected and found


def test_the_statistics_panels_filters(api, m):
    """contract 004: status and phase filters; results with and without."""
    recruiting = api.get("/api/v2/studies", params={"filter.overallStatus": "RECRUITING|NOT_YET_RECRUITING",
                                                    "aggFilters": "phase:2 3,results:without", "countTotal": "true",
                                                    "pageSize": 1}).json()["totalCount"]
    assert recruiting == m.rows(
        "SELECT count(*) AS n FROM trial_card WHERE is_current AND overall_status IN ('RECRUITING', "
        "'NOT_YET_RECRUITING') AND list_has_any(phases, ['PHASE2', 'PHASE3']) AND NOT results_posted")[0]["n"] > 0


@pytest.mark.slow  # every page of several searches
def test_paging_returns_every_match_once_and_no_token_on_the_last_page(api):
    params = {"query.cond": "cancer", "fields": "NCTId"}
    whole = ids(api.get("/api/v2/studies", params={**params, "pageSize": 1000}).json())
    first = api.get("/api/v2/studies", params={**params, "pageSize": 7, "countTotal": "true"}).json()
    assert first["totalCount"] == len(whole) > 30
    paged = every_id(api, {**params, "pageSize": 25})
    assert paged == whole and len(set(paged)) == len(paged)
    second = api.get("/api/v2/studies", params={**params, "pageSize": 7, "countTotal": "true",
                                                "pageToken": first["nextPageToken"]}).json()
    assert "totalCount" not in second  # the API gives it with the first page only
    default = api.get("/api/v2/studies", params=params).json()
    assert len(default["studies"]) == 10
    assert len(api.get("/api/v2/studies", params={"pageSize": 5000}).json()["studies"]) == 1000  # coerced down


def test_filters_by_ids_aliases_and_distance_and_two_sort_fields(api, m):
    alias = m.rows("SELECT alias_nct_id, nct_id FROM nct_alias ORDER BY alias_nct_id LIMIT 1")[0]
    found = every_id(api, {"filter.ids": f"NCT00711542,{alias['alias_nct_id']}"})
    assert sorted(found) == sorted(["NCT00711542", alias["nct_id"]])
    near = every_id(api, {"filter.geo": "distance(42.36,-71.06,50mi)", "pageSize": 1000})
    expected = m.rows("SELECT DISTINCT nct_id FROM locations WHERE lat IS NOT NULL AND 6371.0088 * 2 * asin(sqrt("
                      "pow(sin(radians(lat - 42.36) / 2), 2) + cos(radians(42.36)) * cos(radians(lat)) * "
                      "pow(sin(radians(lon + 71.06) / 2), 2))) <= 50 * 1.609344")
    assert near and sorted(near) == sorted(r["nct_id"] for r in expected)
    page = api.get("/api/v2/studies", params={"query.cond": "cancer", "sort": "Phase:asc", "pageSize": 5})
    assert page.status_code == 400  # not a sortable field here
    page = api.get("/api/v2/studies", params={"query.cond": "cancer", "sort": "EnrollmentCount:desc,StartDate:asc",
                                              "pageSize": 1000, "fields": "NCTId|EnrollmentCount|StartDate"}).json()
    counts = [s["protocolSection"].get("designModule", {}).get("enrollmentInfo", {}).get("count")
              for s in page["studies"]]
    known = [c for c in counts if c is not None]
    assert len(known) > 100 and known == sorted(known, reverse=True) and counts[:len(known)] == known


def test_filter_geo_ranks_by_geo_decay_nearest_first(api, m):
    """geoDecay (spec default func:exp,scale:300mi,offset:0mi,decay:0.5) multiplies relevance by a factor of the
    distance to a study's closest site: with no query, the nearest first; a steep decay puts every study with a
    site close by first; a sort by another field is left as it is."""
    lat, lon, radius_mi = 42.36, -71.06, 150
    closest = {r["nct_id"]: r["km"] for r in m.rows(
        "SELECT nct_id, min(6371.0088 * 2 * asin(sqrt(pow(sin(radians(lat - $lat) / 2), 2) + cos(radians($lat)) "
        "* cos(radians(lat)) * pow(sin(radians(lon - $lon) / 2), 2)))) AS km FROM locations "
        "WHERE lat IS NOT NULL GROUP BY nct_id", {"lat": lat, "lon": lon})}
    geo = {"filter.geo": f"distance({lat},{lon},{radius_mi}mi)", "pageSize": 1000}
    nearest_first = every_id(api, geo)
    assert len(nearest_first) > 100
    factors = [round(math.exp(math.log(0.5) * closest[n] / (300 * 1.609344)), 4) for n in nearest_first]
    assert factors == sorted(factors, reverse=True) and factors[0] > 0.99 > 0.75 > factors[-1]
    for factor in set(factors):  # ties in NCT order
        tied = [n for n, f in zip(nearest_first, factors) if f == factor]
        assert tied == sorted(tied)
    assert nearest_first != sorted(nearest_first)

    steep = every_id(api, {**geo, "query.cond": "cancer", "geoDecay": "func:linear,scale:10km,offset:0km,decay:0.1"})
    close_by = [closest[n] < 10 / 0.9 for n in steep]
    assert 0 < close_by.index(False) and not any(close_by[close_by.index(False):])
    assert sorted(steep) == sorted(every_id(api, {**geo, "query.cond": "cancer"}))

    by_date = api.get("/api/v2/studies", params={**geo, "sort": "LastUpdatePostDate",
                                                 "fields": "NCTId|LastUpdatePostDate"}).json()["studies"]
    days = [s["protocolSection"].get("statusModule", {}).get("lastUpdatePostDateStruct", {}).get("date")
            for s in by_date]
    known = [d for d in days if d]  # the records without one last
    assert len(known) > 100 and known == sorted(known, reverse=True) and days[:len(known)] == known
    for bad in ("func:exp,scale:300mi,offset:0mi,decay:1", "func:exp,scale:0km,offset:0mi,decay:0.5",
                "func:cubic,scale:300mi,offset:0mi,decay:0.5"):
        refused = api.get("/api/v2/studies", params={**geo, "geoDecay": bad})
        assert refused.status_code == 400 and "geoDecay" in refused.text


def test_one_connection_finds_each_points_studies_in_turn(m):
    """filter.geo's versions are a table each search refills: a plan made for one point must not keep its bounds
    (a prepared plan did, and found 738 of 752 studies for the next point)."""
    def truth(lat: float, lon: float, km: float) -> int:
        return m.rows("SELECT count(DISTINCT nct_id) AS n FROM locations WHERE lat IS NOT NULL AND 6371.0088 * 2 * "
                      "asin(sqrt(pow(sin(radians(lat - $lat) / 2), 2) + cos(radians($lat)) * cos(radians(lat)) * "
                      "pow(sin(radians(lon - $lon) / 2), 2))) <= $km", {"lat": lat, "lon": lon, "km": km})[0]["n"]
    points = [(42.36, -71.06, 50), (39.0035707, -77.1013313, 500), (34.05, -118.24, 100)] * 2
    for lat, lon, miles in points:
        for extra in ({}, {"geoDecay": "func:linear,scale:100km,offset:10km,decay:0.1"}, {"sort": "StartDate"}):
            page, _ = v2.studies(m, {"filter.geo": f"distance({lat},{lon},{miles}mi)", "countTotal": "true",
                                     "fields": "NCTId", **extra}, None)
            assert page["totalCount"] == truth(lat, lon, miles * 1.609344) > 0, (lat, lon, extra)



def test_a_circle_anywhere_finds_the_versions_the_distance_finds(m):
    """versions_within narrows the sites to a box of latitude and longitude before the distance: the same versions
    and distances as the distance alone, for circles around the sample's own sites, across the 180th meridian,
    over a pole, and around the whole Earth."""
    sites = [(row["lat"], row["lon"]) for row in m.rows(
        "SELECT lat, lon FROM all_locations WHERE lat IS NOT NULL ORDER BY hash(lat, lon) LIMIT 6")]
    circles = [(lat, lon, km) for (lat, lon), km in zip(sites, (5, 50, 300, 1500, 3000, 8000))]
    circles += [(-41.0, 179.9, 900.0), (-36.8, -179.5, 2500.0), (64.1, -21.9, 2000.0), (89.5, 10.0, 700.0),
                (-89.0, 0.0, 1500.0), (0.0, 0.0, 20_100.0)]
    found_somewhere = 0
    for lat, lon, km in circles:
        boxed = m.rows("SELECT version_no, km FROM versions_within($lat, $lon, $km) ORDER BY version_no",
                       {"lat": lat, "lon": lon, "km": km})
        plain = m.rows(
            "SELECT v.version_no, min(d.km) AS km FROM (SELECT nct_id, content_hash, 6371.0088 * 2 * asin(sqrt("
            "pow(sin(radians(lat - $lat) / 2), 2) + cos(radians($lat)) * cos(radians(lat)) * "
            "pow(sin(radians(lon - $lon) / 2), 2))) AS km FROM all_locations WHERE lat IS NOT NULL) AS d "
            "JOIN study_version AS v USING (nct_id, content_hash) WHERE d.km <= $km GROUP BY 1 ORDER BY 1",
            {"lat": lat, "lon": lon, "km": km})
        assert boxed == plain, (lat, lon, km)
        found_somewhere += bool(plain)
    assert found_somewhere >= 8


def test_sorting_by_a_date_and_by_relevance(api, m):
    page = api.get("/api/v2/studies", params={"query.cond": "asthma", "sort": "StartDate:desc", "pageSize": 1000,
                                              "fields": "NCTId,StartDate"}).json()
    starts = [s["protocolSection"].get("statusModule", {}).get("startDateStruct", {}).get("date")
              for s in page["studies"]]
    dated = [s for s in starts if s]
    assert dated == sorted(dated, key=lambda d: d + "-01"[:10 - len(d)] if len(d) < 10 else d, reverse=True)
    assert api.get("/api/v2/studies", params={"sort": "Nonsense:asc"}).status_code == 400
    # a date's default direction is descending (the spec's); a field path names the same piece
    for sort in ("StartDate", "protocolSection.statusModule.startDateStruct.date:desc"):
        again = api.get("/api/v2/studies", params={"query.cond": "asthma", "sort": sort, "pageSize": 1000,
                                                   "fields": "NCTId,StartDate"}).json()
        assert again == page, sort


def _submitted(study: dict, field: str = "lastUpdateSubmitDate") -> str | None:
    return study["protocolSection"].get("statusModule", {}).get(field)


@pytest.mark.slow  # pages through 762 studies and three more queries
def test_a_data_pipeline_taps_incremental_requests_run_unchanged(api, records_by_id):
    """The request a data-pipeline tap sends every run (a field-path AREA range and sort, as its URL encodes them),
    paged to the end: every study updated since the bookmark, oldest update first."""
    since = "2024-01-01"
    url = ("/api/v2/studies?filter.advanced=AREA%5BprotocolSection.statusModule.lastUpdateSubmitDate%5D"
           f"RANGE%5B{since}%2C%20MAX%5D&sort=protocolSection.statusModule.lastUpdateSubmitDate%3Aasc"
           "&pageSize=100&countTotal=true")
    studies, token = [], None
    while True:
        response = api.get(url + (f"&pageToken={token}" if token else ""))
        assert response.status_code == 200, response.text
        studies += response.json()["studies"]
        token = response.json().get("nextPageToken")
        if token is None:
            break
    updated = [_submitted(s) for s in studies]
    expected = {n for n, r in records_by_id.items() if (_submitted(r) or "") >= since}
    assert len(expected) > 100 and {s["protocolSection"]["identificationModule"]["nctId"] for s in studies} == expected
    assert updated == sorted(updated) and len(studies) == len(expected)
    # by piece name; a date alone is its year (or month, or day); a date sorts newest first unless told
    for query, wanted in ((f"AREA[LastUpdateSubmitDate]RANGE[{since}, MAX]", expected),
                          ("AREA[StudyFirstSubmitDate]2015", {n for n, r in records_by_id.items()
                                                              if (_submitted(r, "studyFirstSubmitDate") or "")
                                                              .startswith("2015")})):
        assert len(wanted) > 10 and set(every_id(api, {"query.term": query, "pageSize": 1000})) == wanted, query
    page = api.get("/api/v2/studies", params={"sort": "StudyFirstSubmitDate", "pageSize": 1000,
                                              "fields": "NCTId,StudyFirstSubmitDate"}).json()
    submitted = [_submitted(s, "studyFirstSubmitDate") for s in page["studies"]]
    assert submitted == sorted(submitted, reverse=True)


def test_submission_dates_after_a_cutoff_neither_match_nor_sort(m):
    cutoff = date(2016, 3, 1)
    page, _ = v2.studies(m, {"query.term": "AREA[LastUpdateSubmitDate]RANGE[2015-06-01, MAX]", "pageSize": "1000",
                             "sort": "LastUpdateSubmitDate:asc", "countTotal": "true"}, cutoff)
    updated = [_submitted(s) for s in page["studies"]]
    assert page["totalCount"] > 10 and updated == sorted(updated)
    assert all("2015-06-01" <= day <= cutoff.isoformat() for day in updated)
    later, _ = v2.studies(m, {"query.term": f"AREA[LastUpdateSubmitDate]RANGE[{cutoff}, MAX]",
                              "countTotal": "true"}, cutoff)
    assert later["totalCount"] == 0

def test_fields_projections_match_the_recorded_live_answers(api, records_by_id):
    """Replays the recorded live requests whose studies the sample holds (tests/data/pages): single studies must
    come back exactly as recorded; a search's studies must be among ours, projected to the same keys."""
    checked = 0
    for path in sorted(PAGES.glob("*.json")):
        recorded = json.loads(path.read_text())
        uri = recorded["_source"]["request_uri"].split(" ")[0]
        if not uri.startswith("https://clinicaltrials.gov/api/v2/") or "pageToken" in uri:
            continue
        parts = urlsplit(uri)
        response = api.get(parts.path, params=parts.query)
        assert response.status_code in (200, 404), response.text
        if "/studies/NCT" in parts.path:
            nct_id = parts.path.rsplit("/", 1)[1]
            if nct_id in records_by_id:
                assert response.json() == recorded["response"], nct_id
                checked += 1
        else:
            ours = {s["protocolSection"]["identificationModule"]["nctId"]: s for s in response.json()["studies"]}
            for study in recorded["response"]["studies"]:
                nct_id = study["protocolSection"]["identificationModule"]["nctId"]
                if nct_id in ours and nct_id in records_by_id:
                    assert set(ours[nct_id]["protocolSection"]) == set(study["protocolSection"]), nct_id
                    checked += 1
    assert checked >= 3


@pytest.mark.parametrize("cutoff", [None, date(2016, 3, 1)])
def test_a_page_of_chosen_fields_is_the_whole_records_projected(sample_warehouse, cutoff):
    """With `fields`, a page decodes only those parts of each stored record (and, at a cutoff, what judges them):
    each study is its whole record as of the cutoff, projected; keys in the registry's order. The fields include
    a whole module, a whole section, list items' leaves, dated leaves and documents, whose fate at a cutoff hangs on
    parts not asked for."""
    fields = ["protocolSection.statusModule", "protocolSection.identificationModule.nctId", "annotationSection",
              "protocolSection.contactsLocationsModule.locations.city", "hasResults",
              "protocolSection.designModule.enrollmentInfo.count", "documentSection.largeDocumentModule.largeDocs",
              "resultsSection.participantFlowModule.groups.title", "protocolSection.statusModule.completionDateStruct"]
    paths = [tuple(field.split(".")) for field in fields]
    with Mirror(sample_warehouse, as_of=cutoff) as m:
        # the studies with documents, unposted events or results (posted before the cutoff tested or after it)
        request = {"filter.advanced": "AREA[LargeDocFilename]pdf OR AREA[UnpostedEventType]RELEASE OR "
                                      "AREA[ResultsFirstPostDate]RANGE[MIN, 2016-01-01]", "pageSize": "1000"}
        whole, _ = v2.studies(m, request, None)
        chosen, _ = v2.studies(m, {**request, "fields": ",".join(fields)}, None)
        # a CSV page decodes what its columns read: the same text as from the whole records
        for csv_fields in ({}, {"fields": "NCT Number,Study Results,Study Documents,Completion Date,"
                                          "ResultsFirstPostDate"}):
            page, search = v2.studies(m, {**request, "format": "csv", **csv_fields}, None)
            assert search.fields and csv_text(page["studies"], search.csv_columns, header=True) == \
                csv_text(whole["studies"], search.csv_columns, header=True)
    assert len(whole["studies"]) > 100
    assert chosen["studies"] == [project(study, paths) for study in whole["studies"]]
    for ours, record in zip(chosen["studies"], whole["studies"]):
        status = ours.get("protocolSection", {}).get("statusModule", {})
        assert list(status) == list(record["protocolSection"].get("statusModule", {}))
    assert any("annotationSection" in study for study in chosen["studies"])
    assert any("largeDocs" in study.get("documentSection", {}).get("largeDocumentModule", {})
               for study in chosen["studies"])


def test_csv_pages(api):
    response = api.get("/api/v2/studies", params={"query.cond": "NASH", "format": "csv", "pageSize": 2,
                                                  "countTotal": "true"})
    lines = response.text.strip().splitlines()
    assert response.headers["content-type"].startswith("text/csv") and lines[0].startswith("NCT Number,Study Title")
    assert len(lines) == 3 and int(response.headers["x-total-count"]) >= 3 and response.headers["x-next-page-token"]
    chosen = api.get("/api/v2/studies", params={"query.cond": "NASH", "format": "csv", "fields": "NCTId,Phase"})
    assert chosen.text.splitlines()[0] == "NCTId,Phase"
    header = next(csv.reader(io.StringIO(response.text)))
    assert len(header) == 30 and header[:3] == ["NCT Number", "Study Title", "Study URL"]
    following = api.get("/api/v2/studies", params={"query.cond": "NASH", "format": "csv", "pageSize": 2,
                                                   "pageToken": response.headers["x-next-page-token"]})
    assert following.status_code == 200 and not following.text.startswith("NCT Number")  # a header once


def test_csv_fields_by_the_live_apis_column_titles(api, m):
    """As a CSV client of the live API asks: the column titles in fields, values in the API's formats."""
    titles = "NCT Number,Study Title,Study URL,Study Status,Study Results,Conditions,Interventions,Phases"
    answer = api.get("/api/v2/studies", params={"query.cond": "erectile dysfunction", "format": "csv",
                                                "fields": titles, "pageSize": 100})
    assert answer.status_code == 200, answer.text
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert list(rows[0]) == titles.split(",") and len(rows) == 100
    with_results = {r["nct_id"] for r in m.rows("SELECT nct_id FROM studies WHERE has_results")}
    for row in rows:
        assert row["Study URL"] == "https://clinicaltrials.gov/study/" + row["NCT Number"]
        assert row["Study Results"] == ("YES" if row["NCT Number"] in with_results else "NO")
    assert any(row["Study Results"] == "YES" for row in rows) and any("|" in row["Conditions"] for row in rows)
    assert all(i.split(": ")[0].isupper() for row in rows for i in row["Interventions"].split("|") if i)
    other_ids = api.get("/api/v2/studies", params={"filter.ids": "NCT02552212", "format": "csv",
                                                   "fields": "NCT Number,Other IDs"})
    assert other_ids.text.splitlines()[1] == "NCT02552212,AS0006|2015-001894-41"  # the organisation's ID first


def test_a_single_study_as_csv_and_as_a_zipped_json_record(api):
    as_json = api.get("/api/v2/studies/NCT02552212").json()
    as_csv = api.get("/api/v2/studies/NCT02552212", params={"format": "csv"})
    assert as_csv.status_code == 200 and as_csv.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert len(rows) == 1 and len(rows[0]) == 30 and rows[0]["NCT Number"] == "NCT02552212"
    searched = api.get("/api/v2/studies", params={"filter.ids": "NCT02552212", "format": "csv"})
    assert as_csv.text == searched.text  # the search's columns and formats, for one study
    chosen = api.get("/api/v2/studies/NCT02552212", params={"format": "csv", "fields": "NCT Number,Other IDs"})
    assert chosen.text.splitlines() == ["NCT Number,Other IDs", "NCT02552212,AS0006|2015-001894-41"]
    zipped = api.get("/api/v2/studies/NCT02552212", params={"format": "json.zip", "markupFormat": "legacy"})
    assert zipped.headers["content-type"] == "application/zip"
    assert 'filename="NCT02552212.json.zip"' in zipped.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        assert archive.namelist() == ["NCT02552212.json"]
        assert json.loads(archive.read("NCT02552212.json")) == as_json  # markup stays markdown
    projected = api.get("/api/v2/studies/NCT02552212", params={"format": "json.zip", "fields": "NCTId"})
    with zipfile.ZipFile(io.BytesIO(projected.content)) as archive:
        assert json.loads(archive.read("NCT02552212.json")) == \
            api.get("/api/v2/studies/NCT02552212", params={"fields": "NCTId"}).json()
    for fmt in ("fhir.json", "ris", "xml"):
        refused = api.get("/api/v2/studies/NCT02552212", params={"format": fmt})
        assert refused.status_code == 400 and "json, csv, json.zip" in refused.text, fmt
    unknown_column = api.get("/api/v2/studies/NCT02552212", params={"format": "csv", "fields": "No Such Column"})
    assert unknown_column.status_code == 400 and "No Such Column" in unknown_column.text


def test_single_studies_aliases_and_the_other_endpoints(api, m):
    response = api.get("/api/v2/studies/NCT00711542")
    shown = m.rows("SELECT record_file, record_row FROM study_version WHERE is_current AND nct_id = 'NCT00711542'")[0]
    stored = RecordFiles(m.warehouse.root).read(shown["record_file"], shown["record_row"])
    assert response.content == stored  # as stored, from the segment's record file
    assert response.headers["content-type"] == "application/json"
    record = response.json()
    assert record["protocolSection"]["identificationModule"]["nctId"] == "NCT00711542" and "derivedSection" in record
    assert api.get("/api/v2/studies/NCT00711542", params={"fields": "NCTId"}).json() == {
        "protocolSection": {"identificationModule": {"nctId": "NCT00711542"}}}
    assert api.get("/api/v2/studies/NCT00711542", params={"markupFormat": "markdown"}).content == stored
    assert api.get("/api/v2/studies/NCT00711542", params={"markupFormat": "html"}).status_code == 400
    moved = api.get("/api/v2/studies/nct711542", follow_redirects=False)
    assert moved.status_code == 301 and moved.headers["location"] == "/api/v2/studies/NCT00711542"
    missing = api.get("/api/v2/studies/NCT99999999")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/plain")
    version = api.get("/api/v2/version").json()
    assert version["apiVersion"] and version["dataTimestamp"] and version["state"] == m.state_id
    assert api.get("/api/v2/stats/size").json()["totalStudies"] == m.rows("SELECT count(*) AS n FROM studies")[0]["n"]
    values = api.get("/api/v2/stats/field/values", params={"fields": "OverallStatus,Phase"}).json()
    statuses = {v["value"]: v["studiesCount"] for v in values[0]["topValues"]}
    assert statuses == {r["s"]: r["n"] for r in m.rows(
        "SELECT overall_status AS s, count(*) AS n FROM studies WHERE overall_status IS NOT NULL GROUP BY 1")}
    assert values[0]["missingStudiesCount"] == 486  # the sample's field-restricted records
    tree = api.get("/api/v2/studies/metadata").json()
    assert any(n["piece"] == "ProtocolSection" for n in tree)
    assert api.get("/api/v2/studies/metadata", params={"includeIndexedOnly": "false",
                                                       "includeHistoricOnly": "false"}).json() == tree
    refused = api.get("/api/v2/studies/metadata", params={"includeIndexedOnly": "yes"})
    assert refused.status_code == 400 and "includeIndexedOnly" in refused.text
    assert any(e["type"] == "Status" for e in api.get("/api/v2/studies/enums").json())
    areas = api.get("/api/v2/studies/search-areas").json()[0]["areas"]
    assert {a["param"] for a in areas} >= {"cond", "intr", "term", "titles", "locn", "spons", "outc", "id", "lead"}


@pytest.mark.slow  # every method and statistic over HTTP
def test_every_method_and_statistic_over_http_is_the_mirrors(api, m):
    calls = [("search_trials", {"drug": "tadalafil", "condition": "erectile dysfunction", "date_before": "2015-01-01"}),
             ("detect_whitespace", {"drug": "tadalafil", "condition": "NASH"}),
             ("get_landscape", {"condition": "NASH", "top_n": 3}),
             ("get_terminated", {"query": "erectile dysfunction", "max_results": 5}),
             ("get_trial", {"nct_id": "NCT00711542"}), ("get_trial_details", {"nct_id": "NCT00711542"}),
             ("search", {"condition": "diabetes", "status": "RECRUITING", "page_size": 5}),
             ("stats_by_phase", {"condition": "asthma"}), ("stats_by_country", {"condition": "cancer"}),
             # search's filters, on the statistics and get_landscape too; search's order, places and keys
             ("stats_by_status", {"condition": "cancer", "status": ["RECRUITING", "NOT_YET_RECRUITING"],
                                  "location": "Germany", "sponsor_class": "INDUSTRY", "phase": "PHASE3"}),
             ("stats_top_conditions", {"study_type": "OBSERVATIONAL"}),
             ("get_landscape", {"condition": "breast cancer", "status": "RECRUITING", "location": "Germany"}),
             ("search", {"condition": "cancer", "near": "52.52,13.40,100km", "sort": "StartDate:asc",
                         "fields": ["nct_id", "start_date"], "page_size": 5}),
             ("search", {"nct_ids": ["NCT00711542", "NCT:02552212"]})]
    for name, arguments in calls:
        expected = m.call(name, **arguments)
        expected = [e.model_dump(mode="json") if hasattr(e, "model_dump") else e for e in expected] \
            if isinstance(expected, list) else expected.model_dump(mode="json")
        got = api.get(f"/ctmirror/v1/{name}", params=arguments)
        posted = api.post(f"/ctmirror/v1/{name}", json=arguments)
        assert got.status_code == posted.status_code == 200, got.text
        assert got.headers["x-ctmirror-state"] == m.state_id and got.headers["x-ctmirror-as-of"] == "current"
        bodies = [got.json(), posted.json(), expected]
        if name == "search":  # cursors are signed per state and call: compare that there is one
            for body in bodies:
                body["pagination"]["cursor"] = bool(body["pagination"]["cursor"])
        assert bodies[0] == bodies[1] == bodies[2], name
    first = api.get("/ctmirror/v1/search", params={"condition": "cancer", "page_size": 3}).json()
    cursor = first["pagination"]["cursor"]
    following = api.get("/ctmirror/v1/search", params={"condition": "cancer", "page_size": 3, "cursor": cursor})
    assert following.status_code == 200 and following.json()["items"]
    documented = api.get("/ctmirror/v1/openapi.json").json()["paths"]
    assert all(f"/ctmirror/v1/{name}" in documented for name in METHODS)


def test_errors_carry_the_contracts_envelope_and_status(api):
    bad = api.get("/ctmirror/v1/get_landscape", params={"condition": "NASH", "top_n": 0})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "INVALID_INPUT"
    missing = api.get("/ctmirror/v1/get_trial", params={"nct_id": "NCT99999999"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "NOT_FOUND"
    assert api.get("/ctmirror/v1/no_such_method").status_code == 404
    assert api.post("/ctmirror/v1/get_trial", content=b"[1, 2",
                    headers={"content-type": "application/json"}).json()["error"]["code"] == "INVALID_INPUT"


def test_the_sql_endpoint_is_read_only(api, sample_warehouse):
    before = fingerprint(sample_warehouse)
    ok = api.post("/ctmirror/v1/sql", json={"query": "SELECT count(*) AS n FROM studies", "limit": 5})
    assert ok.status_code == 200 and ok.json()["rows"][0]["n"] > 0
    for attack in ("DROP TABLE studies", "COPY studies TO '/tmp/x.csv'", "ATTACH '/tmp/x.duckdb' AS x",
                   "SELECT * FROM read_csv('/etc/passwd')", "SELECT 1; DROP TABLE studies"):
        refused = api.post("/ctmirror/v1/sql", json={"query": attack})
        assert refused.status_code == 400, attack
    assert api.post("/ctmirror/v1/sql", json={"query": "SELECT 1", "limit": 10 ** 9}).status_code == 400
    assert fingerprint(sample_warehouse) == before


@pytest.mark.slow
def test_the_sql_endpoint_is_off_unless_asked(sample_warehouse):
    with LoopbackServer(Settings(sample_warehouse)) as client:
        assert client.post("/ctmirror/v1/sql", json={"query": "SELECT 1"}).status_code == 404


# ---- adversarial requests ------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, says", [
    ({"query.cond": "(heart OR lung"}, "without its ')'"),
    ({"query.term": 'AREA[BriefTitle]"unclosed'}, "closing"),
    ({"query.term": "SEARCH[Outcome](AREA[OutcomeMeasure]pain)"}, "SEARCH"),
    ({"query.term": "AREA[NoSuchField]x"}, "AREA[NoSuchField]"),
    ({"query.term": "AREA[StartDate]RANGE[2019-13-45, MAX]"}, "not a date"),
    ({"query.term": "AREA[EnrollmentCount]RANGE[99999999999999999999999, MAX]"}, "whole number up to"),
    ({"query.term": "AREA[StartDate]RANGE[MAX, MIN]"}, "low bound first"),
    ({"query.cond": "AND"}, "AND"),
    ({"filter.geo": "distance(a,b,c)"}, "filter.geo"),
    ({"filter.geo": "distance(91,0,5km)"}, "latitude is between -90 and 90"),
    ({"query.term": "FOOD[bar]cancer"}, "FOOD[...] is not supported"),
    ({"query.term": "TILT[Phase]cancer"}, "TILT[Phase] takes a date field"),
    ({"filter.ids": "NCT0A"}, "filter.ids"),
    ({"filter.overallStatus": "DONE"}, "filter.overallStatus"),
    ({"aggFilters": "color:red"}, "aggFilters"),
    ({"pageToken": "forged-token"}, "pageToken"),
    ({"pageSize": "many"}, "pageSize"),
    ({"query.unknown": "x"}, "unknown parameter"),
    ({"fields": "NoSuchPiece"}, "NoSuchPiece"),
])
def test_bad_requests_get_a_400_naming_the_part(api, params, says):
    response = api.get("/api/v2/studies", params=params)
    assert response.status_code == 400 and says in response.text, response.text
    assert response.headers["content-type"].startswith("text/plain")


def test_forged_tokens_path_traversal_huge_queries_and_slow_clients_change_nothing(api, sample_warehouse):
    before = fingerprint(sample_warehouse)
    page = api.get("/api/v2/studies", params={"query.cond": "cancer", "pageSize": 2}).json()
    token = page["nextPageToken"]
    tampered = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    assert api.get("/api/v2/studies", params={"query.cond": "cancer", "pageToken": tampered}).status_code == 400
    assert api.get("/api/v2/studies", params={"query.cond": "asthma", "pageToken": token}).status_code == 400
    for path in ("/api/v2/studies/..%2F..%2Fetc%2Fpasswd", "/api/v2/studies/%2e%2e/state.json",
                 "/api/v2/../../warehouse/current/state.json"):
        assert api.get(path).status_code in (400, 404), path
    with socket.create_connection(("127.0.0.1", api.base_url.port)) as raw:  # httpx refuses to send it at all
        raw.sendall(b"GET /api/v2/studies?query.term=" + b"x" * 1_000_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        status_line = raw.recv(200).split(b"\r\n")[0]
    assert status_line.split()[1] in (b"400", b"413", b"414", b"431"), status_line
    slow = socket.create_connection(("127.0.0.1", api.base_url.port))
    slow.sendall(b"GET /api/v2/version HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never finishes its headers
    try:
        assert api.get("/api/v2/version").status_code == 200  # others are answered meanwhile
    finally:
        slow.close()
    assert fingerprint(sample_warehouse) == before


# ---- cutoffs -----------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_server_pinned_to_a_cutoff_shows_nothing_from_after_it(sample_warehouse, m):
    cutoff = date(2016, 3, 1)
    with LoopbackServer(Settings(sample_warehouse, as_of=cutoff)) as pinned:
        studies = []
        for query in ({"query.cond": "cancer"}, {"query.cond": "diabetes"}, {"query.intr": "insulin"}, {}):
            response = pinned.get("/api/v2/studies", params={**query, "pageSize": 1000})
            assert response.headers["x-ctmirror-as-of"] == cutoff.isoformat()
            studies += response.json()["studies"]
        assert len(studies) > 100
        for study in studies:
            status = study["protocolSection"].get("statusModule", {})
            first = status.get("studyFirstPostDateStruct", {}).get("date")
            assert first is None or first <= cutoff.isoformat()
            for struct in ("startDateStruct", "primaryCompletionDateStruct", "completionDateStruct",
                           "resultsFirstPostDateStruct", "lastUpdatePostDateStruct"):
                value = status.get(struct)
                if value and value.get("type") == "ACTUAL":
                    assert value["date"][:10] <= cutoff.isoformat(), (struct, value)
            if study.get("hasResults"):
                assert status["resultsFirstPostDateStruct"]["date"] <= cutoff.isoformat()
            if status.get("overallStatus") in ("COMPLETED", "TERMINATED", "WITHDRAWN", "SUSPENDED") and \
                    "lastUpdatePostDateStruct" not in status:  # reconstructed: its event came by the cutoff
                event = (status.get("primaryCompletionDateStruct") or status.get("completionDateStruct") or {})
                assert event.get("date", "9999")[:10] <= cutoff.isoformat()
        exactness = set()
        for study in studies[:40]:  # one study: whether the version shown is the cutoff's, and what was withheld
            one = pinned.get(f"/api/v2/studies/{study['protocolSection']['identificationModule']['nctId']}")
            exactness.add(one.headers["x-ctmirror-as-of-exact"])
            assert one.json() == study and "x-ctmirror-withheld" in one.headers
            made_from = one.headers.get("x-ctmirror-reconstructed-from")  # a reconstruction's later version
            assert (made_from is None) == (one.headers["x-ctmirror-as-of-exact"] == "true")
            assert made_from is None or made_from > cutoff.isoformat()
        assert exactness == {"true", "false"}
        trial = pinned.get("/ctmirror/v1/get_trial", params={"nct_id": studies[0]["protocolSection"][
            "identificationModule"]["nctId"]})
        assert trial.status_code == 200 and trial.headers["x-ctmirror-as-of"] == cutoff.isoformat()
        later = pinned.get("/ctmirror/v1/get_landscape", params={"condition": "cancer", "date_before": "2020-01-01"})
        assert later.status_code == 400
    with Mirror(sample_warehouse, as_of=cutoff) as then:
        expected = then.get_landscape("cancer").model_dump(mode="json")
    with LoopbackServer(Settings(sample_warehouse, as_of=cutoff)) as pinned:
        assert pinned.get("/ctmirror/v1/get_landscape", params={"condition": "cancer"}).json() == expected
    with LoopbackServer(Settings(sample_warehouse)) as live:  # a per-request cutoff on the methods
        asked = live.get("/ctmirror/v1/get_landscape", params={"condition": "cancer", "date_before": cutoff})
        assert asked.json() == expected


# ---- the command: a new state between requests, SIGTERM ------------------------------------------------------
@contextmanager
def serve_process(root, *options: str):
    """`ctmirror serve` in a process of its own on a free port, once it answers: (process, client). On leaving, a
    SIGTERM, after which it must have stopped cleanly (uvicorn finishes what is in flight, then ends by the signal
    it caught, so its caller sees why)."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "ctmirror.cli", "-w", str(root), "serve", "--port", str(port),
                                *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for _ in range(600):
                try:
                    client.get("/api/v2/version")
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            yield process, client
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) in (0, -signal.SIGTERM)
        assert "Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()


@pytest.mark.slow
def test_serve_picks_up_a_new_state_and_stops_cleanly_on_sigterm(tmp_path, records):
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:50])])
    with serve_process(wh.root) as (_, client):
        first = client.get("/api/v2/studies", params={"countTotal": "true", "pageSize": 1})
        assert first.json()["totalCount"] == 50 and first.headers["x-ctmirror-state"] == "000001"
        token = first.json()["nextPageToken"]
        load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", records[50:60])])
        after = client.get("/api/v2/studies", params={"countTotal": "true", "pageSize": 1})
        assert after.json()["totalCount"] == 60 and after.headers["x-ctmirror-state"] == "000002"
        resumed = client.get("/api/v2/studies", params={"pageSize": 100, "pageToken": token})
        assert resumed.status_code == 200 and resumed.headers["x-ctmirror-state"] == "000001"  # paging goes on
        assert len(resumed.json()["studies"]) == 49


@pytest.mark.slow
def test_serve_refuses_a_folder_without_a_warehouse(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(tmp_path / "none"), "serve", "--port",
                           str(free_port())], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "no published data" in done.stderr and "Traceback" not in done.stderr


def test_a_query_string_can_hold_every_parameter_form(api):
    query = urlencode({"query.cond": "cancer", "filter.advanced": "AREA[Phase]PHASE2", "pageSize": 3,
                       "fields": "NCTId|Phase"})
    response = api.get(f"/api/v2/studies?{query}")
    assert response.status_code == 200
    assert all("PHASE2" in s["protocolSection"]["designModule"]["phases"] for s in response.json()["studies"])


@pytest.mark.slow
def test_serve_with_several_workers_answers_alike(sample_warehouse, m):
    """--workers 2: two processes, each with its own readers of the same state, give the Mirror's answers."""
    expected = m.get_landscape("NASH", top_n=3).model_dump(mode="json")
    answers = []
    with serve_process(sample_warehouse, "--workers", "2") as (_, client):
        def ask() -> None:
            with httpx.Client(base_url=client.base_url, timeout=30) as own:
                for _ in range(5):
                    answers.append(own.get("/ctmirror/v1/get_landscape", params={"condition": "NASH", "top_n": 3}))

        threads = [threading.Thread(target=ask) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(answers) == 20 and all(a.status_code == 200 and a.json() == expected for a in answers)


@pytest.mark.slow
def test_a_single_study_waits_for_no_reader(sample_warehouse, records):
    """With its one reader busy (a long SQL query), the server still answers a single study: once a process has
    the current state's lookup, the record is read without a reader."""
    nct_ids = [r["protocolSection"]["identificationModule"]["nctId"] for r in records[:2]]
    with LoopbackServer(Settings(sample_warehouse, sql=True, readers=1, sql_timeout=5)) as client:
        assert client.get(f"/api/v2/studies/{nct_ids[0]}").status_code == 200  # the lookup, read once
        slow: list[httpx.Response] = []
        busy = threading.Thread(target=lambda: slow.append(client.post(
            "/ctmirror/v1/sql", json={"query": "SELECT count(*) FROM range(1000000000000)"})))
        busy.start()
        time.sleep(0.5)
        answered = client.get(f"/api/v2/studies/{nct_ids[1]}")
        still_running = busy.is_alive()
        busy.join()
    assert answered.status_code == 200 and answered.json()["protocolSection"]["identificationModule"]["nctId"] == \
        nct_ids[1] and answered.headers["x-ctmirror-as-of"] == "current"
    assert still_running and slow[0].status_code == 400 and "stopped" in slow[0].text


def worker_processes(parent: int) -> list[int]:
    """The processes `parent` started (uvicorn's workers, and multiprocessing's resource tracker)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            children.append(int(stat.parent.name))
    return children


def server_sockets_of(port: int, client_ports: set[int], pids: list[int]) -> Counter:
    """How many of the server's ends of the connections from `client_ports` to `port` each process holds: the
    sockets' inodes in /proc/net/tcp, against each process's open files."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, inode = fields[1], fields[2], fields[9]
        if int(local.split(":")[1], 16) == port and int(remote.split(":")[1], 16) in client_ports:
            inodes.add(f"socket:[{inode}]")
    owners: Counter = Counter()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                owners[pid] += os.readlink(fd) in inodes
            except OSError:
                continue
    return owners


def listeners_of(port: int, pids: list[int]) -> dict[int, frozenset[str]]:
    """pid → the sockets listening on `port` (state 0A in /proc/net/tcp) the process holds, by inode."""
    inodes = {f"socket:[{fields[9]}]" for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
              for fields in [line.split()] if int(fields[1].split(":")[1], 16) == port and fields[3] == "0A"}
    owners = {}
    for pid in pids:
        try:
            owners[pid] = frozenset(link for fd in Path(f"/proc/{pid}/fd").iterdir()
                                    if (link := os.readlink(fd)) in inodes)
        except OSError:
            continue
    return {pid: held for pid, held in owners.items() if held}


def wait_for_listeners(process: subprocess.Popen, port: int, count: int) -> dict[int, frozenset[str]]:
    for _ in range(600):
        listening = listeners_of(port, worker_processes(process.pid))
        if len(listening) == count:
            return listening
        time.sleep(0.05)
    return listening


@pytest.mark.slow
def test_several_workers_listen_each_on_its_own_socket_and_one_that_dies_is_replaced(sample_warehouse):
    """--workers 2: each worker process listens on the port with a socket of its own (SO_REUSEPORT), so the kernel
    hands new connections to both (uvicorn's one shared socket let whichever woke first accept them all: 8/0 or 7/1
    at times); a worker killed is replaced; and a second server is refused the port."""
    with serve_process(sample_warehouse, "--workers", "2") as (process, client):
        port = urlsplit(str(client.base_url)).port
        listening = wait_for_listeners(process, port, 2)
        first, second = listening.values()
        assert len(first) == len(second) == 1 and first != second and not listeners_of(port, [process.pid])
        connections = []
        for _ in range(32):  # all on one worker: a chance of 2 in 2**32
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", "/api/v2/version")
            assert connection.getresponse().read() and connection.sock is not None
            connections.append(connection)
        owners = server_sockets_of(port, {c.sock.getsockname()[1] for c in connections}, list(listening))
        for connection in connections:
            connection.close()
        assert sum(owners.values()) == 32 and len(owners) == 2 and min(owners.values()) > 0

        os.kill(next(iter(listening)), signal.SIGKILL)
        replaced = {}
        for _ in range(600):
            replaced = wait_for_listeners(process, port, 2)
            if set(replaced) != set(listening):
                break
            time.sleep(0.05)
        assert len(replaced) == 2 and len(set(replaced) & set(listening)) == 1
        assert all(client.get("/api/v2/version").status_code == 200 for _ in range(8))

        other = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "serve",
                                "--port", str(port), "--workers", "2"], capture_output=True, text=True, timeout=60)
        assert other.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in other.stderr


@pytest.mark.slow
def test_a_copied_warehouse_serves_the_same_answers_and_accepts_the_originals_page_tokens(sample_warehouse, tmp_path):
    """Replicas behind a load balancer: a copy of the folder answers alike, and a page token issued by one replica
    continues on another."""
    copy = tmp_path / "replica"
    shutil.copytree(sample_warehouse, copy, symlinks=True)
    params = {"query.cond": "cancer", "pageSize": 5, "countTotal": "true"}
    with LoopbackServer(Settings(sample_warehouse)) as original, LoopbackServer(Settings(copy)) as replica:
        first = original.get("/api/v2/studies", params=params).json()
        assert replica.get("/api/v2/studies", params=params).json() == first
        following = {"query.cond": "cancer", "pageSize": 5, "pageToken": first["nextPageToken"]}
        assert replica.get("/api/v2/studies", params=following).json() == \
            original.get("/api/v2/studies", params=following).json()
        method = {"condition": "NASH", "date_before": "2019-06-01"}
        assert replica.get("/ctmirror/v1/get_landscape", params=method).json() == \
            original.get("/ctmirror/v1/get_landscape", params=method).json()


def test_markup_format_legacy_writes_classic_prs_text(api):
    """markupFormat=legacy: the markup fields without markdown's backslash escapes, lines ended CRLF; every other
    field as stored; the search's pages, a single study and a projection alike; CSV unchanged (JSON only)."""
    stored = api.get("/api/v2/studies/NCT00763412").json()
    legacy = api.get("/api/v2/studies/NCT00763412", params={"markupFormat": "legacy"}).json()
    criteria = legacy["protocolSection"]["eligibilityModule"]["eligibilityCriteria"]
    assert "\\<126 mg/dl" in stored["protocolSection"]["eligibilityModule"]["eligibilityCriteria"]
    assert "<126 mg/dl" in criteria and "\\<" not in criteria and "\r\n* " in criteria
    assert "\n" not in criteria.replace("\r\n", "")
    assert legacy["protocolSection"]["identificationModule"] == stored["protocolSection"]["identificationModule"]
    assert legacy["resultsSection"]["outcomeMeasuresModule"]["outcomeMeasures"][0]["title"] == \
        stored["resultsSection"]["outcomeMeasuresModule"]["outcomeMeasures"][0]["title"]
    page = api.get("/api/v2/studies", params={"filter.ids": "NCT00763412", "markupFormat": "legacy"}).json()
    assert page["studies"] == [legacy]
    projected = api.get("/api/v2/studies/NCT00763412", params={"markupFormat": "legacy",
                                                               "fields": "EligibilityCriteria"}).json()
    assert projected["protocolSection"]["eligibilityModule"]["eligibilityCriteria"] == criteria
    csv_of = {fmt: api.get("/api/v2/studies", params={"filter.ids": "NCT00763412", "format": "csv",
                                                      "markupFormat": fmt}).text for fmt in ("legacy", "markdown")}
    assert csv_of["legacy"] == csv_of["markdown"]



def test_a_v2_client_that_asks_for_legacy_markup_runs_unchanged(api):
    """The URLs a widely used Python v2 client builds (every search with markupFormat=legacy, CSV by default,
    fields joined by '|': CSV column titles for CSV, piece names for JSON), as its HTTP library sends them."""
    full = api.get("/api/v2/studies?format=csv&markupFormat=legacy&query.term=asthma%20inhaler&pageSize=50")
    assert full.status_code == 200, full.text
    rows = list(csv.DictReader(io.StringIO(full.text)))
    assert 0 < len(rows) <= 50 and "NCT Number" in rows[0] and "Study Title" in rows[0]
    picked = api.get("/api/v2/studies?format=csv&query.term=asthma&markupFormat=legacy"
                     "&fields=NCT%20Number|Conditions|Study%20Results&pageSize=20")
    assert picked.status_code == 200 and picked.text.splitlines()[0] == "NCT Number,Conditions,Study Results"
    as_json = api.get("/api/v2/studies?format=json&query.term=asthma&markupFormat=legacy"
                      "&fields=NCTId|BriefTitle|EligibilityCriteria&pageSize=20")
    assert as_json.status_code == 200, as_json.text
    studies = as_json.json()["studies"]
    assert len(studies) == 20 and all(set(s["protocolSection"]) <= {"identificationModule", "eligibilityModule"}
                                      for s in studies)
    criteria = [s["protocolSection"]["eligibilityModule"]["eligibilityCriteria"] for s in studies
                if "eligibilityModule" in s["protocolSection"]]
    assert criteria and all("\r\n" in c and "\\>" not in c and "\\<" not in c for c in criteria)
    version = api.get("/api/v2/version").json()
    assert version["apiVersion"] and version["dataTimestamp"]


def test_a_cursor_of_one_surface_is_no_page_token_of_another(api, m):
    """The search method's cursors and the v2 API's page tokens are one signed form (ctmirror/read/cursors.py), of
    a kind each: each surface continues its own and refuses the other's."""
    params = {"query.cond": "cancer", "pageSize": 5}
    token = api.get("/api/v2/studies", params=params).json()["nextPageToken"]
    cursor = m.search(condition="cancer", page_size=5).pagination.cursor
    assert api.get("/api/v2/studies", params={**params, "pageToken": token}).status_code == 200
    refused = api.get("/api/v2/studies", params={**params, "pageToken": cursor})
    assert refused.status_code == 400 and "pageToken is not one this server returned" in refused.text
    assert len(m.search(condition="cancer", page_size=5, cursor=cursor).items) == 5
    with pytest.raises(InvalidArgument, match="cursor belongs to a search with other parameters"):
        m.search(condition="cancer", page_size=5, cursor=token)
