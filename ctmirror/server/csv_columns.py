"""The v2 API's CSV: the columns the live API writes by default, under its own titles and in its value formats
("YES"/"NO" for results, lists joined by "|", a study's URL), which `fields` may name by title too.

A `fields` name that is not a column title is a piece or field path of the record: its values joined by "|".
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

from ctmirror.server.records import field_paths, values_at

Column = tuple[str, Callable[[dict[str, Any]], str]]
STUDY_URL = "https://clinicaltrials.gov/study/"


def _at(record: dict[str, Any], *path: str) -> Any:
    value: Any = record
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _joined(values: list[Any], separator: str = "|") -> str:
    return separator.join(_text(v) for v in values if v not in (None, ""))


def _module(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda record: _at(record, "protocolSection", name) or {}


_ident, _status, _design = _module("identificationModule"), _module("statusModule"), _module("designModule")
_sponsors, _conditions = _module("sponsorCollaboratorsModule"), _module("conditionsModule")
_arms, _outcomes = _module("armsInterventionsModule"), _module("outcomesModule")
_eligibility = _module("eligibilityModule")
_description, _locations = _module("descriptionModule"), _module("contactsLocationsModule")


def _date(getter: Callable[[dict[str, Any]], dict[str, Any]], struct: str) -> Callable[[dict[str, Any]], str]:
    return lambda record: _text((getter(record).get(struct) or {}).get("date"))


def _outcome_list(kind: str) -> Callable[[dict[str, Any]], str]:
    def outcomes(record: dict[str, Any]) -> str:
        return _joined([", ".join(_text(o.get(k)) for k in ("measure", "description", "timeFrame") if o.get(k))
                        for o in _outcomes(record).get(kind) or []])
    return outcomes


def _design_text(record: dict[str, Any]) -> str:
    info = _design(record).get("designInfo") or {}
    parts = [("Allocation", info.get("allocation")), ("Intervention Model", info.get("interventionModel")),
             ("Masking", (info.get("maskingInfo") or {}).get("masking")),
             ("Primary Purpose", info.get("primaryPurpose")),
             ("Observational Model", info.get("observationalModel")), ("Time Perspective", info.get("timePerspective"))]
    return _joined([f"{name}: {value}" for name, value in parts if value])


def _locations_text(record: dict[str, Any]) -> str:
    keys = ("facility", "city", "state", "zip", "country")
    return _joined([", ".join(_text(site.get(k)) for k in keys if site.get(k))
                    for site in _locations(record).get("locations") or []])


def _documents(record: dict[str, Any]) -> str:
    documents = _at(record, "documentSection", "largeDocumentModule", "largeDocs") or []
    nct_id = _text(_ident(record).get("nctId"))
    return _joined([f"{d.get('label') or d.get('typeAbbrev')}, https://cdn.clinicaltrials.gov/large-docs/"
                    f"{nct_id[-2:]}/{nct_id}/{d.get('filename')}" for d in documents if d.get("filename")])


# The live API's default CSV columns, in its order.
LIVE_COLUMNS: tuple[Column, ...] = (
    ("NCT Number", lambda r: _text(_ident(r).get("nctId"))),
    ("Study Title", lambda r: _text(_ident(r).get("briefTitle"))),
    ("Study URL", lambda r: STUDY_URL + _text(_ident(r).get("nctId"))),
    ("Acronym", lambda r: _text(_ident(r).get("acronym"))),
    ("Study Status", lambda r: _text(_status(r).get("overallStatus"))),
    ("Brief Summary", lambda r: _text(_description(r).get("briefSummary"))),
    ("Study Results", lambda r: "YES" if r.get("hasResults") else "NO"),
    ("Conditions", lambda r: _joined(_conditions(r).get("conditions") or [])),
    ("Interventions", lambda r: _joined([f"{i.get('type')}: {i.get('name')}" for i in _arms(r).get("interventions")
                                         or []])),
    ("Primary Outcome Measures", _outcome_list("primaryOutcomes")),
    ("Secondary Outcome Measures", _outcome_list("secondaryOutcomes")),
    ("Other Outcome Measures", _outcome_list("otherOutcomes")),
    ("Sponsor", lambda r: _text((_sponsors(r).get("leadSponsor") or {}).get("name"))),
    ("Collaborators", lambda r: _joined([c.get("name") for c in _sponsors(r).get("collaborators") or []])),
    ("Sex", lambda r: _text(_eligibility(r).get("sex"))),
    ("Age", lambda r: _joined(_eligibility(r).get("stdAges") or [], ", ")),
    ("Phases", lambda r: _joined(_design(r).get("phases") or [])),
    ("Enrollment", lambda r: _text((_design(r).get("enrollmentInfo") or {}).get("count"))),
    ("Funder Type", lambda r: _text((_sponsors(r).get("leadSponsor") or {}).get("class"))),
    ("Study Type", lambda r: _text(_design(r).get("studyType"))),
    ("Study Design", _design_text),
    ("Other IDs", lambda r: _joined([(_ident(r).get("orgStudyIdInfo") or {}).get("id"),
                                     *[s.get("id") for s in _ident(r).get("secondaryIdInfos") or []]])),
    ("Start Date", _date(_status, "startDateStruct")),
    ("Primary Completion Date", _date(_status, "primaryCompletionDateStruct")),
    ("Completion Date", _date(_status, "completionDateStruct")),
    ("First Posted", _date(_status, "studyFirstPostDateStruct")),
    ("Results First Posted", _date(_status, "resultsFirstPostDateStruct")),
    ("Last Update Posted", _date(_status, "lastUpdatePostDateStruct")),
    ("Locations", _locations_text),
    ("Study Documents", _documents),
)
_BY_TITLE = {title.lower(): (title, value) for title, value in LIVE_COLUMNS}
# The parts of a record the titled columns read: a CSV page decodes these alone (records.parts_decoder), not the
# results, most of a record that has them.
TITLED_COLUMNS_READ = (("protocolSection",), ("documentSection",), ("hasResults",))


def columns_for(fields: list[str] | None) -> list[Column]:
    """The CSV's columns: the live default, or those `fields` names (titles, pieces or field paths, in its
    order). UnknownField for a name that is none of them."""
    if not fields:
        return list(LIVE_COLUMNS)
    found: list[Column] = []
    for name in fields:
        column = _BY_TITLE.get(name.strip().lower())
        if column is None:
            [path] = field_paths([name])
            column = (name, lambda record, path=path: _joined(values_at(record, path)))
        found.append(column)
    return found


def paths_read(fields: list[str] | None) -> list[tuple[str, ...]]:
    """The parts of a record that the columns `fields` names (as columns_for reads it) read."""
    paths: list[tuple[str, ...]] = []
    for name in fields or [LIVE_COLUMNS[0][0]]:
        paths.extend(TITLED_COLUMNS_READ if name.strip().lower() in _BY_TITLE else field_paths([name]))
    return list(dict.fromkeys(paths))


def csv_text(records: list[dict[str, Any]], columns: list[Column], *, header: bool) -> str:
    """A page of the CSV: the header on the first page only, as the live API writes it."""
    out = io.StringIO()
    writer = csv.writer(out)
    if header:
        writer.writerow([title for title, _ in columns])
    for record in records:
        writer.writerow([value(record) for _, value in columns])
    return out.getvalue()
