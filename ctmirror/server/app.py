"""`ctmirror serve`: the mirror over HTTP, on Starlette and uvicorn.

- /api/v2/...: the ClinicalTrials.gov v2 API (ctmirror/server/v2/): clients of the live API point their base URL
  here and change nothing else. Errors are plain text with the API's statuses.
- /ctmirror/v1/...: every method and statistic of the registry (ctmirror/registry.py), with the contract's
  envelopes and error codes; /ctmirror/v1/openapi.json describes them; /ctmirror/v1/sql (only with --sql) runs
  read-only SQL as `ctmirror sql` does.

Every response says which state answered (X-Ctmirror-State) and as of which cutoff (X-Ctmirror-As-Of). Requests
run on a pool of read-only Mirrors (ctmirror/server/pool.py), in worker threads: nothing is shared between
requests but the pool.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from contextlib import asynccontextmanager
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from ctmirror import __version__
from ctmirror.core.errors import CtmirrorError, InvalidArgument, NotFound, StateNotFound, WarehouseError
from ctmirror.core.sqlfiles import read_sql
from ctmirror.mirror import Mirror
from ctmirror.models import left_out_of
from ctmirror.readonly import QueryFailed, check_query
from ctmirror.registry import METHODS, Method
from ctmirror.server import field_stats, v2
from ctmirror.server.balance import BALANCE_FILE, make_balance_file
from ctmirror.server.guard import Guard, allowed_hosts
from ctmirror.server.openapi import openapi_document
from ctmirror.server.pool import MirrorPool
from ctmirror.server.records import enumerations, field_tree

log = logging.getLogger("ctmirror.serve")
MAX_QUERY_STRING = 64 * 1024
MAX_BODY = 1024 * 1024
INDEX_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ctmirror</title></head>
<body style="font-family: sans-serif; max-width: 46em; margin: 2em auto; line-height: 1.5">
<h1>ctmirror {version}</h1>
<p>An offline mirror of ClinicalTrials.gov: state {state}{as_of}.</p>
<ul>
<li><a href="/api/v2/studies?query.cond=asthma&amp;pageSize=5">/api/v2/studies</a>: the ClinicalTrials.gov v2 API
 (<a href="/api/v2/version">version</a>, <a href="/api/v2/studies/metadata">metadata</a>,
 <a href="/api/v2/studies/search-areas">search areas</a>, <a href="/api/v2/stats/size">sizes</a>)</li>
<li><a href="/ctmirror/v1/openapi.json">/ctmirror/v1/openapi.json</a>: the methods and statistics at
 /ctmirror/v1/&lt;name&gt;</li>
<li>/mcp: the agent tools over the Model Context Protocol (streamable HTTP)</li>
<li>/ctmirror/v1/sql: read-only SQL, {sql}</li>
</ul></body></html>
"""
SQL_MEMORY_LIMIT = "1GB"  # of each SQL endpoint reader (--sql-memory-limit)
SQL_ROW_LIMIT = 10_000


class Settings:
    def __init__(self, warehouse: Path, *, as_of: date | None = None, sql: bool = False, readers: int = 2,
                 sql_timeout: float = 30.0, sql_memory_limit: str = SQL_MEMORY_LIMIT, host: str = "127.0.0.1",
                 allow_hosts: tuple[str, ...] = (), exact_only: bool = False) -> None:
        self.warehouse, self.as_of, self.sql, self.readers, self.sql_timeout = \
            Path(warehouse), as_of, sql, readers, sql_timeout
        self.exact_only = exact_only
        self.sql_memory_limit = sql_memory_limit
        self.host, self.allow_hosts = host, tuple(allow_hosts)

    @classmethod
    def from_environment(cls) -> Settings:
        """What `ctmirror serve --workers N` hands each worker process (uvicorn imports the app by name)."""
        as_of = os.environ.get("CTMIRROR_SERVE_AS_OF")
        return cls(Path(os.environ["CTMIRROR_WAREHOUSE"]), as_of=date.fromisoformat(as_of) if as_of else None,
                   sql=os.environ.get("CTMIRROR_SERVE_SQL") == "1",
                   readers=int(os.environ.get("CTMIRROR_SERVE_READERS", "2")),
                   sql_memory_limit=os.environ.get("CTMIRROR_SERVE_SQL_MEMORY", SQL_MEMORY_LIMIT),
                   host=os.environ.get("CTMIRROR_SERVE_HOST", "127.0.0.1"),
                   allow_hosts=tuple(h for h in os.environ.get("CTMIRROR_SERVE_ALLOW_HOSTS", "").split(",") if h),
                   exact_only=os.environ.get("CTMIRROR_SERVE_EXACT_ONLY") == "1")

    def to_environment(self) -> dict[str, str]:
        return {"CTMIRROR_WAREHOUSE": str(self.warehouse), "CTMIRROR_SERVE_AS_OF": str(self.as_of or ""),
                "CTMIRROR_SERVE_SQL": "1" if self.sql else "0", "CTMIRROR_SERVE_READERS": str(self.readers),
                "CTMIRROR_SERVE_SQL_MEMORY": self.sql_memory_limit, "CTMIRROR_SERVE_HOST": self.host,
                "CTMIRROR_SERVE_ALLOW_HOSTS": ",".join(self.allow_hosts),
                "CTMIRROR_SERVE_EXACT_ONLY": "1" if self.exact_only else "0"}

    def hosts(self) -> frozenset[str]:
        return allowed_hosts(self.host, self.allow_hosts)


