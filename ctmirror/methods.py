"""The contract methods on a Mirror: validate arguments, run the macro through its call file in `sql/calls/`
with bound parameters, and return the contract's pydantic models."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import date
from typing import TYPE_CHECKING, Any

from ctmirror import answers
from ctmirror import arguments as arg
from ctmirror.core.errors import InvalidArgument
from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.warehouse import STATE_ID
from ctmirror.models import (
    ConditionLandscape,
    Pagination,
    PaginationEnvelope,
    TerminatedTrial,
    Trial,
    TrialDetails,
    TrialSearchCandidate,
    WhitespaceResult,
)

if TYPE_CHECKING:
    from ctmirror.mirror import Mirror

MAX_RESULTS = 10_000
STATS = ("stats_by_phase", "stats_by_status", "stats_by_study_type", "stats_by_sex", "stats_by_age_group",
         "stats_by_intervention_type", "stats_by_start_year", "stats_by_duration", "stats_by_country",
         "stats_by_facility", "stats_by_sponsor", "stats_by_sponsor_class", "stats_enrollment", "stats_completion",
         "stats_results_reporting", "stats_recruitment_funnel")
CURSOR_VERSION = 2
MAX_CURSOR_CHARACTERS = 1_000


HOLDOUTS = ("strict", "first_posted")


class Methods:
    """Mixed into Mirror; `self.rows(sql, params)` runs on the mirror's read-only connection.

    date_before and holdout: with holdout="strict" (the default) a method answers from the strict as-of
    snapshot at date_before (sql/asof/: only what the registry had published by then); with
    holdout="first_posted" it filters current data to trials first posted by date_before (the source design's
    rule, for parity with the live API). A mirror pinned with as_of= always answers as of its cutoff.
    """

    def _scope(self: Mirror, date_before: object, holdout: str) -> tuple[Mirror, date | None]:
        cutoff = arg.cutoff(date_before)
        if holdout not in HOLDOUTS:
            raise InvalidArgument(f"holdout must be one of: {', '.join(HOLDOUTS)}", invalid_input=holdout,
                                  recovery_hint="use holdout='strict' (leakage-safe) or 'first_posted'")
        if self.as_of is not None:
            if cutoff is not None and cutoff > self.as_of:
                raise InvalidArgument(f"date_before {cutoff} is after this mirror's cutoff {self.as_of}",
                                      invalid_input=str(cutoff), recovery_hint="use a date on or before the cutoff")
            return self, cutoff
        if cutoff is None or holdout == "first_posted":
            return self, cutoff
        return self.snapshot_at(cutoff), cutoff

    def _answer(self: Mirror, mirror: Mirror, method: str, call: dict[str, Any]) -> Any:
        """Runs one validated call on `mirror`, or, while Mirror.batch collects, records it to run set-wise
        with the batch's other calls of the same method on the same mirror."""
        if self._collecting is not None:
            self._collecting.append((mirror, method, call))
            return None
        return mirror.recovering(lambda: answers.RUNNERS[method](mirror, [call])[0])

    def search_trials(self: Mirror, drug: str, condition: str, date_before: date | str | None = None,
                      phase_filter: str | None = None, max_results: int = 200, holdout: str = "strict") -> list[Trial]:
        mirror, cutoff = self._scope(date_before, holdout)
        return self._answer(mirror, "search_trials", {
            "drug": arg.text("drug", drug), "condition": arg.text("condition", condition),
            "date_before": cutoff, "phase_filter": arg.phase_filter(phase_filter),
            "max_results": arg.bounded("max_results", max_results, 1, MAX_RESULTS)})

    def detect_whitespace(self: Mirror, drug: str, condition: str, date_before: date | str | None = None,
                          holdout: str = "strict") -> WhitespaceResult:
        mirror, cutoff = self._scope(date_before, holdout)
        return self._answer(mirror, "detect_whitespace", {
            "drug": arg.text("drug", drug), "condition": arg.text("condition", condition), "date_before": cutoff})

    def get_landscape(self: Mirror, condition: str, date_before: date | str | None = None,
                      top_n: int = 50, holdout: str = "strict") -> ConditionLandscape:
        mirror, cutoff = self._scope(date_before, holdout)
        return self._answer(mirror, "get_landscape", {
            "condition": arg.text("condition", condition), "date_before": cutoff,
            "top_n": arg.bounded("top_n", top_n, 1, 1000)})

    def get_terminated(self: Mirror, query: str, date_before: date | str | None = None,
                       max_results: int = 100, holdout: str = "strict") -> list[TerminatedTrial]:
        mirror, cutoff = self._scope(date_before, holdout)
        return self._answer(mirror, "get_terminated", {
            "query": arg.text("query", query), "date_before": cutoff,
            "max_results": arg.bounded("max_results", max_results, 1, MAX_RESULTS)})

    def get_trial(self: Mirror, nct_id: str) -> Trial | None:
        return self._answer(self, "get_trial", {"nct_id": arg.nct_id(nct_id)})

    def get_trial_details(self: Mirror, nct_id: str) -> TrialDetails | None:
        return self._answer(self, "get_trial_details", {"nct_id": arg.nct_id(nct_id)})

    def stats(self: Mirror, name: str, condition: str | None = None, intervention: str | None = None,
              sponsor: str | None = None, date_before: date | str | None = None,
              holdout: str = "strict") -> list[dict[str, Any]]:
        """One of the analytics (sql/views/stats_*.sql, listed in STATS) for the trials in scope, as rows."""
        if name not in STATS:
            raise InvalidArgument(f"unknown statistic {name!r}: one of {', '.join(STATS)}", invalid_input=name,
                                  recovery_hint="pick a name from the list")
        mirror, cutoff = self._scope(date_before, holdout)
        return mirror.rows(read_sql(f"calls/{name}.sql"), {
            "condition": arg.optional_text("condition", condition),
            "intervention": arg.optional_text("intervention", intervention),
            "sponsor": arg.optional_text("sponsor", sponsor), "date_before": cutoff})

    def search(self: Mirror, query: str | None = None, condition: str | None = None,
               intervention: str | None = None, status: str | list[str] | None = None,
               location: str | None = None, phase: str | None = None, eligibility_keywords: str | None = None,
               min_age: int | str | None = None, max_age: int | str | None = None, sex: str | None = None,
               study_type: str | None = None, date_before: date | str | None = None, page_size: int = 50,
               cursor: str | None = None, holdout: str = "strict") -> PaginationEnvelope:
        """The paginated search of contracts 001/002. All filters are ANDed. A cursor is pinned to the
        warehouse state its first page came from, so paging sees every match exactly once even if a sync
        publishes in between (STATE_EXPIRED if that state is no longer kept: start again)."""
        params: dict[str, Any] = {
            "query": arg.optional_text("query", query),
            "condition": arg.optional_text("condition", condition),
            "intervention": arg.optional_text("intervention", intervention),
            "status": arg.statuses(status),
            "location": arg.optional_text("location", location),
            "phase": None if phase is None else [arg.one_of("phase", phase, arg.PHASES)],
            "eligibility_keywords": arg.optional_text("eligibility_keywords", eligibility_keywords),
            "min_age_days": arg.age_days("min_age", min_age),
            "max_age_days": arg.age_days("max_age", max_age),
            "sex": None if sex is None else arg.one_of("sex", sex, arg.SEXES),
            "study_type": None if study_type is None else arg.one_of("study_type", study_type, arg.STUDY_TYPES),
            "date_before": arg.cutoff(date_before),
        }
        scoped, params["date_before"] = self._scope(date_before, holdout)
        if params["sex"] == "ALL":
            params["sex"] = None
        if all(value is None for value in params.values()):
            raise InvalidArgument("give a query or at least one filter", invalid_input=None,
                                  recovery_hint="Add query, condition, intervention, status, location or phase.")
        size = arg.bounded("page_size", page_size, 1, 200)
        fingerprint = _fingerprint(params)
        mirror, offset = scoped, 0
        if cursor is not None:
            mirror, offset = _read_cursor(scoped, cursor, fingerprint)
        arguments = {**params, "page_offset": offset}

        def page() -> tuple[list[dict[str, Any]], int]:
            rows = answers.rows_of(answers.execute_shaped(mirror, "search_page", arguments, page_limit=size))
            if rows:
                return rows, rows[0]["total_matches"]
            if offset == 0:  # an empty first page: nothing matches
                return rows, 0
            # past the end: the count comes from its own query
            return rows, answers.execute_shaped(mirror, "search_count", arguments).fetchone()[0]

        rows, total = mirror.recovering(page)
        next_offset = offset + len(rows)
        next_cursor = _write_cursor(mirror, next_offset, fingerprint) if next_offset < total else None
        return PaginationEnvelope(items=[TrialSearchCandidate.model_validate(r) for r in rows],
                                  pagination=Pagination(cursor=next_cursor, total_count=total, page_size=size))


