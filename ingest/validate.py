"""Checks one parsed study record against the shape ctmirror reads, and says precisely what is wrong.

The shape is `study_structure()` from `sql/schema/study_structure.sql` (the same one DuckDB extracts
with), so a field is validated exactly when it is extracted. Enumerations are the OpenAPI spec's (v2.0.5).
A record that fails is quarantined with the message this module returns; it is never half-loaded.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from typing import Annotated, Literal, Optional

import msgspec

_STATUS = {
    "ACTIVE_NOT_RECRUITING", "COMPLETED", "ENROLLING_BY_INVITATION", "NOT_YET_RECRUITING", "RECRUITING",
    "SUSPENDED", "TERMINATED", "WITHDRAWN", "AVAILABLE", "NO_LONGER_AVAILABLE", "TEMPORARILY_NOT_AVAILABLE",
    "APPROVED_FOR_MARKETING", "WITHHELD", "UNKNOWN",
}
_DATE_TYPE = {"ACTUAL", "ESTIMATED"}
_AGENCY_CLASS = {"NIH", "FED", "OTHER_GOV", "INDIV", "INDUSTRY", "NETWORK", "AMBIG", "OTHER", "UNKNOWN"}
_RELEVANCE = {"LOW", "HIGH"}

_PS = "protocolSection."
_SM = _PS + "statusModule."
ENUMS: dict[str, set[str]] = {
    _SM + "overallStatus": _STATUS,
    _SM + "lastKnownStatus": _STATUS,
    **{_SM + f"{d}DateStruct.type": _DATE_TYPE
       for d in ("start", "primaryCompletion", "completion", "studyFirstPost", "resultsFirstPost", "lastUpdatePost")},
    _PS + "designModule.studyType": {"EXPANDED_ACCESS", "INTERVENTIONAL", "OBSERVATIONAL"},
    _PS + "designModule.phases": {"NA", "EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE3", "PHASE4"},
    _PS + "designModule.enrollmentInfo.type": {"ACTUAL", "ESTIMATED"},
    _PS + "armsInterventionsModule.interventions.type": {
        "BEHAVIORAL", "BIOLOGICAL", "COMBINATION_PRODUCT", "DEVICE", "DIAGNOSTIC_TEST", "DIETARY_SUPPLEMENT",
        "DRUG", "GENETIC", "PROCEDURE", "RADIATION", "OTHER"},
    _PS + "armsInterventionsModule.armGroups.type": {
        "EXPERIMENTAL", "ACTIVE_COMPARATOR", "PLACEBO_COMPARATOR", "SHAM_COMPARATOR", "NO_INTERVENTION", "OTHER"},
    _PS + "eligibilityModule.sex": {"FEMALE", "MALE", "ALL"},
    _PS + "eligibilityModule.stdAges": {"CHILD", "ADULT", "OLDER_ADULT"},
    _PS + "referencesModule.references.type": {"BACKGROUND", "RESULT", "DERIVED"},
    _PS + "sponsorCollaboratorsModule.leadSponsor.class": _AGENCY_CLASS,
    _PS + "sponsorCollaboratorsModule.collaborators.class": _AGENCY_CLASS,
    "derivedSection.conditionBrowseModule.browseLeaves.relevance": _RELEVANCE,
    "derivedSection.interventionBrowseModule.browseLeaves.relevance": _RELEVANCE,
}

DATE_PATHS = {
    _SM + "statusVerifiedDate", _SM + "studyFirstSubmitDate",
    *(_SM + f"{d}DateStruct.date"
      for d in ("start", "primaryCompletion", "completion", "studyFirstPost", "resultsFirstPost", "lastUpdatePost")),
}
# yyyy, yyyy-MM or yyyy-MM-dd with a day the month can have (29 February is checked for a leap year apart), in years
# 1800-2199: a date outside them is a typo or hostile, and DuckDB would read year 0 as a date BC.
_PARTIAL_DATE = re.compile(r"^(18|19|20|21)[0-9]{2}(-((0[13578]|1[02])(-(0[1-9]|[12][0-9]|3[01]))?"
                           r"|(0[469]|11)(-(0[1-9]|[12][0-9]|30))?|02(-(0[1-9]|1[0-9]|2[0-9]))?))?\Z")
_LEAP_DAY = b"-02-29"
_EXPECTED_DATE = "(expected yyyy, yyyy-MM or yyyy-MM-dd, a real day of a year from 1800 to 2199)"
ENROLLMENT_COUNT = "protocolSection.designModule.enrollmentInfo.count"
# Exactly NCT and eight ASCII digits, the whole string: `\d` would take Arabic-Indic or fullwidth digits and `$` a
# final newline, each of which made a second study of one number (or failed every later publish).
NCT_ID = re.compile(r"^NCT[0-9]{8}\Z")
# The JSON parsers refuse nesting past Python's recursion limit with RecursionError; a v2 record nests about ten
# levels. Beyond these limits a record is quarantined with the reason, before DuckDB or the memory budget see it.
MAX_NESTING = sys.getrecursionlimit()
MAX_RECORD_BYTES = 256 << 20  # with no memory budget; under one, a share of it (ingest/normalize.py)
TOO_DEEP = f"nested more than {MAX_NESTING:,} levels deep (a v2 study nests about ten): not a study record"


_NCT_ID_FIELD = re.compile(rb'"nctId"\s*:\s*"(NCT[0-9]{8})"')


def nct_id_in_text(data: bytes) -> str | None:
    """The nctId a record too broken to parse still names, if any (in its first 1 MiB)."""
    found = _NCT_ID_FIELD.search(data, 0, 1 << 20)
    return found.group(1).decode() if found else None

class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, object]]) -> None:
    """json's hook for each object: nothing is kept (only whether a key repeats is asked)."""
    if len(pairs) > 1 and len(dict(pairs)) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(key for key, _ in pairs if key in seen or seen.add(key)))


