"""The v2 API's routes (/api/v2/...): clients of the live API point their base URL here and change nothing else.
Errors are plain text with the API's statuses; where strict clients look for nothing, headers say which state
answered, as of which cutoff, and for one study at a cutoff whether its version is exact and what was withheld."""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from ctmirror import __version__
from ctmirror.core.errors import CtmirrorError
from ctmirror.core.sqlfiles import read_sql
from ctmirror.read.mirror import Mirror
from ctmirror.server.answering import MAX_QUERY_STRING, Answerer
from ctmirror.server.records import enumerations, field_nodes, field_tree
from ctmirror.server.v2 import field_stats
from ctmirror.server.v2.areas import IDENTIFIER_AREAS, IDENTIFIER_WEIGHT, OTHER_SEARCH_DOCUMENTS
from ctmirror.server.v2.errors import V2Error
from ctmirror.server.v2.page_tokens import page_token_state
from ctmirror.server.v2.request import listed, parameters
from ctmirror.server.v2.search import csv_text, page_json, studies
from ctmirror.server.v2.study_lookup import loaded_current_text, study_format, study_in_format, study_text


def v2_routes(answer: Answerer) -> list[Route]:
    pool = answer.pool
    sizes: dict[str, dict[str, Any]] = {}  # /stats/size of the state last asked
    sizes_lock = threading.Lock()

    async def search(request: Request) -> Response:
        try:
            params = parameters(request.query_params.multi_items())
        except V2Error as exc:
            return PlainTextResponse(str(exc), status_code=exc.status)

        def work(mirror: Mirror) -> Response:
            page, found = studies(mirror, params, mirror.as_of, as_stored=params.get("format") != "csv")
            if params.get("format") == "csv":
                response = PlainTextResponse(csv_text(page, found, header=not params.get("pageToken")),
                                             media_type="text/csv")
                if "totalCount" in page:
                    response.headers["x-total-count"] = str(page["totalCount"])
                if "nextPageToken" in page:
                    response.headers["x-next-page-token"] = page["nextPageToken"]
                return response
            return Response(page_json(page), media_type="application/json")

        return await answer(request, work, api=True, state_id=page_token_state(params.get("pageToken")))

    async def one_study(request: Request) -> Response:
        wanted = request.path_params["nct_id"]
        try:
            params = parameters(request.query_params.multi_items())
        except V2Error as exc:
            return PlainTextResponse(str(exc), status_code=exc.status)

        try:
            fmt, params, csv_columns = study_format(params)
        except V2Error as exc:
            return PlainTextResponse(str(exc), status_code=exc.status)

        def study_response(nct_id: str, body: bytes) -> Response:
            if nct_id != wanted:  # an alias, or another spelling: the API redirects to the study's own address
                target = f"/api/v2/studies/{nct_id}" + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(target, status_code=301)
            content, media_type, file_name = study_in_format(fmt, nct_id, body, csv_columns)
            response = Response(content, media_type=media_type)
            if file_name:
                response.headers["content-disposition"] = f'attachment; filename="{file_name}"'
            return response

        if pool.as_of is None and len(request.url.query) <= MAX_QUERY_STRING:
            # the current state's lookup, once this process has it, needs no reader: no wait behind a search
            try:
                state_id = pool.current_state_id()
                found = loaded_current_text(answer.warehouse, state_id, wanted, params)
            except V2Error as exc:
                return PlainTextResponse(str(exc), status_code=exc.status)
            except CtmirrorError:  # no current state now: the reader's path says so in the API's shape
                found = None
            if found is not None:
                response = study_response(*found)
                response.headers.update({"X-Ctmirror-State": state_id, "X-Ctmirror-As-Of": "current"})
                return response

        def work(mirror: Mirror) -> Response:
            shown_as: dict[str, Any] = {}
            response = study_response(*study_text(mirror, wanted, params, mirror.as_of, shown_as))
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
            with sizes_lock:
                if key not in sizes:
                    sizes.clear()
                    sizes[key] = size_stats(mirror)
            return JSONResponse(sizes[key])

        return await answer(request, work, api=True)

    def listed_parameter(request: Request, name: str) -> list[str] | None:
        return listed(",".join(request.query_params.getlist(name)) or None)

    async def field_values(request: Request) -> Response:
        fields, types = listed_parameter(request, "fields"), listed_parameter(request, "types")
        return await answer(request, lambda mirror: JSONResponse(field_stats.field_values(mirror, fields, types)),
                            api=True)

    async def field_sizes(request: Request) -> Response:
        fields = listed_parameter(request, "fields")
        return await answer(request, lambda mirror: JSONResponse(field_stats.field_sizes(mirror, fields)), api=True)

    async def metadata(request: Request) -> Response:
        # the spec's two booleans: the field tree served is the default one (no indexed-only or historic-only
        # fields, which the records do not have), so they are checked and change nothing
        for name in ("includeIndexedOnly", "includeHistoricOnly"):
            value = request.query_params.get(name)
            if value is not None and value.lower() not in ("true", "false"):
                return PlainTextResponse(f"{name} must be true or false, not {value!r}", status_code=400)
        return JSONResponse(field_tree())

    async def enums(request: Request) -> Response:
        return JSONResponse(enumerations())

    async def areas(request: Request) -> Response:
        return await answer(request, lambda mirror: JSONResponse(search_areas(mirror)), api=True)

    return [Route("/api/v2/studies", search), Route("/api/v2/studies/metadata", metadata),
            Route("/api/v2/studies/search-areas", areas), Route("/api/v2/studies/enums", enums),
            Route("/api/v2/studies/{nct_id}", one_study), Route("/api/v2/version", version),
            Route("/api/v2/stats/size", size), Route("/api/v2/stats/field/values", field_values),
            Route("/api/v2/stats/field/sizes", field_sizes)]