def create_app(settings: Settings) -> Guard:
    """The app, behind its Guard (ctmirror/server/guard.py): Host, Origin, content type and body size checked
    before any surface sees a request."""
    pool = MirrorPool(settings.warehouse, as_of=settings.as_of, size=settings.readers, exact_only=settings.exact_only)
    # The SQL endpoint's queries run on readers of their own, each under its own memory limit, so a query cannot
    # take the server's memory nor hold the readers the methods answer on.
    sql_pool = MirrorPool(settings.warehouse, as_of=settings.as_of, size=1, memory_limit=settings.sql_memory_limit,
                          exact_only=settings.exact_only) if settings.sql else None
    size_cache: dict[str, dict[str, Any]] = {}
    size_lock = threading.Lock()

    def headers(mirror: Mirror) -> dict[str, str]:
        as_of = mirror.as_of
        return {"X-Ctmirror-State": mirror.state_id, "X-Ctmirror-As-Of": as_of.isoformat() if as_of else "current"}

    async def answer(request: Request, work, *, api: bool, state_id: str | None = None,
                     readers: MirrorPool = pool) -> Response:
        """Runs work(mirror) in a worker thread on a pooled Mirror; maps every error to the surface's shape."""
        if len(request.url.query) > MAX_QUERY_STRING:
            return _error(api, InvalidArgument(f"the query string is longer than {MAX_QUERY_STRING:,} characters"))

        def run() -> Response:
            with readers.mirror(state_id) as mirror:
                response = work(mirror)
                response.headers.update(headers(mirror))
                return response

        try:
            return await run_in_threadpool(run)
        except v2.V2Error as exc:
            return PlainTextResponse(str(exc), status_code=exc.status)
        except CtmirrorError as exc:
            return _error(api, _without_paths(exc, settings.warehouse))
        except Exception:  # never a traceback to a client; the log has it
            log.exception("request failed: %s", request.url)
            return _error(api, WarehouseError("the server failed on this request", hint="see the server's log"))

    # ---- the v2 API ----------------------------------------------------------------------------------------
    async def studies(request: Request) -> Response:
        try:
            params = v2.parameters(request.query_params.multi_items())
        except v2.V2Error as exc:
            return PlainTextResponse(str(exc), status_code=exc.status)
        token_state = v2.page_token_state(params.get("pageToken"))

        def work(mirror: Mirror) -> Response:
            page, search = v2.studies(mirror, params, mirror.as_of, as_stored=params.get("format") != "csv")
            if params.get("format") == "csv":
                response = PlainTextResponse(v2.csv_text(page, search, header=not params.get("pageToken")),
                                             media_type="text/csv")
                if "totalCount" in page:
                    response.headers["x-total-count"] = str(page["totalCount"])
                if "nextPageToken" in page:
                    response.headers["x-next-page-token"] = page["nextPageToken"]
                return response
            return Response(v2.page_json(page), media_type="application/json")

        return await answer(request, work, api=True, state_id=token_state)

    async def one_study(request: Request) -> Response:
        wanted = request.path_params["nct_id"]
        try:
            params = v2.parameters(request.query_params.multi_items())
        except v2.V2Error as exc:
            return PlainTextResponse(str(exc), status_code=exc.status)

        def study_response(nct_id: str, body: bytes) -> Response:
            if nct_id != wanted:  # an alias, or another spelling: the API redirects to the study's own address
                target = f"/api/v2/studies/{nct_id}" + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(target, status_code=301)
            return Response(body, media_type="application/json")

        if pool.as_of is None and len(request.url.query) <= MAX_QUERY_STRING:
            # the current state's lookup, once this process has it, needs no reader: no wait behind a search
            try:
                state_id = pool.current_state_id()
                found = v2.loaded_current_text(settings.warehouse, state_id, wanted, params)
            except v2.V2Error as exc:
                return PlainTextResponse(str(exc), status_code=exc.status)
            except CtmirrorError:  # no current state now: the reader's path says so in the API's shape
                found = None
            if found is not None:
                response = study_response(*found)
                response.headers.update({"X-Ctmirror-State": state_id, "X-Ctmirror-As-Of": "current"})
                return response

        def work(mirror: Mirror) -> Response:
            shown_as: dict[str, Any] = {}
            response = study_response(*v2.study_text(mirror, wanted, params, mirror.as_of, shown_as))
            if mirror.as_of is not None and shown_as:  # where strict v2 clients look for nothing: headers
                response.headers["X-Ctmirror-As-Of-Exact"] = "true" if shown_as["as_of_exact"] else "false"
                response.headers["X-Ctmirror-Withheld"] = ", ".join(shown_as["withheld"])[:4_000]
                if "reconstructed_from" in shown_as:
                    response.headers["X-Ctmirror-Reconstructed-From"] = shown_as["reconstructed_from"]
            return response

        return await answer(request, work, api=True)

    async def version(request: Request) -> Response:
        def work(mirror: Mirror) -> Response:
            meta = mirror.state.meta
            stamp = (meta.get("run") or {}).get("data_timestamp") or meta.get("published_at") or \
                (meta.get("snapshot") or {}).get("source_published_at")
            return JSONResponse({"apiVersion": "2.0.5", "dataTimestamp": stamp, "ctmirrorVersion": __version__,
                                 "state": mirror.state_id, "asOf": mirror.as_of.isoformat() if mirror.as_of else None})

        return await answer(request, work, api=True)

    async def size(request: Request) -> Response:
        def work(mirror: Mirror) -> Response:
            key = f"{mirror.state_id}/{mirror.as_of}"
            with size_lock:
                if key not in size_cache:
                    size_cache.clear()
                    size_cache[key] = _size_stats(mirror)
            return JSONResponse(size_cache[key])

        return await answer(request, work, api=True)

    async def field_values(request: Request) -> Response:
        fields = v2.listed(",".join(request.query_params.getlist("fields")) or None)
        types = v2.listed(",".join(request.query_params.getlist("types")) or None)
        return await answer(request, lambda mirror: JSONResponse(field_stats.field_values(mirror, fields, types)),
                            api=True)

    async def field_sizes(request: Request) -> Response:
        fields = v2.listed(",".join(request.query_params.getlist("fields")) or None)
        return await answer(request, lambda mirror: JSONResponse(field_stats.field_sizes(mirror, fields)), api=True)

    async def metadata(request: Request) -> Response:
        return JSONResponse(field_tree())

    async def enums(request: Request) -> Response:
        return JSONResponse(enumerations())

    async def search_areas(request: Request) -> Response:
        return await answer(request, lambda mirror: JSONResponse(_search_areas(mirror)), api=True)

    # ---- the registry's methods ----------------------------------------------------------------------------
    async def method(request: Request) -> Response:
        name = request.path_params["name"]
        found = METHODS.get(name)
        if found is None:
            return _error(False, NotFound(f"no method {name!r}: see /ctmirror/v1/openapi.json",
                                          hint="GET /ctmirror/v1/openapi.json lists them"))
        if request.method == "POST":
            body = await request.body()
            if len(body) > MAX_BODY:
                return _error(False, InvalidArgument(f"the body is larger than {MAX_BODY:,} bytes"))
            try:
                arguments = json.loads(body or b"{}")
                if not isinstance(arguments, dict):
                    raise ValueError
            except (ValueError, RecursionError):
                return _error(False, InvalidArgument("the body must be a JSON object of the method's arguments"))
        else:
            arguments = _query_arguments(request, found)
        return await answer(request, partial(_call, found, arguments), api=False)

    async def synonyms(request: Request) -> Response:
        """What a term also finds (Mirror.expansions): ?term=Keytruda&field=intervention."""
        term, field = request.query_params.get("term"), request.query_params.get("field", "condition")
        return await answer(request, lambda mirror: JSONResponse({"term": term, "field": field,
                                                                  "expansions": mirror.expansions(term, field)}),
                            api=False)

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_document())

    async def index(request: Request) -> Response:
        """A page for a person who opens the server in a browser: what it serves and where."""
        def work(mirror: Mirror) -> Response:
            as_of = f" as of {mirror.as_of}" if mirror.as_of else ""
            page = INDEX_PAGE.format(version=__version__, state=mirror.state_id, as_of=as_of,
                                     sql="on" if settings.sql else "off (start with --sql)")
            return HTMLResponse(page)

        return await answer(request, work, api=False)

    async def sql(request: Request) -> Response:
        if not settings.sql:
            return _error(False, NotFound("the SQL endpoint is off", hint="start the server with --sql"))
        body = await request.body()
        if len(body) > MAX_BODY:
            return _error(False, InvalidArgument(f"the body is larger than {MAX_BODY:,} bytes"))
        try:
            payload = json.loads(body or b"{}")
            query, limit = payload["query"], int(payload.get("limit", 1000))
            if not isinstance(query, str) or not 1 <= limit <= SQL_ROW_LIMIT:
                raise ValueError
        except (ValueError, KeyError, TypeError, RecursionError):
            return _error(False, InvalidArgument(
                f'the body must be {{"query": "SELECT ...", "limit": 1..{SQL_ROW_LIMIT}}}'))
        return await answer(request, partial(_run_sql, query, limit, settings.sql_timeout), api=False,
                            readers=sql_pool)

    routes = [
        Route("/api/v2/studies", studies), Route("/api/v2/studies/metadata", metadata),
        Route("/api/v2/studies/search-areas", search_areas), Route("/api/v2/studies/enums", enums),
        Route("/api/v2/studies/{nct_id}", one_study), Route("/api/v2/version", version),
        Route("/api/v2/stats/size", size), Route("/api/v2/stats/field/values", field_values),
        Route("/api/v2/stats/field/sizes", field_sizes),
        Route("/", index), Route("/ctmirror/v1/openapi.json", openapi),
        Route("/ctmirror/v1/sql", sql, methods=["POST"]), Route("/ctmirror/v1/synonyms", synonyms),
        Route("/ctmirror/v1/{name}", method, methods=["GET", "POST"]),
    ]
    # The agent tools (ctmirror/server/agent_tools.py) over MCP's streamable HTTP, on the same readers' warehouse.
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from ctmirror.server.agent_tools import build_server

    tools_server = build_server(pool)
    hosts = settings.hosts()
    with_ports = [f"{h}:*" if ":" not in h else f"[{h}]:*" for h in hosts]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=[*hosts, *with_ports],
        allowed_origins=[f"{scheme}://{h}" for scheme in ("http", "https") for h in [*hosts, *with_ports]])
    sessions = StreamableHTTPSessionManager(app=tools_server, stateless=True, json_response=True,
                                            security_settings=security)

    class ToolsEndpoint:  # an ASGI app (not a function), so Starlette hands it the raw request
        async def __call__(self, scope, receive, send) -> None:
            await sessions.handle_request(scope, receive, send)

    routes += [Route("/mcp", ToolsEndpoint(), methods=["GET", "POST", "DELETE"]),
               Route("/mcp/", ToolsEndpoint(), methods=["GET", "POST", "DELETE"])]

    @asynccontextmanager
    async def lifespan(app: Starlette):
        async with sessions.run():
            yield
        pool.close()
        if sql_pool is not None:
            sql_pool.close()

    # gzip for clients that ask (Accept-Encoding), as the live API gives it: 50 studies are 448 KB as JSON. Level 1:
    # Starlette's default 9 cost a search on loopback about 30% of its throughput, level 1 about 10%.
    app = Starlette(routes=routes, lifespan=lifespan,
                    middleware=[Middleware(GZipMiddleware, minimum_size=1024, compresslevel=1)])
    app.state.pool = pool
    return Guard(app, hosts=hosts, max_body=MAX_BODY)


