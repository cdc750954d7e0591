"""The ClinicalTrials.gov v2 API's GET /api/v2/studies, answered from a Mirror: its query parameters, the Essie
expressions they hold (ctmirror/server/essie.py) matched as the methods match, filters, sorting, paging with
page tokens, `fields` projections and CSV. Every query runs from sql/serve/ with its values bound.

Each Essie term becomes a set of versions (with scores, for relevance) from one leaf query; AND, OR and NOT combine
the sets; the page query then keeps the trial_card rows shown at the server's cutoff (NULL: the current state) and
applies the filters, sort and page. What is not supported is a V2Error (400) naming it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import threading
from array import array
from bisect import bisect_left
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from ctmirror.answers import PARAMETER, execute_prepared, forget_plans
from ctmirror.core.record_files import RECORDS, record_files_of
from ctmirror.core.sqlfiles import read_sql, sql_literal
from ctmirror.core.words import search_norm
from ctmirror.server import essie
from ctmirror.server.csv_columns import Column, columns_for
from ctmirror.server.csv_columns import csv_text as write_csv
from ctmirror.server.records import UnknownField, field_paths, leaf_pieces, project, record_as_of

if TYPE_CHECKING:
    from ctmirror.mirror import Mirror

DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 10, 1_000
MAX_PAGE_OFFSET = 10_000_000


class V2Error(Exception):
    """A request the v2 API would refuse: `status` and a plain-text message, as the API answers."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Context:
    """Where an Essie term is looked for. kind: 'text' (the search index: field, areas), 'value' (a structured
    field of trial_card), or one of the leaf queries of sql/serve/."""
    kind: str
    field: str = ""
    areas: tuple[str, ...] | None = None
    expansion: str = "relaxation"  # Essie's EXPANSION level in force (EXPANSION_LEVELS)


# EXPANSION[level] → (concept expansion, scattered words): None and Term match the words as written (plural and
# case folded, as every match is); Concept adds synonyms and the links the records teach; Relaxation (the
# default) and Lossy let unquoted words scatter over the areas.
EXPANSION_LEVELS = {"none": (False, False), "term": (False, False), "concept": (True, False),
                    "relaxation": (True, True), "lossy": (True, True)}
# Leaf queries whose unquoted words are each looked for (a phrase in quotes stays one).
WORD_BY_WORD = ("eligibility", "outcome", "sponsor", "lead_sponsor", "description")


QUERY_PARAMETERS = {
    "query.cond": Context("text", "condition", None),
    "query.intr": Context("text", "intervention", None),
    "query.term": Context("text", "term"),
    "query.titles": Context("text", "term", ("Acronym", "BriefTitle", "OfficialTitle")),
    "query.locn": Context("location"),
    "query.spons": Context("sponsor"),
    "query.lead": Context("lead_sponsor"),
    "query.outc": Context("outcome"),
    "query.id": Context("id"),
    # PatientSearch: the words a patient would use, over the basic search's areas
    "query.patient": Context("text", "term"),
}
ADVANCED = Context("text", "term")
# The organisation's study ID and the secondary IDs (study_identifier): IdSearch's, found whole; BasicSearch's too,
# weighing this (ours: the API does not publish it).
IDENTIFIER_AREAS = ("OrgStudyId", "SecondaryId")
IDENTIFIER_WEIGHT = 0.3
# AREA[...] names → where they are looked for. The search index's areas are matched as the methods match.
INDEX_AREAS = {
    "condition": ("Condition", "ConditionMeshTerm", "ConditionAncestorTerm", "Keyword"),
    "intervention": ("InterventionName", "InterventionOtherName", "InterventionMeshTerm", "InterventionAncestorTerm",
                     "ArmGroupLabel", "ArmGroupDescription"),
    "term": ("BriefTitle", "OfficialTitle", "Acronym", "NCTId", "BriefSummary"),
}
STRUCTURED_AREAS = ("OverallStatus", "Phase", "StudyType", "Sex", "StdAge", "LeadSponsorClass", "HasResults",
                    "MinimumAge", "MaximumAge", "EnrollmentCount", "StartDate", "PrimaryCompletionDate",
                    "CompletionDate", "StudyFirstPostDate", "LastUpdatePostDate", "ResultsFirstPostDate")
# The record's submission, QC and verification dates (sql/schema/helpers.sql, submission_day): AREA[...] ranges
# and sorts.
SUBMISSION_DATES = ("StatusVerifiedDate", "StudyFirstSubmitDate", "StudyFirstSubmitQCDate", "ResultsFirstSubmitDate",
                    "ResultsFirstSubmitQCDate", "DispFirstSubmitDate", "DispFirstSubmitQCDate", "DispFirstPostDate",
                    "LastUpdateSubmitDate", "EstimatedResultsFirstSubmitDate", "FirstMCPPostDate")
STRUCTURED_AREAS += SUBMISSION_DATES
DATE_AREAS = ("StartDate", "PrimaryCompletionDate", "CompletionDate", "StudyFirstPostDate", "LastUpdatePostDate",
              "ResultsFirstPostDate", *SUBMISSION_DATES)
OTHER_AREAS = {"EligibilityCriteria": Context("eligibility"), "LeadSponsorName": Context("lead_sponsor"),
               "LocationCountry": Context("location"), "LocationCity": Context("location"),
               "LocationState": Context("location"), "LocationFacility": Context("location"),
               "OutcomeMeasure": Context("outcome"), "PrimaryOutcomeMeasure": Context("outcome"),
               "SecondaryOutcomeMeasure": Context("outcome"), "NCTIdAlias": Context("id"),
               "CollaboratorName": Context("sponsor"), "HealthyVolunteers": Context("healthy"),
               "DetailedDescription": Context("description"),
               **{area: Context("identifier", "", (area,)) for area in IDENTIFIER_AREAS},
               **{area: Context("design", area) for area in ("DesignAllocation", "DesignPrimaryPurpose",
                                                             "DesignInterventionModel", "DesignMasking",
                                                             "InterventionType")}}
