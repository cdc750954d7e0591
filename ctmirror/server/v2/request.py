"""A GET /api/v2/studies request parsed and checked: its parameters (a list given several times is one list),
queries, filters, sort, page and projection."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctmirror.core.sqlfiles import read_sql
from ctmirror.read import cursors
from ctmirror.read.arguments import kilometres, point_and_radius
from ctmirror.server import essie
from ctmirror.server.csv_columns import Column, columns_for
from ctmirror.server.csv_columns import paths_read as csv_paths_read
from ctmirror.server.records import UnknownField, field_paths, leaf_pieces
from ctmirror.server.v2.areas import (
    ADVANCED,
    AREA_PIECES,
    IDENTIFIER_AREAS,
    OTHER_SEARCH_DOCUMENTS,
    QUERY_PARAMETERS,
    SORTABLE,
    Context,
    area_context,
)
from ctmirror.server.v2.errors import V2Error
from ctmirror.server.v2.page_tokens import read_page_token

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror


DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 10, 1_000


AGG_FILTERS = {
    "phase": ("phases", {"0": "EARLY_PHASE1", "1": "PHASE1", "2": "PHASE2", "3": "PHASE3", "4": "PHASE4", "na": "NA"}),
    # a study for all sexes admits women and men alike, as the API's sex filter counts it
    "sex": ("sexes", {"f": ("FEMALE", "ALL"), "m": ("MALE", "ALL"), "a": ("ALL",)}),
    "status": ("statuses", {"rec": "RECRUITING", "not": "NOT_YET_RECRUITING", "act": "ACTIVE_NOT_RECRUITING",
                            "enr": "ENROLLING_BY_INVITATION", "com": "COMPLETED", "ter": "TERMINATED",
                            "wit": "WITHDRAWN", "sus": "SUSPENDED", "unk": "UNKNOWN", "ava": "AVAILABLE",
                            "nla": "NO_LONGER_AVAILABLE", "tav": "TEMPORARILY_NOT_AVAILABLE",
                            "afm": "APPROVED_FOR_MARKETING", "wdn": "WITHHELD"}),
    "studyType": ("study_types", {"int": "INTERVENTIONAL", "obs": "OBSERVATIONAL", "exp": "EXPANDED_ACCESS"}),
    "results": ("results", {"with": True, "without": False}),
}
STATUSES = {status for _, status in AGG_FILTERS["status"][1].items()}
NCT_ID = re.compile(r"^[Nn][Cc][Tt]0*([0-9]{1,8})\Z")
# geoDecay: with filter.geo and relevance order, a study's relevance times a factor of its closest site's distance
# (sql/methods/_matching.sql, geo_decay); the spec's pattern and default.
GEO_DECAY = re.compile(r"^func:(gauss|exp|linear),scale:(\d+(?:\.\d+)?)(km|mi),offset:(\d+(?:\.\d+)?)(km|mi),"
                       r"decay:(\d+(?:\.\d+)?)$")
DEFAULT_GEO_DECAY = "func:exp,scale:300mi,offset:0mi,decay:0.5"
KNOWN_PARAMETERS = {*QUERY_PARAMETERS, "filter.overallStatus", "filter.ids", "filter.advanced", "filter.geo",
                    "geoDecay", "aggFilters", "fields", "sort", "pageSize", "pageToken", "countTotal", "format",
                    "markupFormat",
                    "postFilter.overallStatus", "postFilter.ids", "postFilter.advanced", "postFilter.geo"}
# The registry's own synonym IDs, which ctmirror has not: empty, they are ignored; given, a 400.
SYNONYM_PARAMETERS = ("filter.synonyms", "postFilter.synonyms")
# Parameters that are lists: given more than once (as `requests` sends a Python list), the values are one list.
LIST_PARAMETERS = {"filter.overallStatus", "filter.ids", "postFilter.overallStatus", "postFilter.ids", "fields",
                   "aggFilters", "sort"}


def parameters(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """A request's query parameters, one value each: a list parameter given several times joined as the one
    list it means; any other given twice is refused (never one of its values silently)."""
    joined: dict[str, list[str]] = {}
    for key, value in pairs:
        joined.setdefault(key, []).append(value)
    for key, values in joined.items():
        if len(values) > 1 and key not in LIST_PARAMETERS:
            raise V2Error(f"{key} is given {len(values)} times: give it once (only "
                          f"{', '.join(sorted(LIST_PARAMETERS))} take several values, comma-separated or repeated)")
    return {key: ",".join(values) for key, values in joined.items()}


def listed(value: str | None) -> list[str] | None:
    """A comma- or pipe-separated parameter as a list (None: not given)."""
    if value is None:
        return None
    return [part.strip() for part in re.split(r"[,|]", value) if part.strip()]


@dataclass
class Search:
    """One /api/v2/studies request, parsed and checked."""
    queries: list[tuple[Context, object]]
    filters: dict[str, Any]
    sort: list[tuple[str, int]]
    page_size: int
    offset: int
    count_total: bool
    fields: list[tuple[str, ...]] | None  # the parts of each record shown (a CSV's: those its columns read)
    csv_columns: list[Column] | None
    fingerprint: str
    legacy_markup: bool = False  # markupFormat=legacy
    geo_decay: GeoDecay | None = None  # in force: filter.geo given and the order is by relevance


@dataclass(frozen=True)
class GeoDecay:
    """geoDecay, parsed: the function ('gauss', 'exp', 'linear'), its scale and offset in km, and the factor at
    the scale's distance (0 < decay < 1)."""
    func: str
    scale_km: float
    offset_km: float
    decay: float