def app_from_environment() -> Guard:
    return create_app(Settings.from_environment())


# ---- helpers -------------------------------------------------------------------------------------------------
def _error(api: bool, error: CtmirrorError) -> Response:
    """The v2 API's plain text (a page token's expired state is a bad request there), or the contract's envelope."""
    if api:
        return PlainTextResponse(str(error), status_code=400 if isinstance(error, StateNotFound) else error.http_status)
    return JSONResponse(error.envelope(), status_code=error.http_status)


def _without_paths(error: CtmirrorError, warehouse: Path) -> CtmirrorError:
    """The error with the warehouse's folder named as "the warehouse": a client learns nothing of the server's
    file system."""
    for folder in sorted({str(warehouse.resolve()), str(warehouse)}, key=len, reverse=True):
        error.args = tuple(a.replace(folder, "the warehouse") if isinstance(a, str) else a for a in error.args)
        if error.hint:
            error.hint = error.hint.replace(folder, "the warehouse")
    return error


def _query_arguments(request: Request, method: Method) -> dict[str, Any]:
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


def _call(method: Method, arguments: dict[str, Any], mirror: Mirror) -> Response:
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


def _run_sql(query: str, limit: int, timeout: float, mirror: Mirror) -> Response:
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
            raise InvalidArgument(f"the query needs more than the SQL endpoint's memory limit "
                                  f"({mirror.con.execute(read_sql('session/memory_setting.sql')).fetchone()[0]})",
                                  recovery_hint="aggregate or filter in SQL, select fewer or shorter columns, or "
                                                "start the server with a larger --sql-memory-limit") from exc
        raise
    finally:
        timer.cancel()
    rows = frame.head(limit).to_dicts()
    body = {"columns": frame.columns, "rows": rows, "truncated": frame.height > limit}
    return JSONResponse(json.loads(json.dumps(body, default=str)))  # dates and decimals as text


