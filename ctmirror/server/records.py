"""Study records as the v2 API shapes them: the stored JSON, as of a cutoff where a server answers at one, and
projected to the fields a request names (piece names such as NCTId or LocationCity, or dotted paths)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import date
from functools import cache, lru_cache
from importlib import resources
from typing import Any

import msgspec

WHOLE_RECORD = msgspec.json.Decoder()
DATE_TEXT = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
# Dates of a record that are not a DateStruct's: kept only when on or before the cutoff (a later one says when
# something happened after it).
LATER_DATES_DROPPED = ("statusVerifiedDate", "studyFirstSubmitDate", "studyFirstSubmitQcDate", "resultsFirstSubmitDate",
                       "resultsFirstSubmitQcDate", "dispFirstSubmitDate", "dispFirstSubmitQcDate",
                       "lastUpdateSubmitDate", "versionHolder", "uploadDate", "date", "releaseDate", "resetDate",
                       "unreleaseDate", "estimatedResultsFirstSubmitDate", "creationDate", "issuedDate", "postedDate")


def first_day(text: str) -> date:
    return date.fromisoformat(text if len(text) == 10 else f"{text}-01")


def record_as_of(record: dict[str, Any], shown: dict[str, Any], as_of: date | None,
                 withheld: list[str] | None = None) -> dict[str, Any]:
    """The record as a strict answer at `as_of` shows it: the status, stop reason, results and exactness of the
    trial_card row the cutoff shows (`shown`, see sql/schema/as_of_rules.sql), and nothing the registry recorded
    only after the cutoff, withheld rather than relabelled: an ACTUAL date after it (a later fact), another date
    after it, a document uploaded after it; in a reconstruction (a later version shown for want of the cutoff's),
    an ACTUAL enrollment (reached later), the references, the last update. `withheld` is given the paths of what
    was left out. None: as stored."""
    if as_of is None:
        return record
    out = withheld if withheld is not None else []
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
        if shown["why_stopped"] is None and status.pop("whyStopped", None) is not None:
            out.append("protocolSection.statusModule.whyStopped")
        if not shown["as_of_exact"] and status.pop("lastUpdatePostDateStruct", None) is not None:
            out.append("protocolSection.statusModule.lastUpdatePostDateStruct")
        if not shown["results_posted"]:
            for key in ("resultsFirstPostDateStruct", "resultsFirstSubmitDate", "resultsFirstSubmitQcDate"):
                if status.pop(key, None) is not None:
                    out.append(f"protocolSection.statusModule.{key}")
    if not shown["as_of_exact"]:
        if protocol.pop("referencesModule", None) is not None:
            out.append("protocolSection.referencesModule")
        design = protocol.get("designModule", {})
        if (design.get("enrollmentInfo") or {}).get("type") == "ACTUAL":
            del design["enrollmentInfo"]
            out.append("protocolSection.designModule.enrollmentInfo")
    if not shown["results_posted"]:
        record["hasResults"] = False
        if record.pop("resultsSection", None) is not None:
            out.append("resultsSection")
    _no_later_dates(record, as_of, "", out)
    return record


DATE_TYPES = ("ACTUAL", "ESTIMATED")
# Fields of a list's items that say when the item came to be: an item dated after the cutoff is left out whole.
ITEM_DATES = ("date", "uploadDate", "releaseDate", "creationDate", "issuedDate", "postedDate")


# What record_as_of reads besides the parts asked for: the status it replaces, the enrollment's type.
READ_AT_A_CUTOFF = (("protocolSection", "statusModule", "overallStatus"),
                    ("protocolSection", "statusModule", "lastKnownStatus"),
                    ("protocolSection", "designModule", "enrollmentInfo", "type"))


def cutoff_trie(trie: dict[str, Any]) -> dict[str, Any]:
    """The trie with what record_as_of needs to judge its parts at a cutoff: beside every object on the way, the keys
    that date it or type it (a DateStruct's type, a list item's upload or event date: ITEM_DATES), and
    READ_AT_A_CUTOFF; none of them is a field asked for (no piece under ""), so none is counted or matched."""
    def widened(node: dict[str, Any]) -> dict[str, Any]:
        out = {key: widened(child) if key else child for key, child in node.items()}
        if len(node) > ("" in node):  # an object on the way, not a leaf's value
            for key in ("type", *ITEM_DATES):
                out.setdefault(key, {})
        return out

    out = widened(trie)
    for path in READ_AT_A_CUTOFF:
        node = out
        for part in path:
            node = node.setdefault(part, {})
    return out


# parts_trie's mark of a node wanted whole (a field_stats trie marks a field's node with its piece name instead:
# a list field's node is read for its size, and may hold the leaves asked for under it).
WHOLE = "*"


@cache
def _list_paths() -> frozenset[tuple[str, ...]]:
    return frozenset(path for path, node in field_nodes() if node["type"].endswith("[]"))


@cache
def _tree_order() -> dict[tuple[str, ...], int]:
    return {path: n for n, (path, _) in enumerate(field_nodes())}


def _shape(trie: dict[str, Any], path: tuple[str, ...]) -> type:
    """A msgspec Struct type holding only the trie's paths of a record (lists where the field tree has lists), in the
    field tree's order: a record decoded into it keeps its keys in the order the registry writes them. A node marked
    WHOLE (parts_trie) is decoded whole, whatever the trie holds under it."""
    fields, names = [], {}
    order = _tree_order()
    for key, child in sorted(trie.items(), key=lambda item: order.get((*path, item[0]), len(order))):
        if not key:
            continue
        name = f"f{len(fields)}"  # a record's keys may be Python keywords ("class")
        names[name] = key
        kind: Any = Any
        if child.get("") != WHOLE and len(child) > ("" in child):
            inner = _shape(child, (*path, key))
            kind = list[inner] if (*path, key) in _list_paths() else inner
        fields.append((name, kind | None, None))
    return msgspec.defstruct("Part", fields, rename=names, omit_defaults=True)


def parts_trie(paths: list[tuple[str, ...]]) -> dict[str, Any]:
    """The paths as nested dicts, each ending at a node marked WHOLE under the key "" (no record key is empty): what
    a projection wants of it is all of it."""
    root: dict[str, Any] = {}
    for path in paths:
        node = root
        for part in path:
            node = node.setdefault(part, {})
        node[""] = WHOLE
    return root


@lru_cache(maxsize=256)
def _parts_decoder(trie_json: str, at_a_cutoff: bool) -> msgspec.json.Decoder:
    trie = json.loads(trie_json)
    return msgspec.json.Decoder(_shape(cutoff_trie(trie) if at_a_cutoff else trie, ()))


def parts_decoder(trie: dict[str, Any], at_a_cutoff: bool) -> Callable[[bytes | str], dict[str, Any]]:
    """A decoder of stored records (JSON text) that reads only the trie's parts (msgspec skips the rest at C speed:
    most of a record is results nobody asked for), with, at a cutoff, what record_as_of reads to leave out what came
    later (cutoff_trie); a record whose parts are not shaped as the field tree says is read whole."""
    partial = _parts_decoder(json.dumps(trie), at_a_cutoff)

    def decode(text: bytes | str) -> dict[str, Any]:
        try:
            return msgspec.to_builtins(partial.decode(text))
        except msgspec.DecodeError:
            return decode_record(text)

    return decode


def decode_record(text: bytes | str) -> dict[str, Any]:
    """A stored record, whole. JSON that msgspec refuses but Python's json reads (NaN) is read as ingest read it."""
    try:
        return WHOLE_RECORD.decode(text)
    except msgspec.DecodeError:
        return json.loads(text)


