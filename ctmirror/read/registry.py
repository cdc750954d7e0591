"""Every method of the read side, declared once: its request (a pydantic model whose fields are validated by
ctmirror.read.arguments, so every surface refuses the same input with the same INVALID_INPUT), its answer's type, how it
runs, how it reads in a terminal, its help and an example call.

Every surface is a loop over METHODS: Mirror's methods and Mirror.call, Mirror.batch, the CLI's commands, and the
arguments tables the set-wise calls bind (sql/calls/args/). Adding a method is one declaration here, one SQL call
file and, for a set-wise one, its macro.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import cache
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WithJsonSchema

from ctmirror.core.errors import InvalidArgument
from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.words import query_norm, search_norm
from ctmirror.read import arguments as arg
from ctmirror.read import display
from ctmirror.read.models import (
    ConditionLandscape,
    PaginationEnvelope,
    TerminatedTrial,
    Trial,
    TrialDetails,
    TrialSearchCandidate,
    WhitespaceResult,
)

MAX_RESULTS = 10_000
HOLDOUTS = ("strict", "first_posted", "exact")


# ---- argument types: each validated by the rule of ctmirror.read.arguments, named by its field ----------------------
def _named(check: Callable[[str, Any], Any]) -> BeforeValidator:
    return BeforeValidator(lambda value, info: check(info.field_name, value))


def _bounded(low: int, high: int) -> BeforeValidator:
    return BeforeValidator(lambda value, info: arg.bounded(info.field_name, value, low, high))


def _limits(low: int, high: int) -> WithJsonSchema:
    """The bounds _bounded enforces, stated in the JSON schema (what MCP and HTTP clients read)."""
    return WithJsonSchema({"type": "integer", "minimum": low, "maximum": high})


def _holdout(value: object) -> str:
    if value not in HOLDOUTS:
        raise InvalidArgument(f"holdout must be one of: {', '.join(HOLDOUTS)}", invalid_input=value,
                              recovery_hint="use holdout='strict' (leakage-safe), 'exact' (no reconstructed "
                                            "study) or 'first_posted'")
    return value  # type: ignore[return-value]


Text = Annotated[str, _named(arg.text)]
OptionalText = Annotated[str | None, _named(arg.optional_text)]
Cutoff = Annotated[date | None, BeforeValidator(arg.cutoff)]
Holdout = Annotated[Literal["strict", "first_posted", "exact"], BeforeValidator(_holdout)]
NctId = Annotated[str, BeforeValidator(arg.nct_id)]


def _cli(flag: str | None = None, *, positional: bool = False) -> dict:
    """How the CLI takes a field: a positional argument, or an option (default: --field-name)."""
    return {"cli": "argument" if positional else (flag,)}


DATE_BEFORE = Field(None, description="Answer as the registry stood that day.",
                    json_schema_extra={"cli": ("--date-before", "--as-of")})
HOLDOUT = Field("strict", description="strict: nothing later; exact: no reconstructed study either; "
                "first_posted: as today, if posted by then.")


class Request(BaseModel):
    """The arguments of one call, validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# Request fields the Python API applies itself (which trials a cutoff shows, the page, the keys given): no column.
NOT_BOUND = frozenset({"holdout", "cursor", "page_size", "fields"})
# The DuckDB type a field's value is bound as, by the field's Python type (None left out of an optional one).
DUCKDB_TYPES: dict[Any, str] = {str: "VARCHAR", int: "INTEGER", date: "DATE", list[str]: "VARCHAR[]"}


@dataclass(frozen=True)
class BoundAs:
    """A field's metadata: the DuckDB type its value is bound as, where the Python API binds what it makes of the
    value instead of the value (search's `near`: the versions near the point)."""

    duckdb_type: str


@cache
def bound_columns(request: type[Request]) -> tuple[tuple[str, str], ...]:
    """(column, DuckDB type) of every field of a request but NOT_BOUND, in the request's order: the arguments
    table's columns its call query reads, named as the fields."""
    columns = []
    for name, info in request.model_fields.items():
        if name in NOT_BOUND:
            continue
        declared = next((m.duckdb_type for m in info.metadata if isinstance(m, BoundAs)), None)
        kinds = [kind for kind in get_args(info.annotation) if kind is not type(None)] \
            if get_origin(info.annotation) in (Union, UnionType) else [info.annotation]
        if declared is None and (len(kinds) != 1 or kinds[0] not in DUCKDB_TYPES):
            raise TypeError(f"{request.__name__}.{name}: no DuckDB type for {info.annotation}; declare BoundAs")
        columns.append((name, declared or DUCKDB_TYPES[kinds[0]]))
    return tuple(columns)