AREAS: dict[str, Context] = {
    **{area.lower(): Context("text", field, (area,))
       for field, areas in INDEX_AREAS.items() for area in areas},
    **{area.lower(): Context("value", area) for area in STRUCTURED_AREAS},
    **{area.lower(): context for area, context in OTHER_AREAS.items()},
}
SORTABLE = {name.lower(): name for name in ("EnrollmentCount", "StartDate", "PrimaryCompletionDate", "CompletionDate",
                                            "StudyFirstPostDate", "LastUpdatePostDate", "ResultsFirstPostDate",
                                            *SUBMISSION_DATES)}
AGG_FILTERS = {
    "phase": ("phases", {"0": "EARLY_PHASE1", "1": "PHASE1", "2": "PHASE2", "3": "PHASE3", "4": "PHASE4", "na": "NA"}),
    # a study for all sexes admits women and men alike, as the API's sex filter counts it
    "sex": ("sexes", {"f": ("FEMALE", "ALL"), "m": ("MALE", "ALL"), "a": ("ALL",)}),
    "status": ("statuses", {"rec": "RECRUITING", "not": "NOT_YET_RECRUITING", "act": "ACTIVE_NOT_RECRUITING",
                            "enr": "ENROLLING_BY_INVITATION", "com": "COMPLETED", "ter": "TERMINATED",
                            "wit": "WITHDRAWN", "sus": "SUSPENDED", "unk": "UNKNOWN", "ava": "AVAILABLE",
                            "nla": "NO_LONGER_AVAILABLE", "tav": "TEMPORARILY_NOT_AVAILABLE",
                            "afm": "APPROVED_FOR_MARKETING", "wdn": "WITHHELD"}),
    "studyType": ("study_types", {"int": "INTERVENTIONAL", "obs": "OBSERVATIONAL", "exp": "EXPANDED_ACCESS"}),
    "results": ("results", {"with": True, "without": False}),
}
STATUSES = {status for _, status in AGG_FILTERS["status"][1].items()}
GEO = re.compile(r"^distance\((-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?),(\d+(?:\.\d+)?)(km|mi)?\)$")
NCT_ID = re.compile(r"^[Nn][Cc][Tt]0*([0-9]{1,8})\Z")
# geoDecay shapes relevance by distance from filter.geo; ctmirror checks it and ranks as without it.
GEO_DECAY = re.compile(r"^func:(gauss|exp|linear),scale:(\d+(\.\d+)?(km|mi)),offset:(\d+(\.\d+)?(km|mi)),"
                       r"decay:(\d+(\.\d+)?)$")
KNOWN_PARAMETERS = {*QUERY_PARAMETERS, "filter.overallStatus", "filter.ids", "filter.advanced", "filter.geo",
                    "geoDecay", "aggFilters", "fields", "sort", "pageSize", "pageToken", "countTotal", "format",
                    "markupFormat",
                    "postFilter.overallStatus", "postFilter.ids", "postFilter.advanced", "postFilter.geo"}
# Parameters that are lists: given more than once (as `requests` sends a Python list), the values are one list.
LIST_PARAMETERS = {"filter.overallStatus", "filter.ids", "postFilter.overallStatus", "postFilter.ids", "fields",
                   "aggFilters", "sort"}


def parameters(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """A request's query parameters, one value each: a list parameter given several times joined as the one
    list it means; any other given twice is refused (never one of its values silently)."""
    joined: dict[str, list[str]] = {}
    for key, value in pairs:
        joined.setdefault(key, []).append(value)
    for key, values in joined.items():
        if len(values) > 1 and key not in LIST_PARAMETERS:
            raise V2Error(f"{key} is given {len(values)} times: give it once (only "
                          f"{', '.join(sorted(LIST_PARAMETERS))} take several values, comma-separated or repeated)")
    return {key: ",".join(values) for key, values in joined.items()}


def listed(value: str | None) -> list[str] | None:
    """A comma- or pipe-separated parameter as a list (None: not given)."""
    if value is None:
        return None
    return [part.strip() for part in re.split(r"[,|]", value) if part.strip()]


@dataclass
class Search:
    """One /api/v2/studies request, parsed and checked."""
    queries: list[tuple[Context, object]]
    filters: dict[str, Any]
    sort: list[tuple[str, int]]
    page_size: int
    offset: int
    count_total: bool
    fields: list[tuple[str, ...]] | None
    csv_columns: list[Column] | None
    fingerprint: str


def parse_request(params: dict[str, str], mirror: Mirror) -> Search:
    if params.get("filter.synonyms", "").strip():
        raise V2Error("filter.synonyms names the registry's own synonym ids (area:synonym_id), which ctmirror does "
                      "not have: leave it out, and name the condition or drug in query.cond or query.intr, which "
                      "expand to their synonyms")
    params = {k: v for k, v in params.items() if k != "filter.synonyms"}
    unknown = sorted(set(params) - KNOWN_PARAMETERS)
    if unknown:
        raise V2Error(f"unknown parameter {unknown[0]!r}: ctmirror supports {', '.join(sorted(KNOWN_PARAMETERS))}")
    for name in ("postFilter.overallStatus", "postFilter.ids", "postFilter.advanced", "postFilter.geo"):
        if name in params:  # the same as filter.* here: there are no aggregation counts to keep apart
            params = {**params, name.replace("postFilter", "filter"): params[name]}
    queries = []
    for name, context in [*QUERY_PARAMETERS.items(), ("filter.advanced", ADVANCED)]:
        text = params.get(name)
        if text is not None and text.strip():
            try:
                queries.append((context, essie.parse(text)))
            except essie.EssieError as exc:
                raise V2Error(f"{name}: {exc} (at {exc.part!r})") from None
    filters = _filters(params)
    sort = _sort(params.get("sort"), has_query=bool(queries))
    fmt = params.get("format", "json")
    if fmt not in ("json", "csv"):
        raise V2Error(f"format must be json or csv, not {fmt!r}")
    check_markup_format(params)
    if "geoDecay" in params and not GEO_DECAY.match(params["geoDecay"]):
        raise V2Error("geoDecay must look like func:exp,scale:300mi,offset:0mi,decay:0.5")
    fields = listed(params.get("fields"))
    paths = csv_columns = None
    try:
        if fmt == "csv":
            csv_columns = columns_for(fields)
        elif fields:
            paths = field_paths(fields)
    except UnknownField as exc:
        raise V2Error(f"fields: {str(exc)!r} is not a field of the study record "
                      "(see /api/v2/studies/metadata)") from None
    try:
        size = int(params.get("pageSize", DEFAULT_PAGE_SIZE) or DEFAULT_PAGE_SIZE)
    except ValueError:
        raise V2Error(f"pageSize must be an integer, not {params['pageSize']!r}") from None
    if size < 0:
        raise V2Error("pageSize must not be negative")
    count_total = params.get("countTotal", "false").lower()
    if count_total not in ("true", "false"):
        raise V2Error("countTotal must be true or false")
    identity = {k: v for k, v in sorted(params.items()) if k not in ("pageToken", "pageSize", "countTotal", "format",
                                                                       "fields", "markupFormat")}
    fingerprint = hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]
    offset = 0
    if params.get("pageToken"):
        offset = read_page_token(mirror, params["pageToken"], fingerprint)
    return Search(queries, filters, sort, min(size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE), offset,
                  count_total == "true", paths, csv_columns, fingerprint)


