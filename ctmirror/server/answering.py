"""What every route of `ctmirror serve` shares: a request's work run on a pooled read-only Mirror in a worker thread,
headers saying which state answered and as of which cutoff, and every error in the shape of the surface asked (the
v2 API's plain text with its statuses, or the contract's envelope), never a traceback or a path of the server's."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from ctmirror.core.errors import CtmirrorError, InvalidArgument, StateNotFound, WarehouseError
from ctmirror.read.mirror import Mirror
from ctmirror.server.pool import MirrorPool
from ctmirror.server.v2 import V2Error

log = logging.getLogger("ctmirror.serve")
MAX_QUERY_STRING = 64 * 1024
MAX_BODY = 1024 * 1024


class Answerer:
    """Runs routes' work on the readers of a pool (`readers` names another, such as the SQL endpoint's)."""

    def __init__(self, warehouse: Path, pool: MirrorPool) -> None:
        self.warehouse, self.pool = warehouse, pool

    async def __call__(self, request: Request, work: Callable[[Mirror], Response], *, api: bool,
                       state_id: str | None = None, readers: MirrorPool | None = None) -> Response:
        """work(mirror) in a worker thread on a pooled Mirror (of `state_id`: a page token's state); every error
        mapped to the surface's shape (`api`: the v2 API's)."""
        if len(request.url.query) > MAX_QUERY_STRING:
            return error_response(api, InvalidArgument(f"the query string is longer than {MAX_QUERY_STRING:,} "
                                                       "characters"))

        def run() -> Response:
            with (readers or self.pool).mirror(state_id) as mirror:
                response = work(mirror)
                response.headers.update(state_headers(mirror))
                return response

        try:
            return await run_in_threadpool(run)
        except V2Error as exc:
            return PlainTextResponse(str(exc), status_code=exc.status)
        except CtmirrorError as exc:
            return error_response(api, without_paths(exc, self.warehouse))
        except Exception:  # never a traceback to a client; the log has it
            log.exception("request failed: %s", request.url)
            return error_response(api, WarehouseError("the server failed on this request",
                                                      hint="see the server's log"))


def state_headers(mirror: Mirror) -> dict[str, str]:
    as_of = mirror.as_of
    return {"X-Ctmirror-State": mirror.state_id, "X-Ctmirror-As-Of": as_of.isoformat() if as_of else "current"}


def error_response(api: bool, error: CtmirrorError) -> Response:
    """The v2 API's plain text (a page token's expired state is a bad request there), or the contract's envelope."""
    if api:
        return PlainTextResponse(str(error), status_code=400 if isinstance(error, StateNotFound) else error.http_status)
    return JSONResponse(error.envelope(), status_code=error.http_status)


def without_paths(error: CtmirrorError, warehouse: Path) -> CtmirrorError:
    """The error with the warehouse's folder named as "the warehouse": a client learns nothing of the server's
    file system."""
    for folder in sorted({str(warehouse.resolve()), str(warehouse)}, key=len, reverse=True):
        error.args = tuple(a.replace(folder, "the warehouse") if isinstance(a, str) else a for a in error.args)
        if error.hint:
            error.hint = error.hint.replace(folder, "the warehouse")
    return error


async def json_object(request: Request, expected: str) -> dict[str, Any]:
    """A request body that is one JSON object of at most MAX_BODY bytes (empty: {}), or InvalidArgument saying
    `expected`."""
    body = await request.body()
    if len(body) > MAX_BODY:
        raise InvalidArgument(f"the body is larger than {MAX_BODY:,} bytes")
    try:
        found = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        found = None
    if not isinstance(found, dict):
        raise InvalidArgument(f"the body must be {expected}")
    return found
