"""Agent tools over the Model Context Protocol (the official `mcp` SDK): `ctmirror mcp` (stdio) and /mcp in
`ctmirror serve` (streamable HTTP).

The tools are the registry's methods and statistics (their JSON schemas are the request models', validated by the
registry as every surface is), plus what agents use on the live API: a study record with capped lists, a count for a
query, field values, field definitions, posted results, and find_eligible with its funnel. Every answer is structured
content; every error a typed code with a hint (the contract's envelope), never a traceback. With a cutoff, every tool
answers strictly as of it, and the server's instructions tell the agent the date it lives in.
"""

from __future__ import annotations

import json
import re
from datetime import date
from functools import cache
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

import anyio
import mcp.types as types
import msgspec
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter, ValidationError

from ctmirror import __version__
from ctmirror.core.errors import CtmirrorError, InvalidArgument, NotFound
from ctmirror.core.words import search_norm
from ctmirror.read import arguments as arguments_
from ctmirror.read.mirror import Mirror
from ctmirror.read.models import left_out_of
from ctmirror.read.registry import METHODS, STATISTIC_NAMES, StatisticRequest
from ctmirror.server import v2
from ctmirror.server.pool import MirrorPool, freeze_startup_objects
from ctmirror.server.records import field_tree
from ctmirror.server.v2 import field_stats

MAX_RESULTS_STUDIES = 20
PHASES = ("EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE3", "PHASE4", "NA")
DEFAULT_LIST_CAP = 25


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A request model's JSON schema as a tool's input schema (without our CLI's hints, compacted)."""
    properties = {name: compact_input({k: v for k, v in field.items() if k != "cli"})
                  for name, field in schema.get("properties", {}).items()}
    return {"type": "object", "properties": properties, "additionalProperties": False,
            **({"required": schema["required"]} if schema.get("required") else {})}


NCT_IDS = {"type": "string", "description": "An NCT ID, e.g. NCT00711542."}
# get_study's sections: where each is in the v2 record (the identification module always comes)
STUDY_SECTIONS = {
    "status": ("protocolSection", "statusModule"), "sponsors": ("protocolSection", "sponsorCollaboratorsModule"),
    "description": ("protocolSection", "descriptionModule"), "conditions": ("protocolSection", "conditionsModule"),
    "design": ("protocolSection", "designModule"), "arms": ("protocolSection", "armsInterventionsModule"),
    "outcomes": ("protocolSection", "outcomesModule"), "eligibility": ("protocolSection", "eligibilityModule"),
    "locations": ("protocolSection", "contactsLocationsModule"), "references": ("protocolSection", "referencesModule"),
    "results": ("resultsSection",), "mesh": ("derivedSection",),
}
V2_QUERY = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "query.cond": {"type": "string", "description": "Conditions (Essie)."},
        "query.intr": {"type": "string", "description": "Drugs or interventions."},
        "query.term": {"type": "string", "description": "Other terms (Essie)."},
        "query.locn": {"type": "string", "description": "A place, e.g. 'Germany'."},
        "query.spons": {"type": "string", "description": "Sponsor or collaborator."},
        "query.titles": {"type": "string", "description": "Title words."},
        "filter.overallStatus": {"type": "string", "description": "Statuses, comma-separated"},
        "aggFilters": {"type": "string", "description": "e.g. phase:2 3,sex:f"},
        "filter.geo": {"type": "string", "description": "distance(lat,lon,50mi)"},
    },
}
EXTRA_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "get_study": ("A study's v2 record, or sections of it; lists cut to max_list_items (`capped` says which); "
                  "`withheld`: what a cutoff hides.",
                  {"type": "object", "additionalProperties": False, "required": ["nct_id"],
                   "properties": {"nct_id": NCT_IDS,
                                  "sections": {"type": "array", "items": {"enum": list(STUDY_SECTIONS)}},
                                  "location": {"type": "string", "description": "Only the sites there"},
                                  "max_list_items": {"type": "integer", "minimum": 1, "maximum": 1000,
                                                     "default": DEFAULT_LIST_CAP}}}),
    "count_studies": ("Studies a query finds (v2 parameters): how many, and the first `list` NCT IDs.",
                      {**V2_QUERY, "properties": {**V2_QUERY["properties"], "list": {
                          "type": "integer", "minimum": 0, "maximum": 1000, "default": 0}}}),
    "field_values": ("Values of any record field (piece name or path) and how many studies have each; a date's or "
                     "number's range.",
                     {"type": "object", "additionalProperties": False, "required": ["fields"],
                      "properties": {"fields": {"type": "array", "items": {"type": "string"}, "minItems": 1}}}),
    "field_definitions": ("Fields of the v2 study record (piece, path, type, description) matching words, or a "
                          "path's children.",
                          {"type": "object", "additionalProperties": False,
                           "properties": {"query": {"type": "string", "description": "Words to look for."},
                                          "path": {"type": "string", "description": "A dotted path, e.g. "
                                                   "protocolSection.statusModule"}}}),
    "get_results": ("Posted results of up to 20 studies: outcome measures, adverse events, participant flow, "
                    "baseline.",
                    {"type": "object", "additionalProperties": False, "required": ["nct_ids"],
                     "properties": {"nct_ids": {"type": "array", "items": NCT_IDS, "minItems": 1,
                                                "maxItems": MAX_RESULTS_STUDIES}}}),
    "find_eligible": ("Trials a patient could join, with how many studies each filter kept.",
                      {"type": "object", "additionalProperties": False, "required": ["conditions"],
                       "properties": {
                           "conditions": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                           "age_years": {"type": "number", "minimum": 0, "maximum": 130},
                           "sex": {"type": "string", "enum": ["FEMALE", "MALE"]},
                           "healthy_volunteer": {"type": "boolean"},
                           "location": {"type": "string", "description": "'Boston, MA', 'Germany': sites there"},
                           "phases": {"type": "array", "items": {"type": "string", "enum": list(PHASES)}},
                           "statuses": {"type": "array", "items": {"type": "string"}, "default": ["RECRUITING"],
                                        "description": "[]: any"},
                           "max_results": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20}}}),
}