def _filters(params: dict[str, str]) -> dict[str, Any]:
    filters: dict[str, Any] = {"statuses": None, "phases": None, "sexes": None, "study_types": None, "results": None,
                               "ids": None, "geo_lat": None, "geo_lon": None, "geo_km": None}
    statuses = listed(params.get("filter.overallStatus"))
    if statuses is not None:
        bad = [s for s in statuses if s.upper() not in STATUSES]
        if bad:
            raise V2Error(f"filter.overallStatus: {bad[0]!r} is not a status ({', '.join(sorted(STATUSES))})")
        filters["statuses"] = [s.upper() for s in statuses]
    ids = listed(params.get("filter.ids"))
    if ids is not None:
        bad = [i for i in ids if not NCT_ID.match(i)]
        if bad:
            raise V2Error(f"filter.ids: {bad[0]!r} is not an NCT ID")
        filters["ids"] = [f"NCT{int(NCT_ID.match(i).group(1)):08d}" for i in ids]
    geo = params.get("filter.geo")
    if geo is not None:
        found = GEO.match(geo.replace(" ", ""))
        if not found:
            raise V2Error("filter.geo must be distance(latitude,longitude,distance) with km or mi, "
                          f"for example distance(39.0035707,-77.1013313,50mi); not {geo!r}")
        lat, lon, distance, unit = float(found[1]), float(found[2]), float(found[3]), found[4] or "km"
        filters.update(geo_lat=lat, geo_lon=lon, geo_km=distance * (1.609344 if unit == "mi" else 1.0))
    for pair in listed(params.get("aggFilters")) or []:
        name, _, options = pair.partition(":")
        if name not in AGG_FILTERS:
            raise V2Error(f"aggFilters: {name!r} is not supported by ctmirror (supported: {', '.join(AGG_FILTERS)})")
        column, keys = AGG_FILTERS[name]
        chosen = []
        for option in options.split():
            if option.lower() not in keys:
                raise V2Error(f"aggFilters: {name}:{option} is not an option (one of {', '.join(keys)})")
            value = keys[option.lower()]
            chosen.extend(value if isinstance(value, tuple) else [value])
        if not chosen:
            raise V2Error(f"aggFilters: {name} needs at least one option")
        if column == "results":
            filters["results"] = chosen[0] if len(set(chosen)) == 1 else None
        else:
            current = filters[column]
            filters[column] = chosen if current is None else [c for c in current if c in chosen]
    return filters


def area_context(name: str) -> Context | None:
    """What AREA[name] searches: name is an area or field by piece name, alternative name or field path (any
    case); None where ctmirror does not search it."""
    return AREAS.get(name.lower()) or AREAS.get(leaf_pieces().get(name.lower(), "").lower())


def _sort(value: str | None, *, has_query: bool) -> list[tuple[str, int]]:
    items = listed(value) or []
    if len(items) > 2:
        raise V2Error("sort takes at most two fields")
    sort = []
    for item in items:
        name, _, direction = item.partition(":")
        name = name.strip()
        if name == "@relevance":
            field = "relevance"
        elif leaf_pieces().get(name.lower(), "").lower() in SORTABLE:
            field = SORTABLE[leaf_pieces()[name.lower()].lower()]
        else:
            raise V2Error(f"sort: {name!r} is not sortable here (@relevance, {', '.join(SORTABLE.values())}, or "
                          "their field paths)")
        # the spec's defaults: a date descending, a number ascending, relevance descending
        direction = direction or ("asc" if field == "EnrollmentCount" else "desc")
        if direction not in ("asc", "desc"):
            raise V2Error(f"sort: {item!r}: the direction is asc or desc")
        sort.append((field, 1 if direction == "asc" else -1))
    if not sort and has_query:
        sort = [("relevance", -1)]
    return sort


# ---- matching ------------------------------------------------------------------------------------------------
# A leaf's parameters that are our own names: a search field, its areas, a value's test, how far its words
# expand (see _page): literals, so a plan knows them (a branch of scattered words never taken is planned away).
OWN_KEYS = ("field", "areas", "test", "expand", "relax")