def parse_geo_decay(value: str) -> GeoDecay:
    found = GEO_DECAY.match(value.replace(" ", ""))
    if not found:
        raise V2Error(f"geoDecay must look like {DEFAULT_GEO_DECAY} (func gauss, exp or linear; scale and offset in "
                      f"km or mi), not {value!r}")
    func, scale, scale_unit, offset, offset_unit, decay = found.groups()
    if not 0 < float(decay) < 1:
        raise V2Error(f"geoDecay: decay is the factor at the scale's distance, between 0 and 1 (exclusive), "
                      f"not {decay}")
    if kilometres(scale, scale_unit) <= 0:
        raise V2Error("geoDecay: scale must be a distance above 0")
    return GeoDecay(func, kilometres(scale, scale_unit), kilometres(offset, offset_unit), float(decay))


def wants_legacy_markup(params: dict[str, str]) -> bool:
    """markupFormat: markdown (the default, as the records are stored) or legacy (classic PRS text: see
    records.legacy_markup); applies to JSON only."""
    wanted = params.get("markupFormat", "markdown")
    if wanted not in ("markdown", "legacy"):
        raise V2Error(f"markupFormat must be markdown or legacy, not {wanted!r}")
    return wanted == "legacy" and params.get("format", "json") == "json"


def parse_request(params: dict[str, str], mirror: Mirror) -> Search:
    for name in SYNONYM_PARAMETERS:
        if params.get(name, "").strip():
            raise V2Error(f"{name} names the registry's own synonym ids (area:synonym_id), which ctmirror does "
                          "not have: leave it out, and name the condition or drug in query.cond or query.intr, which "
                          "expand to their synonyms")
    params = {k: v for k, v in params.items() if k not in SYNONYM_PARAMETERS}
    unknown = sorted(set(params) - KNOWN_PARAMETERS)
    if unknown:
        raise V2Error(f"unknown parameter {unknown[0]!r}: ctmirror supports {', '.join(sorted(KNOWN_PARAMETERS))}")
    queries = []
    for name, context in [*QUERY_PARAMETERS.items(), ("filter.advanced", ADVANCED), ("postFilter.advanced", ADVANCED)]:
        text = params.get(name)
        if text is not None and text.strip():
            try:
                queries.append((context, essie.parse(text)))
            except essie.EssieError as exc:
                raise V2Error(f"{name}: {exc} (at {exc.part!r})") from None
    filters = _filters(params)
    geo_given = filters["geo_lat"] is not None
    sort = _sort(params.get("sort"), ranked=bool(queries) or geo_given)
    fmt = params.get("format", "json")
    if fmt not in ("json", "csv"):
        raise V2Error(f"format must be json or csv, not {fmt!r}")
    legacy_markup = wants_legacy_markup(params)
    geo_decay = parse_geo_decay(params.get("geoDecay") or DEFAULT_GEO_DECAY)
    fields = listed(params.get("fields"))
    if fields and any(name.strip().lower() == QUERIED_FIELDS for name in fields):
        fields = list(dict.fromkeys(expanded for name in fields for expanded in (
            queried_fields(mirror, queries) if name.strip().lower() == QUERIED_FIELDS else [name])))
    paths = csv_columns = None
    try:
        if fmt == "csv":
            csv_columns, paths = columns_for(fields), csv_paths_read(fields)
        elif fields:
            paths = field_paths(fields)
    except UnknownField as exc:
        raise V2Error(f"fields: {str(exc)!r} is not a field of the study record "
                      "(see /api/v2/studies/metadata)") from None
    try:
        size = int(params.get("pageSize", DEFAULT_PAGE_SIZE) or DEFAULT_PAGE_SIZE)
    except ValueError:
        raise V2Error(f"pageSize must be an integer, not {params['pageSize']!r}") from None
    if size < 0:
        raise V2Error("pageSize must not be negative")
    count_total = params.get("countTotal", "false").lower()
    if count_total not in ("true", "false"):
        raise V2Error("countTotal must be true or false")
    identity = {k: v for k, v in sorted(params.items()) if k not in ("pageToken", "pageSize", "countTotal", "format",
                                                                       "fields", "markupFormat")}
    fingerprint = cursors.fingerprint(identity)
    offset = 0
    if params.get("pageToken"):
        offset = read_page_token(mirror, params["pageToken"], fingerprint)
    return Search(queries, filters, sort, min(size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE), offset,
                  count_total == "true", paths, csv_columns, fingerprint, legacy_markup,
                  geo_decay if geo_given and sort[0][0] == "relevance" else None)