_PAIRS_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def duplicate_key(data: bytes) -> str | None:
    """The reason a record that names a key twice in one object is refused, or None. Readers disagree on such a
    record (DuckDB reads the first, most JSON clients the last), and the registry writes each key once. A full parse
    (about the validator's own time again): run for the sources ctmirror does not trust to come from the registry
    as written (normalize.TRUSTED_SOURCES)."""
    try:
        _PAIRS_DECODER.decode(data.decode("utf-8"))
    except _DuplicateKey as exc:
        return (f"names the key {str(exc)!r} twice in one object: the registry writes each key once, and readers "
                "would disagree on which to take (DuckDB the first, JSON clients the last)")
    except (ValueError, RecursionError):
        return None  # the validator, which read it first, says what else is wrong
    return None


_JSON_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "true/false",
                    int: "a number", float: "a number", type(None): "null"}


_REQUIRED = ("protocolSection", "protocolSection.identificationModule", "protocolSection.identificationModule.nctId")


class RecordShape:
    """The validator for one structure (parsed from `study_structure()`).

    Fast path: msgspec decodes the record's bytes into typed structs generated from the structure (C speed,
    unknown fields skipped, no Python objects built for what we do not read). Slow path, for records it
    rejects: a full parse and a walk of closures compiled from the same structure, which names the field,
    the index and what was expected. Checkers return None or (path parts, message), so paths are only
    built for bad records.
    """

    def __init__(self, structure: dict) -> None:
        self.structure = structure
        self._check = _compile(structure, "")
        self._typed = msgspec.json.Decoder(_typed(structure, "", [0]))

    def problem_of_bytes(self, data: bytes) -> tuple[str | None, str | None]:
        """(None, None) for a good record; else (reason, the nctId when one could be read)."""
        if not data.isascii():  # msgspec does not check the bytes of fields it skips
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                return f"not UTF-8: invalid byte at offset {exc.start}", None
        fast_reason = None  # None: the typed decoder took it, but the pattern lets 29 February through in any year
        try:
            self._typed.decode(data)
            if _LEAP_DAY not in data:
                return None, None
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            fast_reason = str(exc)
        except RecursionError:
            return TOO_DEEP, nct_id_in_text(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"not UTF-8: invalid byte at offset {exc.start}", None
        try:
            record = json.loads(text)
        except RecursionError:
            return TOO_DEEP, nct_id_in_text(data)
        except json.JSONDecodeError as exc:
            truncated = "Unterminated" in exc.msg or exc.pos >= len(text.rstrip()) - 1  # it stops where the text does
            return f"{'truncated JSON' if truncated else 'not valid JSON'}: {exc}", None
        nct_id = _dig(record, ("protocolSection", "identificationModule", "nctId"))
        reason = self.problem(record)
        if reason is None and fast_reason is not None:
            reason = f"rejected: {fast_reason}"
        return reason, nct_id if isinstance(nct_id, str) else None

    def problem(self, record: object) -> str | None:
        """None for a good record, else one specific sentence naming the field and what was expected."""
        if not isinstance(record, dict):
            return f"expected a study object, got {_describe(record)}"
        nct_id = _dig(record, ("protocolSection", "identificationModule", "nctId"))
        if nct_id is None:
            return "missing protocolSection.identificationModule.nctId"
        if not isinstance(nct_id, str) or not NCT_ID.match(nct_id):
            return f"protocolSection.identificationModule.nctId: {nct_id!r} is not NCT and exactly 8 ASCII digits"
        failure = self._check(record)
        if failure is None:
            return None
        parts, message = failure
        path = "".join(part if part.startswith("[") else f".{part}" for part in reversed(parts)).lstrip(".")
        return f"{path or 'record'}: {message}"


_Failure = tuple[list[str], str]


def _compile(shape: object, rule_path: str):
    if isinstance(shape, dict):
        return _compile_object(shape, rule_path)
    if isinstance(shape, list):
        return _compile_list(shape[0], rule_path)
    return _compile_leaf(shape, rule_path)


def _compile_object(shape: dict, rule_path: str):
    plain_strings = []
    others = []
    for key, sub_shape in shape.items():
        sub_rule = f"{rule_path}.{key}" if rule_path else key
        if sub_shape == "VARCHAR" and sub_rule not in ENUMS and sub_rule not in DATE_PATHS:
            plain_strings.append(key)
        else:
            others.append((key, _compile(sub_shape, sub_rule)))

    def check_object(value: object) -> _Failure | None:
        if type(value) is not dict:
            return [], f"expected an object, got {_describe(value)}"
        for key in plain_strings:
            item = value.get(key)
            if item is not None and type(item) is not str:
                return [key], f"expected a string, got {_describe(item)}"
        for key, check in others:
            item = value.get(key)
            if item is not None:
                failure = check(item)
                if failure is not None:
                    failure[0].append(key)
                    return failure
        return None

    return check_object


def _compile_list(item_shape: object, rule_path: str):
    check_item = _compile(item_shape, rule_path)

    def check_list(value: object) -> _Failure | None:
        if type(value) is not list:
            return [], f"expected a list, got {_describe(value)}"
        for index, item in enumerate(value):
            if item is not None:
                failure = check_item(item)
                if failure is not None:
                    failure[0].append(f"[{index}]")
                    return failure
        return None

    return check_list


def _compile_leaf(type_name: str, rule_path: str):
    if type_name == "VARCHAR":
        allowed = ENUMS.get(rule_path)
        is_date = rule_path in DATE_PATHS

        def check_string(value: object) -> _Failure | None:
            if type(value) is not str:
                return [], f"expected a string, got {_describe(value)}"
            if allowed is not None and value not in allowed:
                return [], f"unknown value {value!r} (expected one of {', '.join(sorted(allowed))})"
            if is_date and (not _PARTIAL_DATE.match(value) or not _real_leap_day(value)):
                return [], f"{value!r} is not a date {_EXPECTED_DATE}"
            return None

        return check_string
    if type_name == "BIGINT" and rule_path == ENROLLMENT_COUNT:
        return lambda value: (([], f"expected a whole number, got {_describe(value)}") if type(value) is not int
                              else ([], f"a count of participants is 0 or more, got {value}") if value < 0 else None)
    if type_name == "BIGINT":
        return lambda value: None if type(value) is int else ([], f"expected a whole number, got {_describe(value)}")
    if type_name == "DOUBLE":
        return lambda value: None if type(value) in (int, float) else ([], f"expected a number, got {_describe(value)}")
    if type_name == "BOOLEAN":
        return lambda value: None if type(value) is bool else ([], f"expected true or false, got {_describe(value)}")
    raise ValueError(f"study_structure() uses a type the validator does not know: {type_name}")


def _typed(node: object, path: str, counter: list[int]) -> object:
    """msgspec types for the structure: every field optional (null allowed) but the nctId and the modules
    holding it, enumerations as Literals, partial dates by pattern."""
    if isinstance(node, dict):
        fields, rename = [], {}
        for key, sub in node.items():
            sub_path = f"{path}.{key}" if path else key
            name = f"{key}_" if keyword.iskeyword(key) else key
            if name != key:
                rename[name] = key
            sub_type = _typed(sub, sub_path, counter)
            if sub_path == "protocolSection.identificationModule.nctId":
                sub_type = Annotated[str, msgspec.Meta(pattern=NCT_ID.pattern)]
            if sub_path in _REQUIRED:
                fields.append((name, sub_type))
            else:
                fields.append((name, Optional[sub_type], None))
        counter[0] += 1
        fields.sort(key=lambda f: len(f) == 3)  # required fields first, as Python requires
        return msgspec.defstruct(f"Shape{counter[0]}", fields, rename=rename or None)
    if isinstance(node, list):
        return list[Optional[_typed(node[0], path, counter)]]  # type: ignore[misc]
    if node == "VARCHAR":
        if path in ENUMS:
            return Literal[tuple(sorted(ENUMS[path]))]  # type: ignore[return-value]
        if path in DATE_PATHS:
            return Annotated[str, msgspec.Meta(pattern=_PARTIAL_DATE.pattern)]
        return str
    if path == ENROLLMENT_COUNT:
        return Annotated[int, msgspec.Meta(ge=0)]
    return {"BIGINT": int, "DOUBLE": float, "BOOLEAN": bool}[node]  # type: ignore[index]


def _real_leap_day(value: str) -> bool:
    """False for 29 February of a year that has none."""
    if not value.endswith("-02-29"):
        return True
    year = int(value[:4])
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _dig(record: dict, keys: tuple[str, ...]) -> object:
    value: object = record
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _describe(value: object) -> str:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{_JSON_TYPE_NAMES.get(type(value), type(value).__name__)} ({shown})"