def _size_stats(mirror: Mirror) -> dict[str, Any]:
    rows = mirror.con.execute(read_sql("serve/record_sizes.sql"), {"as_of": mirror.as_of}).fetchall()
    sizes = sorted(n for _, n in rows)
    if not sizes:
        return {"averageSizeBytes": 0, "largestStudies": [], "percentiles": {}, "ranges": [], "totalStudies": 0}
    largest = sorted(rows, key=lambda r: -r[1])[:10]
    return {"averageSizeBytes": int(sum(sizes) / len(sizes)),
            "largestStudies": [{"id": nct_id, "sizeBytes": n} for nct_id, n in largest],
            "percentiles": {str(p): sizes[min(len(sizes) - 1, len(sizes) * p // 100)] for p in (5, 25, 50, 75, 95)},
            "ranges": [{"sizeRange": f"{low}-{high}", "studiesCount": sum(1 for s in sizes if low <= s < high)}
                       for low, high in ((0, 10_000), (10_000, 50_000), (50_000, 100_000), (100_000, 10 ** 9))],
            "totalStudies": len(sizes)}


SEARCH_DOCUMENTS = (("ConditionSearch", "cond", "condition"), ("InterventionSearch", "intr", "intervention"),
                    ("BasicSearch", "term", "term"))


def _search_areas(mirror: Mirror) -> list[dict[str, Any]]:
    areas = mirror.rows("SELECT field, area, weight FROM search_area ORDER BY field, weight DESC, area")
    documents = []
    for name, param, field in SEARCH_DOCUMENTS:
        parts = [{"pieces": [a["area"]], "weight": float(a["weight"]), "isEnum": False, "isSynonyms": field != "term",
                  "type": "text"} for a in areas if a["field"] == field]
        documents.append({"name": name, "param": param, "parts": parts})
    for name, param, pieces in (("TitleSearch", "titles", ["Acronym", "BriefTitle", "OfficialTitle"]),
                                ("LocationSearch", "locn", ["LocationCity", "LocationState", "LocationCountry"]),
                                ("SponsorSearch", "spons", ["LeadSponsorName", "CollaboratorName"]),
                                ("OutcomeSearch", "outc", ["OutcomeMeasure"]),
                                ("IdSearch", "id", ["NCTId", "NCTIdAlias", "Acronym", "OrgStudyId", "SecondaryId"]),
                                ("LeadSponsorName", "lead", ["LeadSponsorName"])):
        documents.append({"name": name, "param": param, "parts": [
            {"pieces": pieces, "weight": 1.0, "isEnum": False, "isSynonyms": False, "type": "text"}]})
    return [{"name": "Study", "areas": documents}]


def serve(settings: Settings, *, host: str, port: int, workers: int) -> None:
    """Runs the server until SIGTERM or Ctrl-C (uvicorn finishes the requests in flight, then stops)."""
    import uvicorn

    protocol = "ctmirror.server.no_delay:NoDelayH11Protocol"
    if workers > 1:  # each worker process imports the app by name and reads its settings from the environment
        os.environ.update(settings.to_environment())
        with tempfile.TemporaryDirectory(prefix="ctmirror-serve-") as folder:  # the workers' connection counts
            os.environ[BALANCE_FILE] = str(make_balance_file(Path(folder), workers))
            uvicorn.run("ctmirror.server.app:app_from_environment", factory=True, host=host, port=port,
                        workers=workers, log_level="warning", http=protocol,
                        loop="ctmirror.server.balance:BalancedEventLoop")
    else:
        uvicorn.run(create_app(settings), host=host, port=port, log_level="warning", http=protocol)
