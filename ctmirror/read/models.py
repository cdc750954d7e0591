"""The contract's pydantic models (field names as the source design gives them), plus the few additions
ctmirror makes (marked). Sets are serialised sorted, so JSON output is the same in every process."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_serializer, model_serializer


class Intervention(BaseModel):
    intervention_type: str  # "Drug", "Biological", "Device", ... (the registry's display names)
    intervention_name: str
    description: str | None = None


class PrimaryOutcome(BaseModel):
    measure: str
    time_frame: str | None = None


class Trial(BaseModel):
    nct_id: str
    title: str
    brief_summary: str | None = None
    phase: str
    overall_status: str
    why_stopped: str | None = None
    conditions: list[str] = []
    interventions: list[Intervention] = []
    sponsor: str = ""
    collaborators: list[str] = []
    enrollment: int | None = None
    start_date: str | None = None
    completion_date: str | None = None
    study_type: str = "Interventional"
    primary_outcomes: list[PrimaryOutcome] = []
    results_posted: bool = False
    references: list[str] = []  # PMIDs
    # ctmirror additions
    phases: list[str] = []  # the raw enum list behind `phase`
    relevance: float | None = None  # the match score the order comes from (search_trials only)
    as_of_exact: bool | None = None  # false: reconstructed for a cutoff, not a version the registry published by then
    reconstructed_from: str | None = None  # a reconstruction's: the last-update date of the version it was made from
    # at a cutoff, the fields left out (empty, not relabelled) because the registry recorded them only later
    withheld: list[str] = []
    version: str | None = None  # the content hash of the study version the row came from


class Location(BaseModel):
    facility: str | None = None
    status: str | None = None
    city: str | None = None
    state: str | None = None
    zip: str | None = None
    country: str | None = None
    lat: float | None = None
    lon: float | None = None


class TrialDetails(Trial):
    """get_trial_details: the Trial plus eligibility, sites, keywords and MeSH terms."""

    eligibility_criteria: str | None = None
    minimum_age: str | None = None
    maximum_age: str | None = None
    sex: str | None = None
    healthy_volunteers: bool | None = None
    std_ages: list[str] = []
    locations: list[Location] = []
    keywords: list[str] = []
    condition_mesh_terms: list[str] = []
    condition_ancestor_terms: list[str] = []
    intervention_mesh_terms: list[str] = []


class ConditionDrug(BaseModel):
    """A drug being tested for the same condition (when whitespace exists)."""

    nct_id: str
    drug_name: str
    condition: str
    phase: str
    status: str
    as_of_exact: bool | None = None  # false: reconstructed for a cutoff, not a version the registry published by then
    reconstructed_from: str | None = None  # a reconstruction's: the last-update date of the version it was made from
    version: str | None = None  # the content hash of the study version the row came from


class LeftOut(BaseModel):
    """An answer that can say how many studies it left out (its last field, `left_out`): an exact-only answer at a
    cutoff (holdout="exact", or an exact-only mirror) shows no reconstruction, and counts the studies the strict
    answer to the same call shows reconstructed. Given only then: the JSON leaves it out otherwise."""

    @model_serializer(mode="wrap")
    def _without_empty_left_out(self, serialize: Any) -> dict[str, Any]:
        data = serialize(self)
        if data.get("left_out") is None:
            data.pop("left_out", None)
        return data


class ExactList(list):
    """A list answer (trials, a statistic's rows) with `left_out` as LeftOut's, when the answer is exact-only at
    a cutoff; otherwise None. Still a list: JSON, equality and iteration are the list's."""

    left_out: int | None = None

    def __init__(self, items: Any = (), left_out: int | None = None) -> None:
        super().__init__(items)
        self.left_out = left_out


def left_out_of(answer: Any) -> int | None:
    """How many studies an exact-only answer at a cutoff left out (a search page's pagination's, a LeftOut's or an
    ExactList's); None for any other answer."""
    pagination = getattr(answer, "pagination", None)
    return getattr(pagination if pagination is not None else answer, "left_out", None)


class WhitespaceResult(LeftOut):
    is_whitespace: bool
    exact_match_count: int
    drug_only_trials: int
    condition_only_trials: int
    condition_drugs: list[ConditionDrug] = []
    left_out: int | None = None


class CompetitorEntry(BaseModel):
    sponsor: str
    drug_name: str
    drug_type: str | None = None
    max_phase: str
    trial_count: int
    statuses: set[str]
    total_enrollment: int = 0
    most_recent_start: str | None = None
    as_of_exact: bool | None = None  # false when any of its trials was reconstructed for a cutoff

    @field_serializer("statuses")
    def _sorted_statuses(self, statuses: set[str]) -> list[str]:
        return sorted(statuses)


class RecentStart(BaseModel):
    nct_id: str
    sponsor: str
    drug: str | None = None
    phase: str
    start_date: str | None = None  # ctmirror addition
    as_of_exact: bool | None = None  # false: reconstructed for a cutoff, not a version the registry published by then
    reconstructed_from: str | None = None  # a reconstruction's: the last-update date of the version it was made from
    version: str | None = None  # the content hash of the study version the row came from


class ConditionLandscape(LeftOut):
    total_trial_count: int
    competitors: list[CompetitorEntry] = []
    phase_distribution: dict[str, int] = {}
    recent_starts: list[RecentStart] = []
    left_out: int | None = None


class TerminatedTrial(BaseModel):
    nct_id: str
    title: str
    drug_name: str | None = None
    condition: str | None = None
    phase: str | None = None
    why_stopped: str | None = None
    stop_category: str = "unknown"  # safety, efficacy, business, enrollment, other, unknown
    enrollment: int | None = None
    sponsor: str | None = None
    start_date: str | None = None
    termination_date: str | None = None
    references: list[str] = []
    # ctmirror additions
    status: str | None = None
    relevance: float | None = None
    as_of_exact: bool | None = None  # false: reconstructed for a cutoff, not a version the registry published by then
    reconstructed_from: str | None = None  # a reconstruction's: the last-update date of the version it was made from
    # at a cutoff, the fields left out (empty, not relabelled) because the registry recorded them only later
    withheld: list[str] = []
    version: str | None = None  # the content hash of the study version the row came from


class TrialSearchCandidate(BaseModel):
    """An item of the paginated search (contract 001), with the candidate fields of 002/003."""

    id: str  # "NCT:01234567"
    nct_id: str
    title: str
    brief_title: str | None = None
    brief_summary: str | None = None
    phase: str | None = None  # omitted from JSON when the trial has none
    phases: list[str] = []
    status: str | None = None
    conditions: list[str] = []
    interventions: list[str] = []
    sponsor: str | None = None
    enrollment: int | None = None
    start_date: str | None = None
    primary_completion_date: str | None = None
    relevance: float | None = None
    as_of_exact: bool | None = None  # false: reconstructed for a cutoff, not a version the registry published by then
    reconstructed_from: str | None = None  # a reconstruction's: the last-update date of the version it was made from
    # at a cutoff, the fields left out (empty, not relabelled) because the registry recorded them only later
    withheld: list[str] = []
    version: str | None = None  # the content hash of the study version the row came from


class Pagination(LeftOut):
    cursor: str | None = None
    total_count: int | None = None
    page_size: int
    left_out: int | None = None


class PaginationEnvelope(BaseModel):
    items: list[TrialSearchCandidate] = []
    pagination: Pagination
    fields: list[str] | None = Field(None, exclude=True)  # the keys of each item the caller chose (search's `fields`)

    @model_serializer(mode="wrap")
    def _chosen_fields(self, serialize: Any) -> dict[str, Any]:
        """With `fields`, each item holds those keys (and its id) alone, however the envelope is dumped."""
        data = serialize(self)
        if self.fields is not None:
            data["items"] = [{key: item[key] for key in ("id", *self.fields) if key in item} for item in data["items"]]
        return data

    def contract_json(self) -> dict[str, Any]:
        """As contract 001 shows it: a candidate without a phase has no `phase` key."""
        data = self.model_dump(mode="json")
        for item in data["items"]:
            if not item.get("phase"):
                item.pop("phase", None)
        return data


class ErrorBody(BaseModel):
    code: str
    message: str
    recovery_hint: str | None = None
    invalid_input: str | None = None


class ErrorEnvelope(BaseModel):
    success: bool = False
    error: ErrorBody = Field(...)