# fields' special name: every field the request's queries search (the spec's `@query`).
QUERIED_FIELDS = "@query"


def queried_fields(mirror: Mirror, queries: list[tuple[Context, object]]) -> list[str]:
    """`fields=@query`: NCTId, then the pieces the request's queries search: each query parameter's search area
    (query.cond: ConditionSearch's Condition, BriefTitle, ...), and every field an AREA[...] of theirs names."""
    by_field: dict[str, list[str]] = {}
    for field, area, _ in mirror.con.execute(read_sql("serve/queries.sql", "search_areas")).fetchall():
        by_field.setdefault(field, []).append(area)
    by_kind = {QUERY_PARAMETERS[f"query.{param}"].kind: areas for _, param, areas in OTHER_SEARCH_DOCUMENTS}
    pieces = ["NCTId"]

    def searched(context: Context) -> list[str]:
        if context.kind == "text":
            areas = list(context.areas or by_field.get(context.field, []))
            return areas + (list(IDENTIFIER_AREAS) if context.field == "term" and context.areas is None else [])
        return [piece for area in by_kind.get(context.kind, ()) for piece in AREA_PIECES.get(area, (area,))]

    def walk(node: object) -> None:
        if isinstance(node, essie.Area):  # a field of the record, or a search area (ConditionSearch) searched
            piece, context = leaf_pieces().get(node.field.lower()), area_context(node.field)
            pieces.extend([piece] if piece else searched(context) if context else [])
        for child in (getattr(node, "expression", None), *getattr(node, "parts", ())):
            if child is not None:
                walk(child)

    for context, tree in queries:
        if _bare_term(tree):
            pieces.extend(searched(context))
        walk(tree)
    return [piece for piece in dict.fromkeys(pieces) if piece.lower() in leaf_pieces()]


def _bare_term(node: object) -> bool:
    """Whether the expression has a term outside every AREA[...] (searched in its parameter's own areas)."""
    if isinstance(node, essie.Area):
        return False
    children = [c for c in (getattr(node, "expression", None), *getattr(node, "parts", ())) if c is not None]
    return not children or any(_bare_term(child) for child in children)