DRUG = Field(description='Drug name, brand or code (its other names count; "quoted": words kept together).',
             json_schema_extra=_cli(positional=True))
CONDITION = Field(description='Disease or condition (its synonyms count; "quoted": words kept together).',
                  json_schema_extra=_cli(positional=True))


def candidate_fields(value: object) -> list[str] | None:
    """search's `fields`: keys of TrialSearchCandidate, as a list or comma-separated."""
    return arg.any_of("fields", value, tuple(TrialSearchCandidate.model_fields), upper=False)


# search's filters, which the statistics and get_landscape take too
Statuses = Annotated[list[str] | None, BeforeValidator(arg.statuses)]
STATUS = Field(None, description="Statuses (RECRUITING, COMPLETED, ...); any matches.")
Phases = Annotated[list[str] | None, BeforeValidator(arg.phases)]
PHASE = Field(None, description="Phases (EARLY_PHASE1, PHASE1..PHASE4, NA); any matches.")
LOCATION = Field(None, description="A site's place: 'Boston, MA', 'Germany'.")
StudyType = Annotated[str | None, BeforeValidator(
    lambda v: None if v is None else arg.one_of("study_type", v, arg.STUDY_TYPES))]
STUDY_TYPE = Field(None, description="INTERVENTIONAL, OBSERVATIONAL, EXPANDED_ACCESS.")


class SearchTrialsRequest(Request):
    drug: Text = DRUG
    condition: Text = CONDITION
    date_before: Cutoff = DATE_BEFORE
    phase_filter: Annotated[str | None, BeforeValidator(arg.phase_filter)] = Field(
        None, description="'PHASE3' or '(PHASE2 OR PHASE3)'.", json_schema_extra=_cli("--phase"))
    max_results: Annotated[int, _bounded(1, MAX_RESULTS), _limits(1, MAX_RESULTS)] = Field(
        200, description="At most this many trials.")
    holdout: Holdout = HOLDOUT


class WhitespaceRequest(Request):
    drug: Text = DRUG
    condition: Text = CONDITION
    date_before: Cutoff = DATE_BEFORE
    holdout: Holdout = HOLDOUT


class LandscapeRequest(Request):
    condition: Text = Field(description="Disease or condition.", json_schema_extra=_cli(positional=True))
    date_before: Cutoff = DATE_BEFORE
    top_n: Annotated[int, _bounded(1, 1000), _limits(1, 1000)] = Field(50, description="Top N competitors.",
                                                     json_schema_extra=_cli("--top"))
    status: Statuses = STATUS
    phase: Phases = PHASE
    location: OptionalText = LOCATION
    holdout: Holdout = HOLDOUT


class TerminatedRequest(Request):
    query: Text = Field(description="A drug, a drug class or a condition.", json_schema_extra=_cli(positional=True))
    date_before: Cutoff = DATE_BEFORE
    max_results: Annotated[int, _bounded(1, MAX_RESULTS), _limits(1, MAX_RESULTS)] = Field(
        100, description="At most this many trials.")
    holdout: Holdout = HOLDOUT


class TrialRequest(Request):
    nct_id: NctId = Field(description="NCT identifier (NCT01234567 or NCT:01234567; an alias resolves).",
                          json_schema_extra=_cli(positional=True))


class SearchRequest(Request):
    query: OptionalText = Field(None, description="Free text, as query.term: each word in a title, condition, "
                                "drug, outcome or sponsor, or a concept it names (a brand: its generic); quoted, "
                                "a phrase.",
                                json_schema_extra=_cli(positional=True))
    condition: OptionalText = Field(None, description="Condition filter.")
    intervention: OptionalText = Field(None, description="Drug or treatment filter.")
    status: Statuses = STATUS
    location: OptionalText = LOCATION
    phase: Phases = PHASE
    eligibility_keywords: OptionalText = Field(None, description="Words in the eligibility criteria.",
                                               json_schema_extra=_cli("--eligibility"))
    min_age: Annotated[int | None, _named(arg.age_days)] = Field(
        None, description="An age in years the trial must admit.")
    max_age: Annotated[int | None, _named(arg.age_days)] = Field(
        None, description="An upper age in years the trial must admit.")
    sex: Annotated[str | None, BeforeValidator(lambda v: None if v is None else arg.one_of("sex", v, arg.SEXES))] \
        = Field(None, description="FEMALE or MALE (ALL: no filter).")
    study_type: StudyType = STUDY_TYPE
    nct_ids: Annotated[list[str] | None, BeforeValidator(arg.nct_ids)] = Field(
        None, description="Only these trials.")
    near: Annotated[str | None, BeforeValidator(arg.near), BoundAs("BIGINT[]")] = Field(
        None, description="A site within: '42.36,-71.06,50mi' (or km).")
    sort: Annotated[str | None, BeforeValidator(arg.search_sort)] = Field(
        None, description="StartDate, PrimaryCompletionDate, StudyFirstPostDate or EnrollmentCount, :asc or :desc "
                          "(else relevance).")
    fields: Annotated[list[str] | None, BeforeValidator(candidate_fields)] = Field(
        None, description="Keys of each trial to give (nct_id, title, ...).")
    date_before: Cutoff = DATE_BEFORE
    page_size: Annotated[int, _bounded(1, 200), _limits(1, 200)] = Field(50, description="Trials a page.")
    cursor: str | None = Field(None, description="pagination.cursor of the previous page, unchanged.")
    holdout: Holdout = HOLDOUT