def _dated_after(text: Any, as_of: date) -> bool:
    """Whether a value is a date (yyyy-MM or yyyy-MM-dd, a time after it aside) after the cutoff."""
    if not isinstance(text, str) or not DATE_TEXT.match(text[:10]):
        return False
    try:
        return first_day(text[:10]) > as_of
    except ValueError:  # "2011-13": no month of a year
        return False


def _later_item(item: Any, as_of: date) -> bool:
    """An item of a list that came to be after the cutoff: a dated event (unposted annotations, submissions) or a
    document uploaded after it. A DateStruct-like item (a typed date) is not an event."""
    return isinstance(item, dict) and item.get("type") not in DATE_TYPES and \
        any(_dated_after(item.get(key), as_of) for key in ITEM_DATES)


def _no_later_dates(node: Any, as_of: date, path: str, out: list[str]) -> None:
    if isinstance(node, list):
        kept = [item for item in node if not _later_item(item, as_of)]
        if len(kept) < len(node):
            out.append(f"{path}[]")
        node[:] = kept
        for item in node:
            _no_later_dates(item, as_of, f"{path}[]", out)
        return
    if not isinstance(node, dict):
        return
    for key in list(node):
        value = node[key]
        where = f"{path}.{key}" if path else key
        if isinstance(value, dict) and value.get("type") == "ACTUAL" and _dated_after(value.get("date"), as_of):
            del node[key]  # a DateStruct of a fact after the cutoff: not known then, and not a plan
            out.append(where)
        elif key in LATER_DATES_DROPPED and node.get("type") not in DATE_TYPES and _dated_after(value, as_of):
            del node[key]
            out.append(where)
        else:
            _no_later_dates(value, as_of, where, out)