def size_stats(mirror: Mirror) -> dict[str, Any]:
    """GET /api/v2/stats/size: the stored records' sizes over the studies shown."""
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
# The index's areas whose words have no synonyms in the registry's search-areas listing.
NO_SYNONYM_AREAS = ("NCTId", "LeadSponsorName", "CollaboratorName", *IDENTIFIER_AREAS)


@cache
def _field_types() -> dict[str, tuple[bool, str]]:
    """Piece name → (whether an enumeration, its type as the search-areas listing writes it: the enum's name,
    markup or text), from the field tree (/studies/metadata)."""
    return {node["piece"]: (bool(node.get("isEnum")), node["type"].removesuffix("[]"))
            for _path, node in field_nodes() if not node.get("children")}


def _search_part(area: str, weight: float) -> dict[str, Any]:
    is_enum, kind = _field_types().get(area, (False, "text"))
    return {"pieces": [area], "weight": weight, "isEnum": is_enum,
            "isSynonyms": not is_enum and area not in NO_SYNONYM_AREAS, "type": "nct" if area == "NCTId" else kind}


def search_areas(mirror: Mirror) -> list[dict[str, Any]]:
    """GET /api/v2/studies/search-areas: the search index's areas and weights, and the other searches' pieces."""
    areas = [dict(zip(("field", "area", "weight"), row))
             for row in mirror.con.execute(read_sql("serve/queries.sql", "search_areas")).fetchall()]
    documents = []
    for name, param, field in SEARCH_DOCUMENTS:
        parts = [_search_part(a["area"], float(a["weight"])) for a in areas if a["field"] == field]
        if field == "term":  # the study IDs, found whole apart from the index's texts
            parts += [_search_part(area, IDENTIFIER_WEIGHT) for area in IDENTIFIER_AREAS]
        documents.append({"name": name, "param": param, "parts": parts})
    for name, param, pieces in OTHER_SEARCH_DOCUMENTS:
        documents.append({"name": name, "param": param, "parts": [
            {"pieces": list(pieces), "weight": 1.0, "isEnum": False, "isSynonyms": False, "type": "text"}]})
    return [{"name": "Study", "areas": documents}]
