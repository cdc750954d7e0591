"""The methods' routes (/ctmirror/v1/...): every method and statistic of the registry (ctmirror/read/registry.py) by GET
(arguments as query parameters) or POST (a JSON object), with the contract's envelopes and error codes;
/ctmirror/v1/openapi.json describes them; /ctmirror/v1/synonyms says what a term expands to; /ctmirror/v1/sql (only
with --sql) runs read-only SQL as `ctmirror sql` does, on readers of its own."""

from __future__ import annotations

import json
import threading
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ctmirror.core.errors import InvalidArgument, NotFound
from ctmirror.core.sqlfiles import read_sql
from ctmirror.read.mirror import Mirror
from ctmirror.read.models import left_out_of
from ctmirror.read.readonly import QueryFailed, check_query
from ctmirror.read.registry import METHODS, Method
from ctmirror.server.answering import Answerer, error_response, json_object
from ctmirror.server.openapi import openapi_document
from ctmirror.server.pool import MirrorPool

SQL_MEMORY_LIMIT = "1GB"  # of each SQL endpoint reader (--sql-memory-limit)
SQL_ROW_LIMIT = 10_000


def methods_routes(answer: Answerer, *, sql_pool: MirrorPool | None, sql_timeout: float) -> list[Route]:
    """sql_pool: the SQL endpoint's readers (None: the endpoint is off)."""

    async def method(request: Request) -> Response:
        name = request.path_params["name"]
        found = METHODS.get(name)
        if found is None:
            return error_response(False, NotFound(f"no method {name!r}: see /ctmirror/v1/openapi.json",
                                                  hint="GET /ctmirror/v1/openapi.json lists them"))
        try:
            arguments = await json_object(request, "a JSON object of the method's arguments") \
                if request.method == "POST" else query_arguments(request, found)
        except InvalidArgument as exc:
            return error_response(False, exc)
        return await answer(request, partial(call, found, arguments), api=False)

    async def synonyms(request: Request) -> Response:
        """What a term also finds (Mirror.expansions): ?term=Keytruda&field=intervention."""
        term, field = request.query_params.get("term"), request.query_params.get("field", "condition")
        return await answer(request, lambda mirror: JSONResponse({"term": term, "field": field,
                                                                  "expansions": mirror.expansions(term, field)}),
                            api=False)

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_document())

    async def sql(request: Request) -> Response:
        if sql_pool is None:
            return error_response(False, NotFound("the SQL endpoint is off", hint="start the server with --sql"))
        expected = f'{{"query": "SELECT ...", "limit": 1..{SQL_ROW_LIMIT}}}'
        try:
            payload = await json_object(request, expected)
            query, limit = payload["query"], int(payload.get("limit", 1000))
            if not isinstance(query, str) or not 1 <= limit <= SQL_ROW_LIMIT:
                raise ValueError
        except InvalidArgument as exc:
            return error_response(False, exc)
        except (ValueError, KeyError, TypeError):
            return error_response(False, InvalidArgument(f"the body must be {expected}"))
        return await answer(request, partial(run_sql, query, limit, sql_timeout), api=False, readers=sql_pool)

    return [Route("/ctmirror/v1/openapi.json", openapi), Route("/ctmirror/v1/sql", sql, methods=["POST"]),
            Route("/ctmirror/v1/synonyms", synonyms), Route("/ctmirror/v1/{name}", method, methods=["GET", "POST"])]


def query_arguments(request: Request, method: Method) -> dict[str, Any]:
    """A GET request's query parameters as the method's arguments: a whole number where the method takes one (the
    request model then checks its range), a list where a parameter repeats."""
    integers = {name for name, field in method.request.model_fields.items() if field.annotation is int
                or "int" in str(field.annotation)}
    arguments: dict[str, Any] = {}
    for key in request.query_params:
        values = request.query_params.getlist(key)
        value: Any = values if len(values) > 1 else values[0]
        if key in integers and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        arguments[key] = value
    return arguments


def call(method: Method, arguments: dict[str, Any], mirror: Mirror) -> Response:
    answer = mirror.call(method.name, **arguments)
    if answer is None:
        raise NotFound(f"no trial {arguments.get('nct_id')!r}" + (f" as of {mirror.as_of}" if mirror.as_of else ""),
                       invalid_input=arguments.get("nct_id"))
    if isinstance(answer, list):
        body = [a.model_dump(mode="json") if hasattr(a, "model_dump") else a for a in answer]
    else:
        body = answer.model_dump(mode="json") if hasattr(answer, "model_dump") else answer
    response = JSONResponse(body)
    left_out = left_out_of(answer)
    if left_out is not None:  # an exact-only answer at a cutoff: a list's JSON has no place for it
        response.headers["X-Ctmirror-Left-Out"] = str(left_out)
    return response


def run_sql(query: str, limit: int, timeout: float, mirror: Mirror) -> Response:
    """A user's query on a reader of the SQL pool: the row limit is part of the plan DuckDB runs (a relation's
    LIMIT, not a cut of a result built whole), under the reader's memory limit, and interrupted at the timeout."""
    check_query(query)
    timer = threading.Timer(timeout, mirror.con.interrupt)
    timer.start()
    try:
        frame = mirror.sql(query, limit=limit + 1)
    except QueryFailed as exc:
        if "INTERRUPT" in str(exc).upper():
            raise InvalidArgument(f"the query ran longer than {timeout:g} s and was stopped") from exc
        if "Out of Memory" in str(exc):
            setting = mirror.con.execute(read_sql("session/settings.sql", "memory_setting")).fetchone()[0]
            raise InvalidArgument(f"the query needs more than the SQL endpoint's memory limit ({setting})",
                                  recovery_hint="aggregate or filter in SQL, select fewer or shorter columns, or "
                                                "start the server with a larger --sql-memory-limit") from exc
        raise
    finally:
        timer.cancel()
    rows = frame.head(limit).to_dicts()
    body = {"columns": frame.columns, "rows": rows, "truncated": frame.height > limit}
    return JSONResponse(json.loads(json.dumps(body, default=str)))  # dates and decimals as text