class Matcher:
    """Evaluates Essie trees on one Mirror at one cutoff, inside DuckDB, as one statement: each term's matches are a
    named subquery of the request's query (from one of the leaf queries, its values bound under names of the term's
    own), and AND, OR and NOT combine them (combine_*.sql), so a broad term's hundred thousand versions never leave
    DuckDB. Nothing is made on the connection: a temporary table a term would change its catalog, after which
    DuckDB plans every statement prepared on it again (and a request made four). Subquery names are ours."""

    def __init__(self, mirror: Mirror, as_of: date | None) -> None:
        self.mirror, self.as_of = mirror, as_of
        self.terms: list[tuple[str, str]] = []
        self.params: dict[str, Any] = {}
        self.own: list[str] = []  # the params that are our own names (OWN_KEYS), written in as literals
        self._universe: str | None = None

    def _term(self, query: str, **params: Any) -> str:
        name = f"essie_term_{len(self.terms) + 1}"
        self.terms.append((name, PARAMETER.sub(lambda m: f"${name}_{m[1]}" if m[1] in params else m[0], query)))
        self.params.update({f"{name}_{key}": value for key, value in params.items()})
        self.own.extend(f"{name}_{key}" for key in params if key in OWN_KEYS)
        return name

    def leaf_table(self, leaf: str, **params: Any) -> str:
        return self._term(read_sql(f"serve/{leaf}.sql"), **params)

    def combine(self, how: str, left: str, right: str) -> str:
        return self._term(read_sql(f"serve/combine_{how}.sql").replace("{left}", left).replace("{right}", right))

    def found(self, last: str) -> str:
        """The versions and scores of term `last`, as a subquery holding every term it reads."""
        terms = ",\n".join(f"{name} AS (\n{query.strip()}\n)" for name, query in self.terms)
        return f"(WITH {terms}\nSELECT version_no, score FROM {last})"

    def universe(self) -> str:
        if self._universe is None:
            self._universe = self.leaf_table("shown_versions", as_of=self.as_of)
        return self._universe

    def evaluate(self, node: object, context: Context) -> str:
        if isinstance(node, essie.And):
            positives = [self.evaluate(p, context) for p in node.parts if not isinstance(p, essie.Not)]
            negatives = [self.evaluate(p.expression, context) for p in node.parts if isinstance(p, essie.Not)]
            result = positives[0] if positives else self.universe()
            for table in positives[1:]:
                result = self.combine("and", result, table)
            for table in negatives:
                result = self.combine("not", result, table)
            return result
        if isinstance(node, essie.Or):
            result = self.evaluate(node.parts[0], context)
            for part in node.parts[1:]:
                result = self.combine("or", result, self.evaluate(part, context))
            return result
        if isinstance(node, essie.Not):
            return self.combine("not", self.universe(), self.evaluate(node.expression, context))
        if isinstance(node, essie.Boost):
            inner = self.evaluate(node.expression, context)
            return self._term(read_sql("serve/boost.sql").replace("{inner}", inner), factor=node.factor)
        if isinstance(node, essie.Expansion):
            return self.evaluate(node.expression, replace(context, expansion=node.level))
        if isinstance(node, essie.Area):
            inner = area_context(node.field)
            if inner is None:
                raise V2Error(f"AREA[{node.field}] is not supported by ctmirror: see /api/v2/studies/search-areas "
                              "and docs/serve.md for the areas it searches")
            return self.evaluate(node.expression, replace(inner, expansion=context.expansion))
        return self.leaf(node, context)

    def leaf(self, node: object, context: Context) -> str:
        if context.kind == "value":
            return self._value(node, context.field)
        if isinstance(node, (essie.Range, essie.Missing)):
            raise V2Error(f"{'RANGE' if isinstance(node, essie.Range) else 'MISSING'} applies to a structured "
                          f"field (AREA[{'|'.join(STRUCTURED_AREAS[:4])}|...]), not to a text search")
        if isinstance(node, essie.Prefix):
            if context.kind != "text":
                raise V2Error(f"a wildcard ({node.text}*) applies to the text areas (/api/v2/studies/search-areas), "
                              "not to this one")
            return self.leaf_table("prefix_leaf", field=context.field, prefix=search_norm(node.text).strip(),
                                   areas=list(context.areas) if context.areas else None)
        text = node.text
        if context.kind == "text":
            expand, relax = EXPANSION_LEVELS[context.expansion]
            normed = search_norm(text)
            found = self.leaf_table("text_leaf", field=context.field, phrase=('"' if node.quoted else "") + normed,
                                    as_of=self.as_of, areas=list(context.areas) if context.areas else None,
                                    expand=expand, relax=relax and not node.quoted and len(normed.split()) > 1)
            if context.field == "term" and context.areas is None:  # BasicSearch holds the study IDs too
                found = self.combine("or", found, self.identifier(text, None, IDENTIFIER_WEIGHT))
            return found
        if context.kind in WORD_BY_WORD and not node.quoted and len(search_norm(text).split()) > 1:
            # unquoted words each found, in any order: Essie's word semantics
            return self.evaluate(essie.And(tuple(essie.Words(w) for w in search_norm(text).split())), context)
        if context.kind == "design":
            return self.leaf_table("design_leaf", field=context.field, value=text.strip().upper().replace(" ", "_"))
        if context.kind == "healthy":
            if text.strip().upper() not in ("TRUE", "FALSE"):
                raise V2Error(f"AREA[HealthyVolunteers] takes true or false, not {text!r}")
            return self.leaf_table("healthy_leaf", accepted=text.strip().upper() == "TRUE")
        if context.kind == "id":
            parts = [part for part in re.split(r"[\s,|]+", text) if part]
            ids = [f"NCT{int(m.group(1)):08d}" for m in map(NCT_ID.match, parts) if m]
            found = self.leaf_table("id_leaf", ids=ids)
            others = [part for part in parts if not NCT_ID.match(part)]
            if others:  # IdSearch's other areas: the acronym ("KEYNOTE-189"), the organisation's and secondary IDs
                named = self.leaf_table("text_leaf", field="term", phrase='"' + search_norm(" ".join(others)),
                                        as_of=self.as_of, areas=["Acronym"], expand=False, relax=False)
                found = self.combine("or", found, named)
                for part in others:
                    found = self.combine("or", found, self.identifier(part, None, 1.0))
            return found
        if context.kind == "identifier":
            return self.identifier(text, list(context.areas or IDENTIFIER_AREAS), 1.0)
        leaf = {"location": "location_leaf", "sponsor": "sponsor_leaf", "lead_sponsor": "lead_sponsor_leaf",
                "outcome": "outcome_leaf", "eligibility": "eligibility_leaf",
                "description": "description_leaf"}[context.kind]
        return self.leaf_table(leaf, phrase=text)

    def identifier(self, text: str, areas: list[str] | None, score: float) -> str:
        """The versions whose organisation's study ID or a secondary ID (within areas; None: both) is `text`."""
        return self.leaf_table("identifier_leaf", norm=search_norm(text), areas=areas, score=score)

    def _value(self, node: object, field: str) -> str:
        params: dict[str, Any] = {"field": field, "as_of": self.as_of, "value": None, "low_number": None,
                                  "high_number": None, "low_day": None, "high_day": None}
        if isinstance(node, essie.Missing):
            params["test"] = "missing"
        elif isinstance(node, essie.Range) or (isinstance(node, essie.Words) and field in DATE_AREAS):
            params["test"] = "range"  # a date given alone is the range of the day, month or year it names
            low, high = (node.low, node.high) if isinstance(node, essie.Range) else (node.text, node.text)
            for side, bound in (("low", low), ("high", high)):
                if bound is not None:
                    kind, value = _bound(field, bound, high=side == "high")
                    params[f"{side}_{kind}"] = value
        elif isinstance(node, essie.Words):
            params["test"] = "equals"
            params["value"] = node.text.strip().upper().replace(" ", "_")
        else:
            raise V2Error(f"AREA[{field}] takes a value, RANGE[...] or MISSING, not an expression")
        return self.leaf_table("value_leaf", **params)


