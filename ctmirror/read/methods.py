"""The methods on a Mirror, every one from the registry (ctmirror/read/registry.py): Mirror.call(name, ...) validates
the arguments with the method's request model, scopes the call to its cutoff and runs it; Mirror.<name>(...) is the
same call with the method's own signature (ctmirror/read/registry_methods.py, generated from the registry)."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from ctmirror.core.errors import InvalidArgument
from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.warehouse import STATE_ID
from ctmirror.read import answers, cursors
from ctmirror.read import arguments as arg
from ctmirror.read.models import ExactList, Pagination, PaginationEnvelope, TrialSearchCandidate
from ctmirror.read.registry import METHODS, STATISTIC_ARGUMENTS, STATISTIC_NAMES, Method
from ctmirror.read.registry_methods import RegistryMethods

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror

CURSOR_KIND = "search"  # the search method's cursors (ctmirror/read/cursors.py)


class Methods(RegistryMethods):
    """Mixed into Mirror; every method of the registry is one of its methods (RegistryMethods).

    date_before and holdout: with holdout="strict" (the default) a method answers as the registry stood on
    date_before (only what it had published by then: each study's version valid on that date, by the rules of
    sql/schema/as_of_rules.sql), read from the version-aware index like any other argument; with
    holdout="first_posted" it filters current data to trials first posted by date_before (the source design's
    rule, for parity with the live API). A mirror pinned with as_of= always answers as of its cutoff.
    """

    def call(self: Mirror, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """Any registered method by name, with its arguments as Mirror.<name> takes them."""
        method = METHODS.get(name) if isinstance(name, str) else None
        if method is None:
            raise InvalidArgument(f"unknown method {name!r}: one of {', '.join(METHODS)}", invalid_input=name,
                                  recovery_hint="pick a method from the list")
        request = self.validated(method, args, kwargs)
        with self.lock:
            return RUNS[method.kind](self, method, request)

    def validated(self: Mirror, method: Method, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
        """A call's arguments, positional ones named in the order of the method's fields, validated (an unknown
        or missing argument is the request model's INVALID_INPUT, however it was passed)."""
        fields = list(method.request.model_fields)
        if len(args) > len(fields):
            raise InvalidArgument(f"{method.name} takes at most {len(fields)} arguments ({', '.join(fields)}), "
                                  f"got {len(args)}", recovery_hint="Pass the optional ones by name.")
        arguments = dict(zip(fields, args))
        for name in arguments.keys() & kwargs.keys():
            raise InvalidArgument(f"{method.name}: {name} is given twice", invalid_input=name)
        return method.validate({**arguments, **kwargs})

    def stats(self: Mirror, name: str, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """One of the registry statistics (sql/stats/) for the trials in scope, as rows."""
        if name not in STATISTIC_NAMES:
            raise InvalidArgument(f"unknown statistic {name!r}: one of {', '.join(STATISTIC_NAMES)}",
                                  invalid_input=name, recovery_hint="pick a name from the list")
        return self.call(name, *args, **kwargs)

    def _scope(self: Mirror, cutoff: date | None, holdout: str) -> date | None:
        """The strict cutoff a call is answered as of (None: the current state's rows)."""
        if self.as_of is not None and cutoff is not None and cutoff > self.as_of:
            raise InvalidArgument(f"date_before {cutoff} is after this mirror's cutoff {self.as_of}",
                                  invalid_input=str(cutoff), recovery_hint="use a date on or before the cutoff")
        if self.frozen:  # a snapshot's rows are already as of its cutoff
            return None
        if cutoff is None or holdout == "first_posted":
            return self.as_of
        return cutoff

    def _scoped(self: Mirror, method: Method, request: dict[str, Any]) -> tuple[Mirror, dict[str, Any]]:
        """A validated call without its holdout, with the strict cutoff it is answered as of (as_of), and the
        mirror that answers it."""
        if not method.scoped:
            return self, {**request, "as_of": None if self.frozen else self.as_of}
        call = {k: v for k, v in request.items() if k != "holdout"}
        if call["date_before"] is None:  # a pinned mirror's calls are as of its cutoff (get_landscape's today too)
            call["date_before"] = self.as_of
        call["as_of"] = self._scope(call["date_before"], request["holdout"])
        if request["holdout"] == "exact" and not self.exact_only:  # strict, on this state's exact-only reader
            return self.exact_sibling(), call
        return self, call


def _set_wise(self: Mirror, method: Method, request: dict[str, Any]) -> Any:
    """One call of a set-wise method; while Mirror.batch collects, recorded to run with the batch's other calls of
    the same method on the same mirror."""
    mirror, call = self._scoped(method, request)
    if self._collecting is not None:
        self._collecting.append((mirror, method, call))
        return None
    return answers.answer_saying_left_out(mirror, method, [call])[0]


def _statistic(self: Mirror, method: Method, request: dict[str, Any]) -> list[dict[str, Any]]:
    """A statistic's rows; answered with exact answers only at a cutoff, an ExactList whose left_out counts the
    trials in scope shown reconstructed to a strict call (stats_exactness's `reconstructed`)."""
    mirror, call = self._scoped(method, request)

    def rows(on: Mirror, name: str) -> list[dict[str, Any]]:
        return on.recovering(lambda: answers.rows_of(
            answers.execute_shaped(on, STATISTIC_ARGUMENTS, name, call,
                                   query=read_sql("calls/statistic.sql").replace("{statistic}", name))))

    found = rows(mirror, method.name)
    if mirror.exact_only and call["as_of"] is not None:
        return ExactList(found, left_out=rows(mirror.strict_sibling(), "stats_exactness")[0]["reconstructed"])
    return found


def _search(self: Mirror, method: Method, request: dict[str, Any]) -> PaginationEnvelope:
    """The paginated search of contracts 001/002. All filters are ANDed. A cursor is pinned to the warehouse state
    its first page came from, so paging sees every match exactly once even if a sync publishes in between
    (STATE_EXPIRED if that state is no longer kept: start again)."""
    scoped, call = self._scoped(method, request)
    params = {column: method.bound(column, call[column]) for column, _ in method.columns if column in call}
    params["phase"] = call["phase"]
    if params["sex"] == "ALL":
        params["sex"] = None
    if all(value is None for key, value in params.items() if key != "sort"):
        raise InvalidArgument("give a query or at least one filter", invalid_input=None,
                              recovery_hint="Add query, condition, intervention, status, location or phase.")
    size = call["page_size"]
    # a cursor belongs to its search's arguments, and to exact answers only when it came from them
    fingerprint = cursors.fingerprint({**params, "exact_only": True} if scoped.exact_only else params)
    mirror, offset = scoped, 0
    if call["cursor"] is not None:
        mirror, offset = _read_cursor(scoped, call["cursor"], fingerprint)
    arguments = {**params, "page_offset": offset}
    if call["near"] is not None:  # the versions near the point, on the state that answers (cursor's included)
        lat, lon, km = arg.near_point(call["near"])
        arguments["near"] = answers.FromQuery(read_sql("calls/queries.sql", "near_versions"),
                                              {"geo_lat": lat, "geo_lon": lon, "geo_km": km})

    def page() -> tuple[list[dict[str, Any]], int]:
        rows = answers.rows_of(answers.execute_shaped(mirror, method, "search_page", arguments, page_limit=size))
        if rows:
            return rows, rows[0]["total_matches"]
        if offset == 0:  # an empty first page: nothing matches
            return rows, 0
        # past the end: the count comes from its own query
        return rows, answers.execute_shaped(mirror, method, "search_count", arguments).fetchone()[0]

    rows, total = mirror.recovering(page)
    next_offset = offset + len(rows)
    next_cursor = cursors.write(mirror, CURSOR_KIND, next_offset, fingerprint) if next_offset < total else None
    left_out = None
    if mirror.exact_only and call["as_of"] is not None:  # what the strict answer finds beyond the exact one
        strict = mirror.strict_sibling()
        left_out = strict.recovering(
            lambda: answers.execute_shaped(strict, method, "search_count", arguments).fetchone()[0]) - total
    return PaginationEnvelope(items=[TrialSearchCandidate.model_validate(r) for r in rows],
                              pagination=Pagination(cursor=next_cursor, total_count=total, page_size=size,
                                                    left_out=left_out),
                              fields=call["fields"])


RUNS = {"set-wise": _set_wise, "search": _search, "statistic": _statistic}


def _read_cursor(scoped: Mirror, text: str, fingerprint: str) -> tuple[Mirror, int]:
    """The mirror (the state the cursor's first page came from) and offset a cursor continues at."""
    def refused(message: str,
                hint: str = "Pass the pagination.cursor of the previous page unchanged.") -> InvalidArgument:
        return InvalidArgument(message, invalid_input=text, recovery_hint=hint)

    cursor = cursors.parse(text, CURSOR_KIND)
    if cursor is None:
        raise refused("cursor is not one this search returned")
    if cursor.fingerprint != fingerprint:
        raise refused("cursor belongs to a search with other parameters",
                      "Repeat the same parameters with the cursor, or omit it to start over.")
    if cursor.state_id == scoped.state_id:
        mirror = scoped
    elif STATE_ID.fullmatch(cursor.state_id):  # an ID only: never a path
        mirror = scoped.at_state(cursor.state_id)  # StateNotFound (STATE_EXPIRED) once it is no longer kept
    else:
        raise refused("cursor is not one this search returned")
    if not cursor.signed_by(mirror):
        raise refused("cursor was not issued by this warehouse (or was altered)",
                      "Start the search again without a cursor.")
    return mirror, cursor.offset