@cache
def _method_schema(name: str) -> dict[str, Any]:
    schema = _clean_schema(METHODS[name].request.model_json_schema())
    if name == "search":  # the tool's own argument, read by _essie_search
        schema = {**schema, "properties": {"essie": ESSIE_ARGUMENT, **schema["properties"]}}
    return schema


# search's Essie expression: the trials it finds (at most ESSIE_TRIALS_MAX) are the search's list of trials.
ESSIE_ARGUMENT = {"type": ["string", "null"],
                  "description": "Essie (as v2 query.term): OR, NOT, AREA[Field], RANGE[a, b]."}
ESSIE_TRIALS_MAX = 10_000


# The registry's statistics as one tool, the statistic named by its argument: its name without the `stats_` every
# name begins with (by_phase, top_conditions, ...), or with it.
STATISTICS_TOOL = "statistics"
STATISTIC_CHOICES = {name.removeprefix("stats_"): name for name in STATISTIC_NAMES}


@cache
def _statistics_schema() -> dict[str, Any]:
    scope = _clean_schema(StatisticRequest.model_json_schema())
    choice = {"type": "string", "enum": list(STATISTIC_CHOICES)}
    return {**scope, "properties": {"statistic": choice, **scope["properties"]}, "required": ["statistic"]}


def _statistics_description() -> str:
    return "Counts of the trials the filters keep (none: all), by `statistic`."


TITLES = {
    "search_trials": "Trials of a drug in a condition", "detect_whitespace": "Is a drug-condition pair untested?",
    "get_landscape": "Competitive landscape of a condition", "get_terminated": "Stopped trials and why",
    "get_trial": "One trial", "get_trial_details": "One trial in detail", "search": "Search trials with filters",
    STATISTICS_TOOL: "Statistics of the trials in scope", "get_study": "A study's registry record",
    "count_studies": "Count studies (v2 query)", "field_values": "Values of a field",
    "field_definitions": "Fields of the study record", "get_results": "Posted results",
    "find_eligible": "Trials a patient could join",
}
# Every tool reads an offline mirror: nothing changes, the same call answers the same, nothing outside is reached.
READ_ONLY = types.ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)


def _listed(model: Any) -> dict[str, Any]:
    """An answer that is a list, as its structured content holds it: {"results": [...]}."""
    return {"type": "object", "required": ["results"], "properties": {"results": {"type": "array", "items": model}}}


@cache
def output_schema(name: str) -> dict[str, Any]:
    """The JSON schema of a tool's structured answer (what run_tool returns on success)."""
    if name == STATISTICS_TOOL:
        return _listed({"type": "object"})
    if name in EXTRA_TOOLS:
        return {"type": "object", "required": list(EXTRA_OUTPUTS[name])}
    answer = METHODS[name].answer
    item = get_args(answer)[0] if get_origin(answer) is list else answer
    if get_origin(item) in (Union, UnionType):  # Model | None: None is the not-found error, never an answer
        item = next(arg for arg in get_args(item) if arg is not type(None))
    schema = _outline(TypeAdapter(item).json_schema(mode="serialization"))
    return _listed(schema) if get_origin(answer) is list else schema