AGE_UNITS = {"year": 365.25, "years": 365.25, "month": 30.4375, "months": 30.4375, "week": 7, "weeks": 7, "day": 1,
             "days": 1, "hour": 1 / 24, "hours": 1 / 24, "minute": 1 / 1440, "minutes": 1 / 1440}


MAX_RANGE_NUMBER = 10**9  # beyond any enrollment or age in days; larger bounds are refused, not overflowed


def _bound(field: str, text: str, *, high: bool = False) -> tuple[str, Any]:
    """A RANGE bound as the SQL compares it. A partial date stands for its whole year or month: its first day as
    the low bound, its last as the high one (RANGE[2020, 2021] is 2020-01-01 to 2021-12-31)."""
    text = text.strip()
    if field in ("MinimumAge", "MaximumAge"):
        found = re.fullmatch(r"(\d{1,9}(?:\.\d+)?)\s*([A-Za-z]+)?", text)
        if not found or (found[2] and found[2].lower() not in AGE_UNITS):
            raise V2Error(f"RANGE of AREA[{field}]: {text!r} is not an age such as 50 years or 6 months")
        days = int(float(found[1]) * AGE_UNITS[(found[2] or "years").lower()])
        if days > MAX_RANGE_NUMBER:
            raise V2Error(f"RANGE of AREA[{field}]: {text!r} is beyond any age")
        return "number", days
    if field == "EnrollmentCount":
        if not re.fullmatch(r"\d{1,10}", text) or int(text) > MAX_RANGE_NUMBER:
            raise V2Error(f"RANGE of AREA[{field}]: {text!r} is not a whole number up to {MAX_RANGE_NUMBER:,}")
        return "number", int(text)
    if field in ("OverallStatus", "Phase", "StudyType", "Sex", "StdAge", "LeadSponsorClass", "HasResults"):
        raise V2Error(f"RANGE does not apply to AREA[{field}], which takes values")
    try:
        if re.fullmatch(r"\d{4}", text):
            return "day", date(int(text), 12, 31) if high else date(int(text), 1, 1)
        if re.fullmatch(r"\d{4}-\d{2}", text):
            first = date.fromisoformat(f"{text}-01")
            return "day", (first.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1) if high \
                else first
        return "day", date.fromisoformat(text)
    except ValueError:
        raise V2Error(f"RANGE of AREA[{field}]: {text!r} is not a date (YYYY-MM-DD, YYYY-MM or YYYY)") from None


# ---- answering -----------------------------------------------------------------------------------------------
def studies(mirror: Mirror, params: dict[str, str], as_of: date | None, *,
            as_stored: bool = False) -> tuple[dict[str, Any], Search]:
    """The page of GET /api/v2/studies: {"studies": [...], "nextPageToken"?, "totalCount"?}. as_stored: where
    the records are served whole as stored (no `fields`, no cutoff), each is its stored JSON text (bytes), for
    page_json: parsing and writing them again was most of a page's Python."""
    search = parse_request(params, mirror)
    matcher = Matcher(mirror, as_of)
    return _page(mirror, search, matcher, _found(matcher, search), has_query=bool(search.queries), as_of=as_of,
                 as_stored=as_stored and search.fields is None and as_of is None), search


def _found(matcher: Matcher, search: Search) -> str:
    """The term of the studies every query of the search finds (none: every study shown, through the same query)."""
    found = None
    for context, tree in search.queries:
        matched = matcher.evaluate(tree, context)
        found = matched if found is None else matcher.combine("and", found, matched)
    return matcher.leaf_table("no_terms") if found is None else found


def matching_nct_ids(mirror: Mirror, params: dict[str, str], as_of: date | None, limit: int) -> tuple[list[str], int]:
    """The NCT IDs of the first `limit` studies a v2 query finds (by its order), and how many it finds: no record
    is read (the MCP search tool's Essie expression becomes its list of trials)."""
    search = replace(parse_request(params, mirror), page_size=limit, count_total=True)
    matcher = Matcher(mirror, as_of)
    rows = _page_rows(mirror, search, matcher, _found(matcher, search), has_query=bool(search.queries), as_of=as_of)
    nct_at = 1 + PAGE_COLUMNS.index("nct_id")
    return [row[nct_at] for row in rows[:limit]], rows[0][0] if rows else 0


# Where a v2 search's values go in serve_args (sql/serve/args_table.sql), by type; a list is of texts but `near`'s.
ARGUMENT_LISTS = {str: "texts", list: "text_lists", int: "integers", float: "numbers", date: "dates", bool: "flags"}


def make_search_arguments(mirror: Mirror) -> bool:
    """Makes the connection's serve_args table unless it is there (the server's pool does when it opens a
    Mirror, before anything is prepared on it); whether it made it."""
    create = read_sql("serve/args_table.sql")
    if create in mirror.argument_tables:
        return False
    mirror.con.execute(create)
    mirror.argument_tables.add(create)
    return True