def _filters(params: dict[str, str]) -> dict[str, Any]:
    filters: dict[str, Any] = {"statuses": None, "phases": None, "sexes": None, "study_types": None, "results": None,
                               "ids": None, "geo_lat": None, "geo_lon": None, "geo_km": None}
    for prefix in ("filter", "postFilter"):  # each given list narrows the other's
        statuses = listed(params.get(f"{prefix}.overallStatus"))
        if statuses is not None:
            bad = [s for s in statuses if s.upper() not in STATUSES]
            if bad:
                raise V2Error(f"{prefix}.overallStatus: {bad[0]!r} is not a status ({', '.join(sorted(STATUSES))})")
            filters["statuses"] = _narrowed(filters["statuses"], [s.upper() for s in statuses])
        ids = listed(params.get(f"{prefix}.ids"))
        if ids is not None:
            bad = [i for i in ids if not NCT_ID.match(i)]
            if bad:
                raise V2Error(f"{prefix}.ids: {bad[0]!r} is not an NCT ID")
            filters["ids"] = _narrowed(filters["ids"], [f"NCT{int(NCT_ID.match(i).group(1)):08d}" for i in ids])
    # postFilter.* filters as filter.* does (there are no aggregation counts to keep apart), both when both are given
    post_geo, geo = params.get("postFilter.geo"), params.get("filter.geo")
    if post_geo is not None and geo is not None and post_geo.replace(" ", "") != geo.replace(" ", ""):
        raise V2Error("filter.geo and postFilter.geo are both given, with different distances: ctmirror filters by "
                      "one distance; give one of them")
    geo_name = "filter.geo" if geo is not None else "postFilter.geo"
    geo = params.get(geo_name)
    if geo is not None:
        written = geo.replace(" ", "")
        wrapped = written.startswith("distance(") and written.endswith(")")
        found = point_and_radius(written[len("distance("):-1]) if wrapped else None
        if not found:
            raise V2Error(f"{geo_name} must be distance(latitude,longitude,distance) with km or mi, "
                          f"for example distance(39.0035707,-77.1013313,50mi); not {geo!r}")
        lat, lon, km = found
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            raise V2Error(f"{geo_name}: the latitude is between -90 and 90 and the longitude between -180 and 180, "
                          f"not {lat:g},{lon:g}")
        filters.update(geo_lat=lat, geo_lon=lon, geo_km=km)
    for pair in listed(params.get("aggFilters")) or []:
        name, _, options = pair.partition(":")
        if name not in AGG_FILTERS:
            raise V2Error(f"aggFilters: {name!r} is not supported by ctmirror (supported: {', '.join(AGG_FILTERS)})")
        column, keys = AGG_FILTERS[name]
        chosen = []
        for option in options.split():
            if option.lower() not in keys:
                raise V2Error(f"aggFilters: {name}:{option} is not an option (one of {', '.join(keys)})")
            value = keys[option.lower()]
            chosen.extend(value if isinstance(value, tuple) else [value])
        if not chosen:
            raise V2Error(f"aggFilters: {name} needs at least one option")
        if column == "results":
            filters["results"] = chosen[0] if len(set(chosen)) == 1 else None
        else:
            current = filters[column]
            filters[column] = chosen if current is None else [c for c in current if c in chosen]
    return filters


def _narrowed(current: list[str] | None, given: list[str]) -> list[str]:
    """A list filter given again (filter.* and postFilter.*): the values both name, in the first's order."""
    return given if current is None else [value for value in current if value in given]


def _sort(value: str | None, *, ranked: bool) -> list[tuple[str, int]]:
    """The sort fields and directions (1 ascending, -1 descending); by default, relevance when `ranked` (a query,
    or filter.geo: the nearest first), else none (NCT order)."""
    items = listed(value) or []
    if len(items) > 2:
        raise V2Error("sort takes at most two fields")
    sort = []
    for item in items:
        name, _, direction = item.partition(":")
        name = name.strip()
        if name == "@relevance":
            field = "relevance"
        elif leaf_pieces().get(name.lower(), "").lower() in SORTABLE:
            field = SORTABLE[leaf_pieces()[name.lower()].lower()]
        else:
            raise V2Error(f"sort: {name!r} is not sortable here (@relevance, {', '.join(SORTABLE.values())}, or "
                          "their field paths)")
        # the spec's defaults: a date descending, a number ascending, relevance descending
        direction = direction or ("asc" if field == "EnrollmentCount" else "desc")
        if direction not in ("asc", "desc"):
            raise V2Error(f"sort: {item!r}: the direction is asc or desc")
        sort.append((field, 1 if direction == "asc" else -1))
    if not sort and ranked:
        sort = [("relevance", -1)]
    return sort


