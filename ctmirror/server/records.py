"""Study records as the v2 API shapes them: the stored JSON, as of a cutoff where a server answers at one, and
projected to the fields a request names (piece names such as NCTId or LocationCity, or dotted paths)."""

from __future__ import annotations

import json
import re
from datetime import date
from functools import cache
from importlib import resources
from typing import Any

DATE_TEXT = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
# Dates of a record that are not a DateStruct's: kept only when on or before the cutoff (a later one says when
# something happened after it).
LATER_DATES_DROPPED = ("statusVerifiedDate", "studyFirstSubmitDate", "studyFirstSubmitQcDate", "resultsFirstSubmitDate",
                       "resultsFirstSubmitQcDate", "dispFirstSubmitDate", "dispFirstSubmitQcDate",
                       "lastUpdateSubmitDate", "versionHolder", "uploadDate", "date", "releaseDate", "resetDate",
                       "unreleaseDate", "estimatedResultsFirstSubmitDate", "creationDate", "issuedDate", "postedDate")


def first_day(text: str) -> date:
    return date.fromisoformat(text if len(text) == 10 else f"{text}-01")


def record_as_of(record: dict[str, Any], shown: dict[str, Any], as_of: date | None) -> dict[str, Any]:
    """The record as a strict answer at `as_of` shows it: the status, stop reason, results and exactness of the
    trial_card row the cutoff shows (`shown`, see sql/schema/as_of_rules.sql), and no date after the cutoff
    given as fact: a later ACTUAL date becomes ESTIMATED, any other later date is left out. None: as stored."""
    if as_of is None:
        return record
    protocol = record.setdefault("protocolSection", {})
    status = protocol.get("statusModule")
    if status is not None:
        stored = status.get("overallStatus")
        if shown["overall_status"]:
            status["overallStatus"] = shown["overall_status"]
        if shown["overall_status"] == "UNKNOWN":
            status["lastKnownStatus"] = status.get("lastKnownStatus") or stored
        else:
            status.pop("lastKnownStatus", None)
        if shown["why_stopped"] is None:
            status.pop("whyStopped", None)
        if not shown["as_of_exact"]:
            status.pop("lastUpdatePostDateStruct", None)
        if not shown["results_posted"]:
            for key in ("resultsFirstPostDateStruct", "resultsFirstSubmitDate", "resultsFirstSubmitQcDate"):
                status.pop(key, None)
    if not shown["as_of_exact"]:
        protocol.pop("referencesModule", None)
        enrollment = protocol.get("designModule", {}).get("enrollmentInfo")
        if enrollment and enrollment.get("type") == "ACTUAL":
            enrollment["type"] = "ESTIMATED"
    if not shown["results_posted"]:
        record["hasResults"] = False
        record.pop("resultsSection", None)
    _no_later_dates(record, as_of)
    return record


DATE_TYPES = ("ACTUAL", "ESTIMATED")


def _later_event(item: Any, as_of: date) -> bool:
    """An item of a list of dated events (unposted annotations, submissions, ...) that happened after the cutoff."""
    return (isinstance(item, dict) and isinstance(item.get("date"), str) and bool(DATE_TEXT.match(item["date"][:10]))
            and item.get("type") not in DATE_TYPES and first_day(item["date"][:10]) > as_of)


def _no_later_dates(node: Any, as_of: date) -> None:
    if isinstance(node, list):
        node[:] = [item for item in node if not _later_event(item, as_of)]
        for item in node:
            _no_later_dates(item, as_of)
        return
    if not isinstance(node, dict):
        return
    if isinstance(node.get("date"), str) and DATE_TEXT.match(node["date"]) and node.get("type") in DATE_TYPES:
        if first_day(node["date"]) > as_of and node["type"] == "ACTUAL":  # a DateStruct: a later fact is a plan
            node["type"] = "ESTIMATED"
    for key in list(node):
        value = node[key]
        if key in LATER_DATES_DROPPED and isinstance(value, str) and DATE_TEXT.match(value[:10]) \
                and node.get("type") not in DATE_TYPES and first_day(value[:10]) > as_of:
            del node[key]
        else:
            _no_later_dates(value, as_of)


@cache
def field_tree() -> list[dict[str, Any]]:
    """The v2 API's field tree (GET /api/v2/studies/metadata), as shipped in ctmirror/data."""
    return json.loads(resources.files("ctmirror").joinpath("data/ctgov-studies-metadata.json").read_text("utf-8"))


@cache
def enumerations() -> list[dict[str, Any]]:
    """The v2 API's enumerations and the pieces that use them (GET /api/v2/studies/enums), as shipped."""
    return json.loads(resources.files("ctmirror").joinpath("data/ctgov-enums.json").read_text("utf-8"))


@cache
def piece_paths() -> dict[str, tuple[str, ...]]:
    """Every piece name (and alternative name), lower-cased, and every dotted path → its path in a record."""
    paths: dict[str, tuple[str, ...]] = {}

    def walk(node: dict[str, Any], parent: tuple[str, ...]) -> None:
        path = (*parent, node["name"])
        for name in (node.get("piece"), *node.get("altPieceNames", [])):
            if name:
                paths.setdefault(name.lower(), path)
        paths.setdefault(".".join(path).lower(), path)
        for child in node.get("children", []):
            walk(child, path)

    for node in field_tree():
        walk(node, ())
    return paths


class UnknownField(ValueError):
    pass


def field_paths(fields: list[str]) -> list[tuple[str, ...]]:
    """The record paths `fields` names (UnknownField for a name the field tree does not have)."""
    known = piece_paths()
    found = []
    for name in fields:
        path = known.get(name.strip().lower())
        if path is None:
            raise UnknownField(name)
        found.append(path)
    return found


def project(record: dict[str, Any], paths: list[tuple[str, ...]]) -> dict[str, Any]:
    """Only the parts of the record at `paths` (through lists, as the API projects LocationCity into each
    location), in the record's own order."""
    wanted: dict[str, Any] = {}
    for path in paths:
        node = wanted
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node.setdefault(path[-1], True)
    return _pick(record, wanted) or {}


def _pick(value: Any, wanted: Any) -> Any:
    if wanted is True:
        return value
    if isinstance(value, list):
        items = [_pick(item, wanted) for item in value]
        return [item for item in items if item not in (None, {})] or None
    if not isinstance(value, dict):
        return None
    picked = {}
    for key, item in value.items():
        if key in wanted:
            inner = _pick(item, wanted[key])
            if inner not in (None, {}, []):
                picked[key] = inner
    return picked or None


def values_at(record: dict[str, Any], path: tuple[str, ...]) -> list[Any]:
    """Every value at `path` in the record (through lists), for a CSV cell."""
    nodes: list[Any] = [record]
    for part in path:
        following = []
        for node in nodes:
            if isinstance(node, list):
                following.extend(item.get(part) for item in node if isinstance(item, dict))
            elif isinstance(node, dict):
                following.append(node.get(part))
        nodes = [n for n in following if n is not None]
    flat: list[Any] = []
    for node in nodes:
        flat.extend(node if isinstance(node, list) else [node])
    return flat