def _outline(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's answer schema as the fields every answer has: what it validates against, at a few percent of the
    whole schema's characters in the agent's context (the tool's description says what the answer is). The SDK's
    client checks every answer against it, schema first, and a schema of `required` names checks in a fraction of
    the time one of typed `properties` takes."""
    return {"type": "object", "required": schema.get("required", [])}


def compact_input(node: Any) -> Any:
    """A request model's input schema without what tells an agent nothing: titles, null defaults, and
    `anyOf [X, null]` written as one type list."""
    if isinstance(node, list):
        return [compact_input(item) for item in node]
    if not isinstance(node, dict):
        return node
    branches = node.get("anyOf")
    if branches and len(branches) == 2 and {"type": "null"} in branches:
        other = next(branch for branch in branches if branch != {"type": "null"})
        if isinstance(other.get("type"), str):
            node = {**{k: v for k, v in node.items() if k != "anyOf"}, **other, "type": [other["type"], "null"]}
    return {key: {name: compact_input(field) for name, field in value.items()} if key == "properties"
            else compact_input(value)
            for key, value in node.items() if key != "title" and not (key == "default" and value is None)}


# The fields every answer of the other tools has, outlined as the methods' are (_outline).
EXTRA_OUTPUTS: dict[str, tuple[str, ...]] = {
    "get_study": ("study", "capped", "as_of_exact", "withheld"),
    "count_studies": ("total", "query", "nct_ids"),
    "field_values": ("fields",),
    "field_definitions": ("fields",),
    "get_results": ("studies",),
    "find_eligible": ("funnel", "studies", "more"),
}


@cache
def _tool_schema(name: str) -> dict[str, Any]:
    """A method's input schema with the tools' own list sizes as defaults (AGENT_DEFAULTS)."""
    schema = _method_schema(name)
    for argument, default in AGENT_DEFAULTS.get(name, {}).items():
        schema = {**schema, "properties": {**schema["properties"],
                                           argument: {**schema["properties"][argument], "default": default}}}
    return schema


# What a server pinned to a cutoff (`--as-of`) does not offer: its tools answer as of the pin, nothing else.
CUTOFF_ARGUMENTS = ("date_before", "holdout")


def _pinned(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "properties": {k: v for k, v in schema["properties"].items() if k not in CUTOFF_ARGUMENTS}}


def tool_list(pinned: bool = False) -> list[types.Tool]:
    """The tools; pinned: a server pinned to a cutoff, whose tools take no cutoff of their own."""
    described = [(method.name, method.help, _tool_schema(method.name))
                 for method in METHODS.values() if method.kind != "statistic"]
    described.append((STATISTICS_TOOL, _statistics_description(), _statistics_schema()))
    described += [(name, description, schema) for name, (description, schema) in EXTRA_TOOLS.items()]
    return [types.Tool(name=name, title=TITLES[name], description=description,
                       inputSchema=_pinned(schema) if pinned else schema,
                       outputSchema=output_schema(name), annotations=READ_ONLY)
            for name, description, schema in described]


# ---- running a tool ----------------------------------------------------------------------------------------
# An answer's budget in characters (of its JSON), at default arguments: an agent pays for every one.
ANSWER_BUDGET = 25_000
# Tools' list sizes when the caller gives none: smaller than the methods' own defaults (their contracts' sizes for
# programs), so that an answer fits the budget. The caller can ask for more, up to each argument's maximum.
AGENT_DEFAULTS: dict[str, dict[str, int]] = {
    "search_trials": {"max_results": 20}, "get_terminated": {"max_results": 20}, "get_landscape": {"top_n": 10},
    "search": {"page_size": 10}}
# The arguments by which a caller asks for a size of its own: then the answer is what was asked, unbudgeted.
SIZE_ARGUMENTS = ("max_results", "top_n", "page_size", "max_list_items")
# Lists the budget never cuts: a page of a paginated answer (its cursor goes on after the page's last item).
PAGED_LISTS = {"search": "items"}

_JSON = msgspec.json.Encoder()


def json_text(answer: Any) -> str:
    """An answer's JSON as a tool's reply carries it (compact, UTF-8 rather than escapes) and the budget counts it:
    msgspec writes a record's in a fifth of the time json.dumps takes."""
    return _JSON.encode(answer).decode()


def run_tool(mirror: Mirror, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool's structured answer (always a JSON object), within ANSWER_BUDGET unless the caller asked for a
    size; CtmirrorError for a bad call."""
    return run_tool_text(mirror, name, arguments)[0]


def run_tool_text(mirror: Mirror, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """run_tool's answer and its JSON text, written once: the budget measures the text the reply carries."""
    if not isinstance(arguments, dict):
        raise InvalidArgument("arguments must be an object")
    if mirror.as_of is not None and not mirror.frozen:
        given = [k for k in CUTOFF_ARGUMENTS if k in arguments and str(arguments[k]) != mirror.as_of.isoformat()]
        if given:
            raise InvalidArgument(f"{name}: this server answers as of {mirror.as_of} and takes no {given[0]}",
                                  invalid_input=arguments[given[0]],
                                  recovery_hint=f"Call it without {given[0]}: every answer is as of {mirror.as_of}.")
    answer = _answer(mirror, name, {**AGENT_DEFAULTS.get(name, {}), **arguments})
    if any(size in arguments for size in SIZE_ARGUMENTS):
        return answer, json_text(answer)
    return _budgeted(answer, ANSWER_BUDGET, keep=PAGED_LISTS.get(name))


def within_budget(answer: dict[str, Any], budget: int, *, keep: str | None = None,
                  note: bool = True) -> dict[str, Any]:
    """The answer with its largest lists cut until its JSON is at most `budget` characters: the lists of one path
    (every study's sites: studies[].locations) are cut together, to as many items each as the excess leaves, the
    path holding the most characters first (or the lists inside its items, when they hold most of them).
    `capped` says what was cut (path, items before and after, each list's most) and `budget_note` how to get more.
    `keep`: a top-level list never cut; note: False for a part of an answer (the note is the whole answer's)."""
    return _budgeted(answer, budget, keep=keep, note=note)[0]


def _budgeted(answer: dict[str, Any], budget: int, *, keep: str | None = None,
              note: bool = True) -> tuple[dict[str, Any], str]:
    """within_budget's answer, and its JSON text."""
    text = json_text(answer)
    if len(text) <= budget:
        return answer, text
    answer = json.loads(text)  # a copy to cut
    room = budget - min(1_500, budget // 4) if note else budget  # for the notes below
    cut: dict[str, dict[str, Any]] = {}
    while (size := len(json_text(answer))) > room:
        groups: dict[str, list[tuple[Any, Any, list]]] = {}
        _list_groups(answer, "", groups)
        sizes = {path: sum(len(json_text(items)) for *_, items in lists) for path, lists in groups.items()
                 if path != keep and any(len(items) >= 2 for *_, items in lists)}
        if not sizes:
            break
        chosen = max(sizes, key=sizes.__getitem__)
        for inner in sorted(sizes, key=len, reverse=True):  # the lists inside its items, if they hold most of it
            if inner.startswith(chosen + "[]") and sizes[inner] >= sizes[chosen] / 2:
                chosen = inner
                break
        lists = groups[chosen]
        total = sum(len(items) for *_, items in lists)
        drop = int((size - room) / (sizes[chosen] / total)) + 1
        longest = max(len(items) for *_, items in lists)
        most = longest - 1
        while most > 1 and total - sum(min(len(items), most) for *_, items in lists) < drop:
            most -= 1
        for parent, key, items in lists:
            parent[key] = items[:most]
        record = cut.setdefault(chosen, {"path": chosen, "total": total})
        record.update(kept=sum(len(parent[key]) for parent, key, _ in lists), each_at_most=most)
    answer["capped"] = [*answer.get("capped", []), *cut.values()]
    if note:
        answer["budget_note"] = (f"cut to about {budget:,} characters: ask for fewer or more items (max_results, "
                                 "top_n, page_size, max_list_items, fewer nct_ids), or one study's record with "
                                 "get_study")
    return answer, json_text(answer)


def _list_groups(node: Any, path: str, groups: dict[str, list[tuple[Any, Any, list]]]) -> None:
    """Every list in node by its path (the items of a list named with []: studies[].locations), with its parent and
    key there."""
    if isinstance(node, dict):
        for key, child in node.items():
            child_path = f"{path}.{key}" if path else key
            if isinstance(child, list):
                groups.setdefault(child_path, []).append((node, key, child))
            _list_groups(child, child_path, groups)
    elif isinstance(node, list):
        for child in node:
            _list_groups(child, f"{path}[]", groups)


def _results(items: list[Any], answer: list[Any]) -> dict[str, Any]:
    """A list answer as structured content, with how many studies it left out if it is an exact-only one."""
    left_out = left_out_of(answer)
    return {"results": items} if left_out is None else {"results": items, "left_out": left_out}


def _answer(mirror: Mirror, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == STATISTICS_TOOL:
        if isinstance(arguments.get("statistic"), str):  # by_phase, or stats_by_phase
            arguments = {**arguments, "statistic": arguments["statistic"].removeprefix("stats_")}
        check_json_types(name, _statistics_schema(), arguments)
        statistic = STATISTIC_CHOICES.get(arguments.get("statistic"))
        if statistic not in STATISTIC_NAMES:
            raise InvalidArgument(f"statistics: statistic must be one of {', '.join(STATISTIC_CHOICES)}",
                                  invalid_input=arguments.get("statistic"),
                                  recovery_hint="Name the statistic you want.")
        rows = mirror.call(statistic, **{k: v for k, v in arguments.items() if k != "statistic"})
        return _results(json.loads(json.dumps(rows, default=str)), rows)
    if name in METHODS and METHODS[name].kind != "statistic":
        check_json_types(name, _method_schema(name), arguments)
        if name == "search" and arguments.get("essie") is not None:
            return _essie_search(mirror, arguments)
        answer = mirror.call(name, **{k: v for k, v in arguments.items() if k != "essie"})
        if answer is None:
            raise NotFound(f"no trial {arguments.get('nct_id')!r}" + _at(mirror), invalid_input=arguments.get("nct_id"))
        if isinstance(answer, list):
            return _results([a.model_dump(mode="json") if hasattr(a, "model_dump") else a for a in answer], answer)
        return answer.model_dump(mode="json")
    if name not in EXTRA_TOOLS:
        raise NotFound(f"no tool {name!r}", hint="list the tools (tools/list)")
    _check_arguments(name, arguments)
    check_json_types(name, EXTRA_TOOLS[name][1], arguments)
    try:
        return TOOLS[name](mirror, arguments)
    except v2.V2Error as exc:
        if exc.status == 404:
            raise NotFound(str(exc)) from None
        raise InvalidArgument(str(exc)) from None


def _essie_search(mirror: Mirror, arguments: dict[str, Any]) -> dict[str, Any]:
    """search with an Essie expression: the trials it finds at the call's cutoff become the search's list of trials
    (with any nct_ids given, those of them it finds), searched with the other arguments as usual."""
    request = {k: v for k, v in arguments.items() if k != "essie"}
    cutoff = arguments_.cutoff(request.get("date_before")) or mirror.as_of
    as_of = mirror.as_of if request.get("holdout") == "first_posted" else cutoff
    try:
        found, total = v2.matching_nct_ids(mirror, {"query.term": arguments["essie"]}, as_of, ESSIE_TRIALS_MAX)
    except v2.V2Error as exc:
        raise InvalidArgument(f"search: essie: {exc}", invalid_input=arguments["essie"]) from None
    if total > ESSIE_TRIALS_MAX:
        raise InvalidArgument(f"search: essie finds {total:,} studies, more than the {ESSIE_TRIALS_MAX:,} it can list",
                              invalid_input=arguments["essie"],
                              recovery_hint="Narrow it, or give the condition or intervention as their own arguments.")
    wanted = set(arguments_.nct_ids(request["nct_ids"])) if request.get("nct_ids") else None
    ids = [nct_id for nct_id in found if wanted is None or nct_id in wanted]
    if not ids:
        size = request.get("page_size", AGENT_DEFAULTS["search"]["page_size"])
        return {"items": [], "pagination": {"cursor": None, "total_count": 0, "page_size": size}}
    return mirror.call("search", **{**request, "nct_ids": ids}).model_dump(mode="json")


_JSON_TYPES = {"boolean": "true or false", "integer": "a whole number", "number": "a number", "string": "a string",
               "array": "a list", "object": "an object", "null": "null"}


def _type_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """What is wrong with a JSON value for a schema's types, enumerations and bounds, or None. Strict: "false"
    is not a boolean, true is not a number."""
    if "anyOf" in schema:
        problems = [_type_problem(value, branch) for branch in schema["anyOf"]]
        return None if any(p is None for p in problems) else next(p for p in problems if p)
    kinds = schema.get("type")
    if isinstance(kinds, list):  # ["string", "null"]: null, or the other type's rules
        return None if value is None else _type_problem(value, {**schema, "type": kinds[0]})
    kind = kinds
    fits = {"boolean": type(value) is bool, "integer": type(value) is int,
            "number": type(value) in (int, float), "string": isinstance(value, str), "array": isinstance(value, list),
            "object": isinstance(value, dict), "null": value is None}.get(kind, True)
    if not fits:
        return f"must be {_JSON_TYPES[kind]}, got {json.dumps(value)[:60]}"
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {', '.join(map(str, schema['enum']))}, got {json.dumps(value)[:60]}"
    if kind in ("integer", "number") and not (schema.get("minimum", value) <= value <= schema.get("maximum", value)):
        return f"must be from {schema.get('minimum', '-∞')} to {schema.get('maximum', '∞')}, got {value}"
    if kind == "array":
        for item in value:
            problem = _type_problem(item, schema.get("items", {}))
            if problem:
                return f"holds an item that {problem}"
    return None


def check_json_types(name: str, schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Each argument against the tool's input schema, before any model coerces it."""
    for key, value in arguments.items():
        rule = schema.get("properties", {}).get(key)
        problem = _type_problem(value, rule) if rule is not None else None
        if problem:
            raise InvalidArgument(f"{name}: {key} {problem}", invalid_input=json.dumps(value)[:200],
                                  recovery_hint=f"Send {key} as the tool's input schema types it.")


def _check_arguments(name: str, arguments: dict[str, Any]) -> None:
    schema = EXTRA_TOOLS[name][1]
    unknown = sorted(set(arguments) - set(schema["properties"]))
    if unknown:
        raise InvalidArgument(f"{name}: unknown argument {unknown[0]!r}; it takes {', '.join(schema['properties'])}",
                              invalid_input=unknown[0])
    for required in schema.get("required", []):
        if arguments.get(required) in (None, "", []):
            raise InvalidArgument(f"{name}: {required} is required", invalid_input=None)


def _at(mirror: Mirror) -> str:
    return f" as of {mirror.as_of}" if mirror.as_of else ""


def _get_study(mirror: Mirror, arguments: dict[str, Any]) -> dict[str, Any]:
    cap = arguments.get("max_list_items", DEFAULT_LIST_CAP)
    if not isinstance(cap, int) or not 1 <= cap <= 1000:
        raise InvalidArgument("max_list_items must be a whole number from 1 to 1000", invalid_input=cap)
    # one ID format everywhere: NCT:05048797 (the contract's) as get_trial takes it
    shown_as: dict[str, Any] = {}
    _, record = v2.study(mirror, arguments_.nct_id(arguments["nct_id"]), {}, mirror.as_of, shown_as)
    if arguments.get("sections"):
        record = _sections(record, arguments["sections"])
    if arguments.get("location"):
        record = _sites_near(record, arguments["location"])
    capped: list[dict[str, Any]] = []
    return {"study": _capped(record, cap, "", capped), "capped": capped, **shown_as}


def _sections(record: dict[str, Any], sections: list[str]) -> dict[str, Any]:
    """The record with the identification module and the sections asked for alone (STUDY_SECTIONS)."""
    chosen: dict[str, Any] = {"protocolSection": {
        "identificationModule": record.get("protocolSection", {}).get("identificationModule", {})}}
    for section in sections:
        *parents, key = STUDY_SECTIONS[section]
        source, target = record, chosen
        for parent in parents:
            source, target = source.get(parent, {}), target.setdefault(parent, {})
        if key in source:
            target[key] = source[key]
    if "results" in sections:
        chosen["hasResults"] = record.get("hasResults", False)
    return chosen


def study_resource(record: dict[str, Any]) -> dict[str, Any]:
    """A record as the study resource gives it: lists cut to DEFAULT_LIST_CAP items, then within the answers'
    budget; `capped` (when anything was cut) says what and how long it was (get_study gives more on request)."""
    capped: list[dict[str, Any]] = []
    shown = _capped(record, DEFAULT_LIST_CAP, "", capped)
    if capped:
        shown["capped"] = capped
    return within_budget(shown, ANSWER_BUDGET)


def _capped(node: Any, cap: int, path: str, capped: list[dict[str, Any]]) -> Any:
    """The node (a record, or part of one, read for this answer alone) with every list cut to `cap` items, in
    place; each cut noted in `capped` with its path (a.b[2].c). The paths of the lists walked are made only
    where one is cut: a record's few hundred nodes walked cost a third of a get_study with them."""
    _cut_lists(node, cap, (path,) if path else (), capped)
    return node


def _cut_lists(node: Any, cap: int, parts: tuple[str | int, ...], capped: list[dict[str, Any]]) -> None:
    if isinstance(node, list):
        if len(node) > cap:
            capped.append({"path": _path_text(parts), "total": len(node), "kept": cap})
            del node[cap:]
        for i, item in enumerate(node):
            if isinstance(item, (dict, list)):
                _cut_lists(item, cap, (*parts, i), capped)
    elif isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                _cut_lists(value, cap, (*parts, key), capped)


def _path_text(parts: tuple[str | int, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else (f".{part}" if n else part)
                   for n, part in enumerate(parts))


def _count(mirror: Mirror, arguments: dict[str, Any]) -> dict[str, Any]:
    listed = arguments.get("list", 0)
    if not isinstance(listed, int) or isinstance(listed, bool) or not 0 <= listed <= 1000:
        raise InvalidArgument("count_studies: list must be a whole number from 0 to 1000", invalid_input=listed)
    query = {k: v for k, v in arguments.items() if k != "list"}
    params = {k: str(v) for k, v in query.items()}
    page, _ = v2.studies(mirror, {**params, "countTotal": "true", "pageSize": str(max(1, listed)), "fields": "NCTId"},
                         mirror.as_of)
    nct_ids = [s["protocolSection"]["identificationModule"]["nctId"] for s in page["studies"]][:listed]
    return {"total": page["totalCount"], "query": query, "nct_ids": nct_ids}


def _field_values(mirror: Mirror, arguments: dict[str, Any]) -> dict[str, Any]:
    fields = arguments["fields"]
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise InvalidArgument("fields must be a list of field names", invalid_input=fields)
    return {"fields": field_stats.field_values(mirror, fields)}


def _field_definitions(mirror: Mirror, arguments: dict[str, Any]) -> dict[str, Any]:
    query, wanted = (arguments.get("query") or "").lower().split(), (arguments.get("path") or "").strip(".")
    found: list[dict[str, Any]] = []

    def describe(node: dict[str, Any], path: str) -> dict[str, Any]:
        return {"path": path, "piece": node.get("piece"), "type": node.get("type"),
                "source_type": node.get("sourceType"), "title": node.get("title"),
                "description": (node.get("description") or "")[:300] or None,
                "children": len(node.get("children", []))}

    def walk(node: dict[str, Any], parent: str) -> None:
        path = f"{parent}.{node['name']}" if parent else node["name"]
        if wanted and path.lower() == wanted.lower():
            found.extend(describe(child, f"{path}.{child['name']}") for child in node.get("children", []))
        elif not wanted and query:
            text = " ".join(str(node.get(k) or "") for k in ("name", "piece", "title", "description")).lower()
            if all(word in text for word in query):
                found.append(describe(node, path))
        for child in node.get("children", []):
            walk(child, path)

    if not query and not wanted:
        return {"fields": [describe(node, node["name"]) for node in field_tree()]}
    for node in field_tree():
        walk(node, "")
    if wanted and not found and not any(wanted.lower() == n["name"].lower() for n in field_tree()):
        raise InvalidArgument(f"field_definitions: no field at {wanted!r}", invalid_input=wanted,
                              recovery_hint="call field_definitions with query words to find its path")
    return {"fields": found[:50], "more": max(0, len(found) - 50)}


RESULT_PARTS = ("participantFlowModule", "baselineCharacteristicsModule", "outcomeMeasuresModule",
                "adverseEventsModule")


def _get_results(mirror: Mirror, arguments: dict[str, Any]) -> dict[str, Any]:
    ids = arguments["nct_ids"]
    if not isinstance(ids, list) or not 1 <= len(ids) <= MAX_RESULTS_STUDIES:
        raise InvalidArgument(f"nct_ids must list 1 to {MAX_RESULTS_STUDIES} NCT IDs", invalid_input=ids)
    studies = []
    for nct_id in ids:
        try:
            canonical, record = v2.study(mirror, arguments_.nct_id(nct_id), {}, mirror.as_of)
        except (v2.V2Error, InvalidArgument) as exc:
            studies.append({"nct_id": str(nct_id), "error": str(exc)})
            continue
        capped: list[dict[str, Any]] = []
        section = record.get("resultsSection") or {}
        found = {"nct_id": canonical, "has_results": bool(record.get("hasResults")),
                 **{part: _capped(section[part], DEFAULT_LIST_CAP, part, capped)
                    for part in RESULT_PARTS if part in section},
                 "capped": capped}
        # each study its share of the answer's budget, so that every one asked for is there
        studies.append(within_budget(found, ANSWER_BUDGET // len(ids), note=False))
    return {"studies": studies}


def _find_eligible(mirror: Mirror, arguments: dict[str, Any]) -> dict[str, Any]:
    conditions = arguments["conditions"]
    if not isinstance(conditions, list) or not all(isinstance(c, str) and c.strip() for c in conditions):
        raise InvalidArgument("conditions must be a list of condition names", invalid_input=conditions)
    limit = arguments.get("max_results", 20)
    if not isinstance(limit, int) or not 1 <= limit <= 200:
        raise InvalidArgument("max_results must be a whole number from 1 to 200", invalid_input=limit)
    # each condition as its words, as the live API matches an unquoted query.cond (not a phrase): Essie's own
    # characters taken out, so a name is never read as an expression
    words = [re.sub(r'["()\[\]^*]|\b(AND|OR|NOT)\b', " ", c).strip() for c in conditions]
    stages: list[tuple[str, dict[str, str]]] = [
        ("conditions", {"query.cond": " OR ".join(f"({w})" for w in words if w) or '""'})]
    terms: list[str] = []
    statuses = arguments.get("statuses", ["RECRUITING"])
    if statuses:  # the statuses a patient could join in (NOT_YET_RECRUITING, ENROLLING_BY_INVITATION, ...)
        stages.append(("status", {"filter.overallStatus": ",".join(arguments_.any_of(
            "statuses", statuses, arguments_.STATUSES))}))
    phases = arguments.get("phases")
    if phases:
        if not isinstance(phases, list) or not set(phases) <= set(PHASES):
            raise InvalidArgument(f"phases must be a list of {', '.join(PHASES)}", invalid_input=phases)
        terms.append("AREA[Phase](" + " OR ".join(phases) + ")")
        stages.append(("phases", {"query.term": " AND ".join(terms)}))
    age = arguments.get("age_years")
    if age is not None:
        if not isinstance(age, (int, float)) or not 0 <= age <= 130:
            raise InvalidArgument("age_years must be a number from 0 to 130", invalid_input=age)
        terms.append(f"(AREA[MinimumAge]RANGE[MIN, {age:g} years] OR AREA[MinimumAge]MISSING) AND "
                     f"(AREA[MaximumAge]RANGE[{age:g} years, MAX] OR AREA[MaximumAge]MISSING)")
        stages.append(("age", {"query.term": " AND ".join(terms)}))
    sex = arguments.get("sex")
    if sex is not None:
        if sex not in ("FEMALE", "MALE"):
            raise InvalidArgument("sex must be FEMALE or MALE", invalid_input=sex)
        stages.append(("sex", {"aggFilters": f"sex:{sex[0].lower()}"}))
    if arguments.get("healthy_volunteer"):
        terms.append("AREA[HealthyVolunteers]TRUE")
        stages.append(("healthy volunteers accepted", {"query.term": " AND ".join(terms)}))
    if arguments.get("location"):
        stages.append(("location", {"query.locn": str(arguments["location"])}))
    params: dict[str, str] = {}
    funnel = []
    for stage, added in stages:
        params.update(added)
        page, _ = v2.studies(mirror, {**params, "countTotal": "true", "pageSize": "1", "fields": "NCTId"},
                             mirror.as_of)
        funnel.append({"stage": stage, "studies": page["totalCount"]})
    page, _ = v2.studies(mirror, {**params, "pageSize": str(limit), "fields": ",".join(ELIGIBLE_FIELDS)},
                         mirror.as_of)
    studies = page["studies"]
    if arguments.get("location"):
        studies = [_sites_near(study, str(arguments["location"])) for study in studies]
    return {"funnel": funnel, "studies": studies, "more": "nextPageToken" in page}


def _sites_near(study: dict[str, Any], location: str) -> dict[str, Any]:
    """A study with its sites in the asked location alone (each comma-separated part of it in one site's facility,
    city, state, zip or country, as query.locn matches them); sitesElsewhere counts the others."""
    sites = study.get("protocolSection", {}).get("contactsLocationsModule", {}).get("locations")
    if not sites:
        return study
    parts = [search_norm(part).strip() for part in location.split(",") if search_norm(part).strip()]

    def near(site: dict[str, Any]) -> bool:  # search_norm's text is padded with a space each side
        text = search_norm(" ".join(str(site.get(k) or "") for k in ("facility", "city", "state", "zip", "country")))
        return all(f" {part} " in text for part in parts)

    kept = [site for site in sites if near(site)]
    study["protocolSection"]["contactsLocationsModule"]["locations"] = kept
    study["sitesElsewhere"] = len(sites) - len(kept)
    return study


ELIGIBLE_FIELDS = ("NCTId", "BriefTitle", "OverallStatus", "Condition", "Phase", "MinimumAge", "MaximumAge", "Sex",
                   "HealthyVolunteers", "LocationFacility", "LocationCity", "LocationCountry")
TOOLS = {"get_study": _get_study, "count_studies": _count, "field_values": _field_values,
         "field_definitions": _field_definitions, "get_results": _get_results, "find_eligible": _find_eligible}


# ---- the server ----------------------------------------------------------------------------------------------
def instructions(pool: MirrorPool) -> str:
    as_of = pool.as_of
    when = (f"You live on {as_of.isoformat()}: every tool answers as ClinicalTrials.gov stood that day, and no study "
            "first posted later exists for you. Where the warehouse holds a study's version of that day, you see it "
            "exactly (as_of_exact true). Where it does not, you see a reconstruction from its oldest later version "
            "(as_of_exact false; reconstructed_from: that version's date): its status is derived for that day, and "
            "what was recorded only later is withheld, never relabelled, and named in `withheld` (an actual start "
            "or completion after your date, an enrollment reached later, stop reasons, results, later documents); "
            "its free text (title, conditions, sponsor names) is the later version's and may reflect what happened "
            "after your date."
            + (" This server shows no reconstruction: only the studies whose version of that day is held; an "
               "answer's left_out counts the studies it left out for that reason."
               if pool.exact_only else " A server started with --exact-only shows no reconstruction.")
            if as_of else "Tools answer from the warehouse's current state of the registry; methods take date_before "
                          "to answer as of a past date.")
    return ("ctmirror: an offline mirror of ClinicalTrials.gov. " + when + " Start with get_landscape or "
            "search_trials for a drug and condition; get_trial or get_study for one NCT ID; count_studies and "
            "field_values for numbers; find_eligible for a patient.")


def build_server(pool: MirrorPool) -> Server:
    """The MCP server, answering on `pool`'s readers (`ctmirror serve` shares its own)."""
    server = Server("ctmirror", version=__version__, instructions=instructions(pool))

    def in_thread(work):
        def run():
            with pool.mirror() as mirror:
                return work(mirror)
        return anyio.to_thread.run_sync(run)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return tool_list(pinned=pool.as_of is not None and not pool.frozen)

    @server.call_tool(validate_input=False)  # the registry validates, and says what is wrong with a typed code
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            answer, text = await in_thread(lambda mirror: run_tool_text(mirror, name, arguments or {}))
        except CtmirrorError as exc:
            envelope = exc.envelope()
            return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(envelope))],
                                        structuredContent=envelope, isError=True)
        except Exception as exc:  # noqa: BLE001 - an agent gets a typed error, never a traceback
            envelope = CtmirrorError(f"the tool failed: {type(exc).__name__}").envelope()
            return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(envelope))],
                                        structuredContent=envelope, isError=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structuredContent=answer)

    @server.list_resource_templates()
    async def templates() -> list[types.ResourceTemplate]:
        return [types.ResourceTemplate(uriTemplate="ctgov://study/{nctId}", name="study",
                                       description="A study's record (the registry's JSON) as of the server's cutoff",
                                       mimeType="application/json")]

    @server.list_resources()
    async def resources() -> list[types.Resource]:
        return []

    @server.read_resource()
    async def read_resource(uri) -> str:
        found = re.fullmatch(r"ctgov://study/([A-Za-z0-9]+)", str(uri))
        if not found:
            raise ValueError(f"unknown resource {uri}: ctgov://study/NCT... is the one this server has")

        def read(mirror: Mirror) -> str:
            try:
                return json.dumps(study_resource(v2.study(mirror, found.group(1), {}, mirror.as_of)[1]))
            except v2.V2Error as exc:
                raise ValueError(str(exc)) from None

        return await in_thread(read)

    @server.list_prompts()
    async def prompts() -> list[types.Prompt]:
        return [types.Prompt(name="landscape_analysis", description="A competitive landscape of a condition",
                             arguments=[types.PromptArgument(name="condition", required=True),
                                        types.PromptArgument(name="date_before", required=False,
                                                             description="YYYY-MM-DD: as the registry stood then")])]

    @server.get_prompt()
    async def prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        if name != "landscape_analysis":
            raise ValueError(f"no prompt {name!r}")
        condition = (arguments or {}).get("condition")
        if not condition:
            raise ValueError("landscape_analysis needs a condition")
        when = (arguments or {}).get("date_before")
        dated = f' with date_before="{when}"' if when else ""
        text = (f"Analyse the clinical-trial landscape of {condition}{dated}. Call get_landscape for the competitors "
                "and phases, statistics (stats_by_phase, stats_by_status) for the shape, get_terminated for what "
                f"failed and why, and detect_whitespace for promising drugs the competitors test but nobody tests in "
                f"{condition}. Cite NCT IDs; say how many trials each figure rests on.")
        return types.GetPromptResult(description=f"landscape of {condition}", messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])

    return server


def stdio_pool(root: Path, *, as_of: date | None = None, exact_only: bool = False) -> MirrorPool:
    """The readers of `ctmirror mcp`: its one client, an agent, mostly waits for each answer before its next call,
    so each call runs on every core (CTMIRROR_THREADS bounds them), where `ctmirror serve` gives each of its
    concurrent requests one."""
    return MirrorPool(root, as_of=as_of, exact_only=exact_only, threads=None)


def run_stdio(root: Path, *, as_of: date | None = None, exact_only: bool = False) -> None:
    """`ctmirror mcp`: the server on stdin/stdout until the client closes it."""
    from mcp.server.stdio import stdio_server

    pool = stdio_pool(root, as_of=as_of, exact_only=exact_only)
    server = build_server(pool)
    freeze_startup_objects()

    async def main() -> None:
        async with stdio_server() as (read, write):
            messages, replies = anyio.create_memory_object_stream(0)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_unreadable, read, messages, write)
                await server.run(replies, write, server.create_initialization_options())
                tasks.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        pool.close()


async def answer_unreadable(incoming, forward, write) -> None:
    """Passes the transport's messages on to the server, and answers each request it could not read (text that is
    not valid Unicode, such as a lone surrogate, or a malformed message whose id a lenient reading finds) with a
    JSON-RPC error bearing its id: the SDK would only log it, and the client would wait for ever."""
    async with forward:
        async for item in incoming:
            if not isinstance(item, ValidationError):
                await forward.send(item)
                continue
            line = next((e.get("input") for e in item.errors() if isinstance(e.get("input"), str)), "")
            try:
                request = json.loads(line)
            except ValueError:
                request = None
            found = request.get("id") if isinstance(request, dict) else None
            if not isinstance(found, (str, int)) or isinstance(found, bool):
                await forward.send(item)  # no request to answer (the SDK logs it)
                continue
            message = ("the request is not a JSON-RPC message this server can read (text that is not valid Unicode, "
                       "such as a lone surrogate, or a malformed message): " + str(item.errors()[0]["msg"])[:200])
            error = types.JSONRPCError(jsonrpc="2.0", id=found,
                                       error=types.ErrorData(code=types.INVALID_PARAMS, message=message))
            await write.send(SessionMessage(types.JSONRPCMessage(error)))