class StatisticRequest(Request):
    condition: OptionalText = Field(None, description="Only trials for this condition.")
    intervention: OptionalText = Field(None, description="Only trials of this drug or treatment.")
    sponsor: OptionalText = Field(None, description="Only trials whose lead sponsor has these words.")
    status: Statuses = STATUS
    phase: Phases = PHASE
    location: OptionalText = LOCATION
    sponsor_class: Annotated[list[str] | None, BeforeValidator(arg.sponsor_classes)] = Field(
        None, description="Lead sponsor classes (INDUSTRY, NIH, OTHER, ...); any matches.")
    study_type: StudyType = STUDY_TYPE
    date_before: Cutoff = DATE_BEFORE
    holdout: Holdout = HOLDOUT


# ---- the methods ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Method:
    """One method. kind: "set-wise" (answered with the batch's other calls of it, CALLS_PER_QUERY to a query:
    ctmirror.read.answers), "search" (paged, call by call) or "statistic" (rows of sql/stats/<name>.sql, called by
    sql/calls/statistic.sql)."""

    name: str
    request: type[Request]
    answer: Any  # the answer's type
    summary: str  # a statistic's is read from its SQL file when first asked for (see `help`)
    kind: str
    render: Callable[[Any], str]
    example: dict[str, Any]
    command: str | None = None  # the CLI command (a statistic's is `ctmirror stats NAME`)
    # columns its call query reads besides the request's (bound_columns), as (column, DuckDB type): values of ours
    extra_columns: tuple[tuple[str, str], ...] = ()
    # set-wise: values its call query reads once for all the calls, as (column, DuckDB type, SQL expression of ours)
    once: tuple[tuple[str, str, str], ...] = ()
    # set-wise: how its rows become answers ("ranked_cards" from card_table, "one_row_each", "by_id")
    shape: str = ""
    card_table: str = ""
    model: Any = None  # set-wise: the pydantic model of one item of the answer
    # fields whose text its SQL matches as words: bound as their query_norm (ctmirror.core.words), so a call's
    # query does no Unicode work of its own; `texts`: fields matched as plain words, bound as their search_norm
    words: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()

    def bound(self, name: str, value: Any) -> Any:
        """A field's value as its call query takes it: query words normalised (see `words`)."""
        if value is None:
            return value
        return query_norm(value) if name in self.words else search_norm(value) if name in self.texts else value

    @property
    def columns(self) -> tuple[tuple[str, str], ...]:
        """The columns of its arguments table, as (column, DuckDB type): each request field its SQL reads, by the
        field's name (bound_columns), then the call's strict cutoff as_of and its extra_columns. A set-wise
        method's table holds a list per column, the calls' values in order; search's and a statistic's, one call's."""
        return (*bound_columns(self.request), ("as_of", "DATE"), *self.extra_columns)

    @property
    def help(self) -> str:
        return self.summary or statistic_header(self.name)[1]

    @property
    def scoped(self) -> bool:
        """Whether it takes a cutoff (date_before and holdout)."""
        return "holdout" in self.request.model_fields

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments, validated, as a dict of every field: InvalidArgument names the first wrong one."""
        try:
            return dict(self.request.model_validate(arguments))
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"]) or "arguments"
            if problem["type"] == "missing":
                message = f"{self.name}: {where} is required"
            elif problem["type"] == "extra_forbidden":
                message = (f"{self.name}: unknown argument {where!r}; it takes "
                           f"{', '.join(self.request.model_fields)}")
            else:
                message = f"{self.name}: {where}: {problem['msg']}"
            given = problem.get("input") if problem["type"] != "missing" else None
            raise InvalidArgument(message, invalid_input=given,
                                  recovery_hint=f"See `ctmirror {self.command or 'stats'} --help`.") from None

    def signature(self) -> inspect.Signature:
        """The Python signature of Mirror.<name>: the request's fields, in order, with their defaults."""
        parameters = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=inspect.Parameter.empty if info.is_required() else info.default,
                                        annotation=info.annotation)
                      for name, info in self.request.model_fields.items()]
        return inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *parameters],
                                 return_annotation=self.answer)