def _fingerprint(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _cursor_signature(mirror: Mirror, payload: dict[str, Any]) -> str:
    """Binds a cursor to the state that issued it: keyed by that state's own record (state.json), so a cursor
    edited, or issued by another warehouse, is refused, while a copy of the warehouse accepts its own."""
    key = hashlib.sha256(json.dumps(mirror.state.meta, sort_keys=True, default=str).encode()).digest()
    signed = json.dumps({k: payload[k] for k in ("v", "s", "o", "f")}, sort_keys=True).encode()
    return hmac.new(key, signed, hashlib.sha256).hexdigest()[:32]


def _write_cursor(mirror: Mirror, offset: int, fingerprint: str) -> str:
    payload = {"v": CURSOR_VERSION, "s": mirror.state_id, "o": offset, "f": fingerprint}
    payload["h"] = _cursor_signature(mirror, payload)
    return base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")


def _read_cursor(scoped: Mirror, cursor: str, fingerprint: str) -> tuple[Mirror, int]:
    """The mirror (the state the cursor's first page came from) and offset a cursor continues at."""
    def refused(message: str, hint: str = "Pass the pagination.cursor of the previous page unchanged.") -> InvalidArgument:
        return InvalidArgument(message, invalid_input=cursor, recovery_hint=hint)

    try:
        if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARACTERS:
            raise ValueError
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()))
        state_id, offset, owner = payload["s"], payload["o"], payload["f"]
        if (payload["v"] != CURSOR_VERSION or not isinstance(state_id, str) or not isinstance(offset, int)
                or offset < 0 or not isinstance(payload["h"], str)):
            raise ValueError
    except (ValueError, KeyError, TypeError, UnicodeError):
        raise refused("cursor is not one this search returned") from None
    if owner != fingerprint:
        raise refused("cursor belongs to a search with other parameters",
                      "Repeat the same parameters with the cursor, or omit it to start over.")
    if state_id == scoped.state_id:
        mirror = scoped
    elif STATE_ID.fullmatch(state_id):  # an ID only: never a path
        mirror = scoped.at_state(state_id)  # StateNotFound (STATE_EXPIRED) once it is no longer kept
    else:
        raise refused("cursor is not one this search returned")
    if not hmac.compare_digest(payload["h"], _cursor_signature(mirror, payload)):
        raise refused("cursor was not issued by this warehouse (or was altered)",
                      "Start the search again without a cursor.")
    return mirror, offset