def _literal(value: Any) -> str:
    """One of our own names or numbers as SQL (see _page): never a value the request gave."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return sql_literal(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "[" + ", ".join(sql_literal(item) for item in value) + "]::VARCHAR[]"
    raise TypeError(f"not one of ours: {value!r}")


PAGE_COLUMNS = ("version_no", "nct_id", "content_hash", "overall_status", "why_stopped", "results_posted",
                "results_first_post_date", "enrollment_type", "last_update_post_date", "as_of_exact", "record_file",
                "record_row")


def _page_rows(mirror: Mirror, search: Search, matcher: Matcher, found: str, *, has_query: bool,
               as_of: date | None) -> list[tuple[Any, ...]]:
    """The rows of a page: the total count, then PAGE_COLUMNS; one more row than the page, when there is more."""
    sort = search.sort + [(None, 1)] * (2 - len(search.sort))
    query_params = {"as_of": as_of, "has_query": has_query, **search.filters, **matcher.params,
                    "dir1": sort[0][1], "dir2": sort[1][1], "limit": search.page_size + 1, "offset": search.offset}
    if query_params["ids"] is not None:
        query_params["ids"] = mirror.con.execute(read_sql("serve/ids_with_aliases.sql"),
                                                 {"ids": query_params["ids"]}).fetchone()[0] or []
    geo = {name: query_params.pop(name) for name in ("geo_lat", "geo_lon", "geo_km")}
    query_params["near"] = None if geo["geo_lat"] is None else \
        mirror.con.execute(read_sql("calls/near_versions.sql"), geo).fetchone()[0]
    statement, lists = _shaped(read_sql("serve/page.sql").replace(
        "{matches}", read_sql("serve/matches.sql").replace("{found}", matcher.found(found))), query_params, sort,
        own=matcher.own)
    if make_search_arguments(mirror):
        forget_plans(mirror)  # made after statements were prepared: they would be planned at every execution
    mirror.con.execute(read_sql("serve/set_args.sql"), lists)
    name = "v2_search_" + hashlib.sha256(statement.encode()).hexdigest()[:20]
    return execute_prepared(mirror, name, lambda: statement).fetchall()


def _page(mirror: Mirror, search: Search, matcher: Matcher, found: str, *, has_query: bool,
          as_of: date | None, as_stored: bool) -> dict[str, Any]:
    rows = _page_rows(mirror, search, matcher, found, has_query=has_query, as_of=as_of)
    shown = [dict(zip(PAGE_COLUMNS, row[1:])) for row in rows]
    more = len(shown) > search.page_size
    shown = shown[:search.page_size]
    if as_stored:
        texts = stored_texts(mirror, shown)
        page: dict[str, Any] = {"studies": [t if isinstance(t, bytes) else t.encode("utf-8") for t in texts]}
    else:
        page = {"studies": [shape(r, search.fields) for r in stored_records(mirror, shown, as_of)]}
    if search.count_total and search.offset == 0:
        page["totalCount"] = rows[0][0] if rows else 0
    if more:
        page["nextPageToken"] = write_page_token(mirror, search.offset + len(shown), search.fingerprint)
    return page


def _shaped(statement: str, query_params: dict[str, Any], sort: list[tuple[str | None, int]], *,
            own: list[str]) -> tuple[str, dict[str, list[Any]]]:
    """A search's statement with each `$name` written in, and the values for serve_args (set_args.sql).

    Written in: an absent filter or cutoff as the NULL literal, our own names (sort fields; `own`: search fields,
    areas, a value's test) and numbers we made or validated (page bounds, directions): DuckDB folds a literal away
    with the test or choice it guards, where it evaluates a parameter's on every row (reading a column of every
    trial_card row for each filter and sort field). Every value of the request's is read from its place in
    serve_args, so the text depends on the request's shape alone and is prepared once per connection."""
    written = {name: "NULL" for name, value in query_params.items() if value is None}
    for name, (field, _) in zip(("sort1", "sort2"), sort):
        if field is not None and field != "relevance" and field not in SORTABLE.values():
            raise V2Error(f"sort: {field!r} is not sortable here")
        written[name] = "NULL" if field is None else sql_literal(field)
    for name in ("has_query", "dir1", "dir2", "limit", "offset", *own):
        if query_params[name] is not None:
            written[name] = _literal(query_params[name])
    values = {name: value for name, value in query_params.items() if name not in written}
    argument = "\n".join(line for line in read_sql("serve/argument.sql").splitlines() if not line.startswith("--"))
    lists: dict[str, list[Any]] = {column: [] for column in (*ARGUMENT_LISTS.values(), "integer_lists")}
    for name in sorted(values):  # the same places for the same shape
        column = "integer_lists" if name == "near" else ARGUMENT_LISTS[type(values[name])]
        lists[column].append(values[name])
        written[name] = argument.replace("{list}", column).replace("{position}", str(len(lists[column])))
    return PARAMETER.sub(lambda found: written.get(found[1], found[0]), statement), lists