TRIAL_COLUMNS = ("nct_id", "phase", "overall_status", "sponsor", "enrollment", "start_date", "title")
STOPPED_COLUMNS = ("nct_id", "status", "stop_category", "phase", "drug_name", "termination_date", "why_stopped")

CONTRACT = (
    Method("search_trials", SearchTrialsRequest, list[Trial], "Trials for a drug in a condition, most relevant first.",
           "set-wise", display.trials(TRIAL_COLUMNS), {"drug": "semaglutide", "condition": "obesity"},
           command="search-trials", shape="ranked_cards", card_table="trial_card", model=Trial,
           words=("drug", "condition")),
    Method("detect_whitespace", WhitespaceRequest, WhitespaceResult,
           "Is this drug-condition pair untested? If so, with the drugs tested for the condition.",
           "set-wise", display.whitespace, {"drug": "tadalafil", "condition": "NASH"}, command="whitespace",
           shape="one_row_each", model=WhitespaceResult, words=("drug", "condition")),
    Method("get_landscape", LandscapeRequest, ConditionLandscape,
           "Who competes in a condition and how far along they are.", "set-wise", display.landscape,
           {"condition": "NASH", "top_n": 10}, command="landscape", shape="one_row_each", model=ConditionLandscape,
           words=("condition",),
           # the reference day of calls without a date_before, taken when the call is made (current_date in the
           # prepared query would make DuckDB plan it again at every execution)
           once=(("today", "DATE", "current_date"),)),
    Method("get_terminated", TerminatedRequest, list[TerminatedTrial],
           "Terminated, withdrawn and suspended trials, with why they stopped.", "set-wise",
           display.trials(STOPPED_COLUMNS), {"query": "erectile dysfunction"}, command="terminated",
           shape="ranked_cards", card_table="stopped_card", model=TerminatedTrial, words=("query",)),
    Method("get_trial", TrialRequest, Trial | None,
           "One trial by NCT ID (or an alias).", "set-wise",
           display.trial, {"nct_id": "NCT00711542"}, command="trial", shape="by_id", model=Trial),
    Method("get_trial_details", TrialRequest, TrialDetails | None,
           "One trial with eligibility, sites, keywords and MeSH terms.", "set-wise",
           display.trial, {"nct_id": "NCT00711542"}, command="details", shape="by_id", model=TrialDetails),
    Method("search", SearchRequest, PaginationEnvelope,
           "Search with filters: a page, and a cursor for the next.", "search",
           display.search_page, {"condition": "diabetes", "status": "RECRUITING", "page_size": 5}, command="search",
           # the page's place, from the cursor (calls/search_page.sql reads the given arguments)
           extra_columns=(("page_offset", "BIGINT"),),
           words=("query", "condition", "intervention"), texts=("eligibility_keywords",)),
)


@cache
def statistic_header(name: str) -> tuple[str, str]:
    """(signature, description) of a statistic: the leading comment of its sql/stats/ file, split at its first
    ': ' (the help text here, and docs/statistics.md)."""
    header = []
    for line in read_sql(f"stats/{name}.sql").splitlines():
        if not line.startswith("--"):
            break
        header.append(line[2:].strip())
    signature, _, description = " ".join(header).partition(": ")
    return signature, description


# The registry statistics (sql/stats/<name>.sql, each called by sql/calls/statistic.sql).
STATISTIC_NAMES = ("stats_by_phase", "stats_by_status", "stats_by_study_type", "stats_by_sex", "stats_by_age_group",
                   "stats_by_intervention_type", "stats_by_start_year", "stats_by_duration", "stats_by_country",
                   "stats_by_facility", "stats_by_sponsor", "stats_by_sponsor_class", "stats_enrollment",
                   "stats_completion", "stats_results_reporting", "stats_recruitment_funnel", "stats_top_conditions",
                   "stats_top_interventions", "stats_exactness")
STATISTICS = tuple(Method(name, StatisticRequest, list[dict[str, Any]], "", "statistic", display.rows,
                          {"condition": "asthma"}) for name in STATISTIC_NAMES)
# The one arguments table every statistic's call query reads (statistic_args), so that each is prepared once per
# connection and shape (ctmirror.read.answers.execute_shaped) instead of planned at every call.
STATISTIC_ARGUMENTS = Method("statistic", StatisticRequest, None, "", "statistic", display.rows, {})

METHODS: dict[str, Method] = {method.name: method for method in (*CONTRACT, *STATISTICS)}
