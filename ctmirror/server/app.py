"""`ctmirror serve`: the mirror over HTTP, on Starlette and uvicorn, one module of routes per surface:

- /api/v2/...: the ClinicalTrials.gov v2 API (ctmirror/server/v2/routes.py): clients of the live API point their
  base URL here and change nothing else. Errors are plain text with the API's statuses.
- /ctmirror/v1/...: every method and statistic of the registry, /ctmirror/v1/openapi.json, /ctmirror/v1/sql (only
  with --sql) (ctmirror/server/methods_routes.py).
- /mcp: the agent tools (ctmirror/server/agent_tools.py) over MCP's streamable HTTP.

Every response says which state answered (X-Ctmirror-State) and as of which cutoff (X-Ctmirror-As-Of). Requests
run on a pool of read-only Mirrors (ctmirror/server/pool.py), in worker threads (ctmirror/server/answering.py):
nothing is shared between requests but the pool.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ctmirror import __version__
from ctmirror.read.mirror import Mirror
from ctmirror.server.answering import MAX_BODY, Answerer
from ctmirror.server.guard import Guard, allowed_hosts
from ctmirror.server.methods_routes import SQL_MEMORY_LIMIT, methods_routes
from ctmirror.server.pool import MirrorPool, freeze_startup_objects
from ctmirror.server.v2.routes import v2_routes
from ctmirror.server.workers import PROTOCOL, run_workers

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


class Settings:
    def __init__(self, warehouse: Path, *, as_of: date | None = None, sql: bool = False, readers: int = 2,
                 sql_timeout: float = 30.0, sql_memory_limit: str = SQL_MEMORY_LIMIT, host: str = "127.0.0.1",
                 allow_hosts: tuple[str, ...] = (), exact_only: bool = False) -> None:
        self.warehouse, self.as_of, self.sql, self.readers, self.sql_timeout = \
            Path(warehouse), as_of, sql, readers, sql_timeout
        self.exact_only = exact_only
        self.sql_memory_limit = sql_memory_limit
        self.host, self.allow_hosts = host, tuple(allow_hosts)

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
    answer = Answerer(settings.warehouse, pool)

    async def index(request: Request) -> Response:
        """A page for a person who opens the server in a browser: what it serves and where."""
        def work(mirror: Mirror) -> Response:
            as_of = f" as of {mirror.as_of}" if mirror.as_of else ""
            page = INDEX_PAGE.format(version=__version__, state=mirror.state_id, as_of=as_of,
                                     sql="on" if settings.sql else "off (start with --sql)")
            return HTMLResponse(page)

        return await answer(request, work, api=False)

    tools, sessions = agent_tools_routes(pool, settings.hosts())
    routes = [Route("/", index), *v2_routes(answer),
              *methods_routes(answer, sql_pool=sql_pool, sql_timeout=settings.sql_timeout), *tools]

    @asynccontextmanager
    async def lifespan(app: Starlette):
        freeze_startup_objects()
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
    return Guard(app, hosts=settings.hosts(), max_body=MAX_BODY)


def agent_tools_routes(pool: MirrorPool, hosts: frozenset[str]):
    """The agent tools (ctmirror/server/agent_tools.py) over MCP's streamable HTTP at /mcp, on the pool's readers,
    and the session manager the app's lifespan runs."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from ctmirror.server.agent_tools import build_server

    with_ports = [f"{h}:*" if ":" not in h else f"[{h}]:*" for h in hosts]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=[*hosts, *with_ports],
        allowed_origins=[f"{scheme}://{h}" for scheme in ("http", "https") for h in [*hosts, *with_ports]])
    sessions = StreamableHTTPSessionManager(app=build_server(pool), stateless=True, json_response=True,
                                            security_settings=security)

    class ToolsEndpoint:  # an ASGI app (not a function), so Starlette hands it the raw request
        async def __call__(self, scope, receive, send) -> None:
            await sessions.handle_request(scope, receive, send)

    return [Route(path, ToolsEndpoint(), methods=["GET", "POST", "DELETE"]) for path in ("/mcp", "/mcp/")], sessions


def serve(settings: Settings, *, host: str, port: int, workers: int) -> None:
    """Runs the server until SIGTERM or Ctrl-C (uvicorn finishes the requests in flight, then stops); with several
    workers, each a process listening on the port (ctmirror/server/workers.py)."""
    if workers > 1:
        run_workers(settings, host=host, port=port, workers=workers)
        return
    import uvicorn

    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning", http=PROTOCOL)