def page_json(page: dict[str, Any]) -> bytes:
    """A page as the API writes it; records given as stored JSON text (studies(as_stored=True)) are copied in."""
    if not page["studies"] or not isinstance(page["studies"][0], bytes):
        return json.dumps(page, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    rest = json.dumps({k: v for k, v in page.items() if k != "studies"}, separators=(",", ":")).encode("utf-8")
    return b'{"studies":[' + b",".join(page["studies"]) + b"]" + (b"," + rest[1:] if len(rest) > 2 else b"}")


def stored_records(mirror: Mirror, shown: list[dict[str, Any]], as_of: date | None,
                   withheld: list[list[str]] | None = None) -> list[dict[str, Any]]:
    """The stored records of the rows shown, in their order, as of the cutoff; `withheld` is given, per record,
    the paths record_as_of left out."""
    records = []
    for row, text in zip(shown, stored_texts(mirror, shown)):
        out: list[str] = []
        records.append(record_as_of(json.loads(text), row, as_of, out))
        if withheld is not None:
            withheld.append(out)
    return records


def stored_texts(mirror: Mirror, shown: list[dict[str, Any]]) -> list[bytes | str]:
    """The records of the rows shown as received (JSON text), in their order: each from its segment's record file
    (study_version.record_file and record_row); where there is none (a snapshot an older ctmirror made), from the
    Parquet file holding it, by literal NCT IDs, so a lookup reads a row group or two, not every segment."""
    files = record_files_of(mirror.warehouse.root)
    texts: list[bytes | str | None] = [files.read(row["record_file"], row["record_row"]) for row in shown]
    raw: dict[tuple[str, str], str] = {}
    by_file: dict[str, set[str]] = {}
    for row, text in zip(shown, texts):
        if text is not None:
            continue
        if not STORED_NCT_ID.fullmatch(row["nct_id"]):
            raise V2Error(f"unexpected NCT ID {row['nct_id']!r} in the warehouse", status=500)
        by_file.setdefault(row["record_file"], set()).add(row["nct_id"])
    for file, ids in by_file.items():
        path = sql_literal(str(mirror.warehouse.root.resolve() / file))
        query = (read_sql("serve/records.sql").replace("{file}", path)
                 .replace("{nct_ids}", ", ".join(sql_literal(i) for i in sorted(ids))))
        try:
            raw.update({(n, h): text for n, h, text in mirror.con.execute(query).fetchall()})
        except duckdb.BinderException as exc:  # a segment keeps its records in its record file alone
            raise V2Error(f"{Path(file).parent} has lost its record file ({RECORDS}): run `ctmirror rebuild`, "
                          f"which writes it again from raw/", status=500) from exc
    return [raw[(row["nct_id"], row["content_hash"])] if text is None else text for row, text in zip(shown, texts)]


STORED_NCT_ID = re.compile(r"NCT\d{8}")


def shape(record: dict[str, Any], paths: list[tuple[str, ...]] | None) -> dict[str, Any]:
    return record if paths is None else project(record, paths)


class CurrentStudies:
    """Where each study's record is in the current state, for the single-study lookups that are most of a
    server's requests: NCT numbers in order beside the file and row of the version shown, and the aliases, read
    once per state; a lookup is a binary search (microseconds, where study_by_id.sql costs milliseconds)."""

    def __init__(self, mirror: Mirror) -> None:
        table = mirror.con.execute(read_sql("serve/current_records.sql")).to_arrow_table()
        files = table.column("record_file").combine_chunks().dictionary_encode()  # a few hundred files
        self.files = files.dictionary.to_pylist()
        self.file_nos = array("i", files.indices.to_pylist())
        self.numbers, self.rows = (array("i", table.column(name).to_pylist()) for name in ("nct_number", "record_row"))
        self.aliases = dict(mirror.con.execute(read_sql("serve/aliases.sql")).fetchall())

    def find(self, nct_id: str) -> tuple[str, str, int] | None:
        """(canonical NCT ID, record file, record row) of an NCT ID or alias in canonical form; None: no study."""
        nct_id = self.aliases.get(nct_id, nct_id)
        number = int(nct_id[3:])
        at = bisect_left(self.numbers, number)
        if at == len(self.numbers) or self.numbers[at] != number:
            return None
        return nct_id, self.files[self.file_nos[at]], self.rows[at]


_CURRENT: dict[tuple[Path, str], CurrentStudies] = {}
_CURRENT_LOCK = threading.Lock()


def current_studies(mirror: Mirror) -> CurrentStudies:
    """The CurrentStudies of the state a Mirror reads, shared by a process's Mirrors of it (the last two states
    asked for are kept: a server moving to a new state still finishes requests on the old one)."""
    key = (mirror.warehouse.root.resolve(), mirror.state_id)
    with _CURRENT_LOCK:
        found = _CURRENT.get(key)
        if found is None:
            found = _CURRENT[key] = CurrentStudies(mirror)
            while len(_CURRENT) > 2:
                del _CURRENT[next(iter(_CURRENT))]
        return found


def canonical_nct_id(nct_id: str) -> str:
    found = NCT_ID.match(nct_id)
    if not found:
        raise V2Error(f"{nct_id!r} is not an NCT ID (NCT followed by up to 8 digits)")
    return f"NCT{int(found.group(1)):08d}"


def check_markup_format(params: dict[str, str]) -> None:
    """markupFormat: markdown, as the records are stored. legacy (classic PRS text) is refused by name rather than
    answered in markdown: ctmirror has no record of how the registry writes it."""
    wanted = params.get("markupFormat", "markdown")
    if wanted == "legacy":
        raise V2Error("markupFormat=legacy (classic PRS text) is not served by ctmirror: markup fields come in "
                      "markdown, as the registry's records are stored; leave markupFormat out or give markdown")
    if wanted != "markdown":
        raise V2Error("markupFormat must be markdown or legacy")


def _study_params(params: dict[str, str]) -> list[tuple[str, ...]] | None:
    """The fields a single-study request projects to (None: the whole record), or a V2Error."""
    unknown = sorted(set(params) - {"fields", "format", "markupFormat"})
    if unknown:
        raise V2Error(f"unknown parameter {unknown[0]!r}")
    if params.get("format", "json") != "json":
        raise V2Error("format: a single study is served as json")
    check_markup_format(params)
    if not params.get("fields"):
        return None
    try:
        return field_paths(listed(params["fields"]) or [])
    except UnknownField as exc:
        raise V2Error(f"fields: {str(exc)!r} is not a field of the study record") from None


def study_text(mirror: Mirror, nct_id: str, params: dict[str, str], as_of: date | None,
               shown_as: dict[str, Any] | None = None) -> tuple[str, bytes]:
    """(canonical NCT ID, JSON body) of GET /api/v2/studies/{nctId}: the current state's whole record is served as
    stored, found without a query; a record at a cutoff or projected is shaped from it. shown_as: see study()."""
    found = _current_text(mirror, nct_id, params, as_of)
    if found is not None:
        return found
    canonical, record = study_by_query(mirror, nct_id, params, as_of, shown_as)
    return canonical, json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def study(mirror: Mirror, nct_id: str, params: dict[str, str], as_of: date | None,
          shown_as: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """(canonical NCT ID, record) of GET /api/v2/studies/{nctId}; V2Error 404 when there is none at the cutoff.
    shown_as: given as_of_exact and withheld (see study_by_query)."""
    found = _current_text(mirror, nct_id, params, as_of)
    if found is not None:
        if shown_as is not None:
            shown_as.update(as_of_exact=True, withheld=[])
        return found[0], json.loads(found[1])
    return study_by_query(mirror, nct_id, params, as_of, shown_as)


def _current_text(mirror: Mirror, nct_id: str, params: dict[str, str], as_of: date | None) -> tuple[str, bytes] | None:
    """The whole stored record of a study on the current state, by CurrentStudies and the record files; None where
    that does not answer (a cutoff, `fields`, a segment without a record file)."""
    if as_of is not None or _study_params(params):
        return None
    return _stored_text(current_studies(mirror), mirror.warehouse.root, nct_id)


def _stored_text(studies: CurrentStudies, root: Path, nct_id: str) -> tuple[str, bytes] | None:
    """(canonical NCT ID, stored record) of a study on the state `studies` looks up, from its record file; None
    where its segment has none; a V2Error 404 where there is no such study."""
    wanted = canonical_nct_id(nct_id)
    found = studies.find(wanted)
    if found is None:
        raise V2Error(f"Study not found: {wanted}", status=404)
    text = record_files_of(root).read(found[1], found[2])
    return None if text is None else (found[0], text)


def loaded_current_text(root: Path, state_id: str, nct_id: str, params: dict[str, str]) -> tuple[str, bytes] | None:
    """_current_text without a Mirror, where this process has the state's CurrentStudies already: a server's
    single-study request then waits for no reader (a reader may be busy with a search for tens of milliseconds).
    None where that does not answer."""
    if _study_params(params):
        return None
    with _CURRENT_LOCK:
        studies = _CURRENT.get((Path(root).resolve(), state_id))
    return None if studies is None else _stored_text(studies, root, nct_id)


def study_by_query(mirror: Mirror, nct_id: str, params: dict[str, str], as_of: date | None,
                   shown_as: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """study() through sql/serve/study_by_id.sql: the row a cutoff shows, its record shaped as of it; `shown_as`
    is given whether it is exact and what was withheld (`as_of_exact`, `withheld`) and, for a reconstruction, the
    last-update date of the version it was made from (`reconstructed_from`)."""
    paths = _study_params(params)
    wanted = canonical_nct_id(nct_id)
    rows = mirror.con.execute(read_sql("serve/study_by_id.sql"), {"nct_id": wanted, "as_of": as_of}).fetchall()
    if not rows:
        raise V2Error(f"Study not found: {wanted}" + (f" (as of {as_of})" if as_of else ""), status=404)
    shown = dict(zip((*PAGE_COLUMNS, "reconstructed_from"), rows[0]))
    withheld: list[list[str]] = []
    record = stored_records(mirror, [shown], as_of, withheld)[0]
    if shown_as is not None:
        exact = bool(shown["as_of_exact"]) if as_of else True
        shown_as.update(as_of_exact=exact, withheld=withheld[0])
        if as_of and shown["reconstructed_from"] is not None:
            shown_as["reconstructed_from"] = shown["reconstructed_from"].isoformat()
    return shown["nct_id"], shape(record, paths)


def csv_text(page: dict[str, Any], search: Search, *, header: bool) -> str:
    return write_csv(page["studies"], search.csv_columns or [], header=header)


# ---- page tokens ---------------------------------------------------------------------------------------------
def _token_key(mirror: Mirror) -> bytes:
    return hashlib.sha256(b"v2-page:" + json.dumps(mirror.state.meta, sort_keys=True, default=str).encode()).digest()


def write_page_token(mirror: Mirror, offset: int, fingerprint: str) -> str:
    body = json.dumps({"s": mirror.state_id, "o": offset, "f": fingerprint}, separators=(",", ":"), sort_keys=True)
    mac = hmac.new(_token_key(mirror), body.encode(), hashlib.sha256).hexdigest()[:24]
    return base64.urlsafe_b64encode(f"{body}|{mac}".encode()).decode().rstrip("=")


def _decoded_token(token: str) -> tuple[str, str, dict[str, Any]]:
    """(body, signature, payload) of a page token; ValueError (or KeyError, TypeError, UnicodeError) if it is not
    one in form."""
    if len(token) > 500:
        raise ValueError
    body, _, mac = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode().rpartition("|")
    payload = json.loads(body)
    if not isinstance(payload, dict):
        raise ValueError
    return body, mac, payload


def page_token_state(token: str | None) -> str | None:
    """The state a page token names (checked in full, signature included, on that state's Mirror), so paging goes
    on where it began when a sync publishes in between."""
    try:
        state = _decoded_token(token)[2].get("s") if token else None
    except (ValueError, KeyError, TypeError, UnicodeError):
        return None
    return state if isinstance(state, str) else None


def read_page_token(mirror: Mirror, token: str, fingerprint: str) -> int:
    """The offset a page token continues at: refused if altered, from another query, or from another state."""
    try:
        body, mac, payload = _decoded_token(token)
        offset = payload["o"]
        if not isinstance(offset, int) or not 0 <= offset <= MAX_PAGE_OFFSET:
            raise ValueError
    except (ValueError, KeyError, TypeError, UnicodeError):
        raise V2Error("pageToken is not one this server returned") from None
    expected = hmac.new(_token_key(mirror), body.encode(), hashlib.sha256).hexdigest()[:24]
    if payload.get("s") != mirror.state_id:
        raise V2Error("pageToken belongs to an earlier state of the warehouse (a sync has published since): start "
                      "again without it")
    if not hmac.compare_digest(mac, expected):
        raise V2Error("pageToken is not one this server returned")
    if payload.get("f") != fingerprint:
        raise V2Error("pageToken belongs to a query with other parameters")
    return offset