@cache
def field_tree() -> list[dict[str, Any]]:
    """The v2 API's field tree (GET /api/v2/studies/metadata), as shipped in ctmirror/data."""
    return json.loads(resources.files("ctmirror").joinpath("data/ctgov-studies-metadata.json").read_text("utf-8"))


@cache
def enumerations() -> list[dict[str, Any]]:
    """The v2 API's enumerations and the pieces that use them (GET /api/v2/studies/enums), as shipped."""
    return json.loads(resources.files("ctmirror").joinpath("data/ctgov-enums.json").read_text("utf-8"))


def enum_value(text: str) -> str:
    """A value of an enumeration as the API writes it (RECRUITING, PHASE2, ACTIVE_NOT_RECRUITING) from a query's
    text, which may write it as words ("Recruiting", "Phase 2", "Active, not recruiting"): the enumerations' value
    whose letters and digits are the text's; else the text upper-cased with spaces as underscores (matching none)."""
    return _enums_by_letters().get(_letters(text)) or text.strip().upper().replace(" ", "_")


def _letters(text: str) -> str:
    return re.sub(r"[^0-9A-Z]", "", text.upper())


@cache
def _enums_by_letters() -> dict[str, str]:
    return {_letters(v["value"]): v["value"] for e in enumerations() for v in e["values"]}


@cache
def piece_paths() -> dict[str, tuple[str, ...]]:
    """Every piece name (and alternative name), lower-cased, and every dotted path → its path in a record."""
    paths: dict[str, tuple[str, ...]] = {}
    for path, node in field_nodes():
        for name in (node.get("piece"), *node.get("altPieceNames", []), ".".join(path)):
            if name:
                paths.setdefault(name.lower(), path)
    return paths


def field_nodes() -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """(path, node) of every node of the field tree, parents before their children."""
    def walk(node: dict[str, Any], parent: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
        path = (*parent, node["name"])
        yield path, node
        for child in node.get("children", []):
            yield from walk(child, path)

    for node in field_tree():
        yield from walk(node, ())


@cache
def leaf_pieces() -> dict[str, str]:
    """Every leaf field's piece name, by its piece name, alternative names and dotted path (lower-cased): what an
    Essie AREA[...] or a sort may name a field by."""
    pieces: dict[str, str] = {}
    for path, node in field_nodes():
        if not node.get("children"):
            for name in (node["piece"], *node.get("altPieceNames", []), ".".join(path)):
                pieces.setdefault(name.lower(), node["piece"])
    return pieces


# A markdown backslash escape (CommonMark: before any ASCII punctuation), as the registry writes "\\>" for ">".
MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


@cache
def markup_paths() -> tuple[tuple[str, ...], ...]:
    """The paths of the record's markup fields (the field tree's sourceType MARKUP: summaries, criteria, ...)."""
    return tuple(path for path, node in field_nodes() if node.get("sourceType") == "MARKUP")


def legacy_markup(record: dict[str, Any]) -> dict[str, Any]:
    """The record with its markup fields as markupFormat=legacy writes them, the classic PRS text the registry's
    markdown was made from: markdown's backslash escapes undone ("\\<126 mg/dl" is "<126 mg/dl") and lines ended
    with CRLF. List markers and emphasis stay as markdown writes them (the PRS's own are not in the record)."""
    for path in markup_paths():
        _rewrite(record, path, _legacy_text)
    return record


def _legacy_text(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    return MARKDOWN_ESCAPE.sub(r"\1", text).replace("\r\n", "\n").replace("\n", "\r\n")


def _rewrite(node: Any, path: tuple[str, ...], change: Any) -> None:
    """Replaces each value at `path` in `node` (through lists) by change(value)."""
    if isinstance(node, list):
        for item in node:
            _rewrite(item, path, change)
        return
    if not isinstance(node, dict) or path[0] not in node:
        return
    if len(path) == 1:
        node[path[0]] = change(node[path[0]])
    else:
        _rewrite(node[path[0]], path[1:], change)


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
            if node is True:  # a part wanted whole holds this one (fields=StatusModule,OverallStatus)
                break
        else:
            node[path[-1]] = True
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
