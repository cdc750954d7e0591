"""GET /api/v2/studies answered: a page of matches in its order, the records as stored or as of a cutoff,
projected to `fields`, as JSON or CSV."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any

from ctmirror.core.sqlfiles import read_sql, sql_literal
from ctmirror.read.answers import PARAMETER, argument_read, execute_prepared, forget_plans
from ctmirror.server.csv_columns import csv_text as write_csv
from ctmirror.server.records import legacy_markup, project
from ctmirror.server.v2.areas import (
    SORTABLE,
)
from ctmirror.server.v2.errors import V2Error
from ctmirror.server.v2.matcher import Matcher
from ctmirror.server.v2.page_tokens import (
    write_page_token,
)
from ctmirror.server.v2.request import (
    Search,
    parse_request,
)
from ctmirror.server.v2.stored import PAGE_COLUMNS, stored_records, stored_texts

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror


# ---- answering -----------------------------------------------------------------------------------------------
def studies(mirror: Mirror, params: dict[str, str], as_of: date | None, *,
            as_stored: bool = False) -> tuple[dict[str, Any], Search]:
    """The page of GET /api/v2/studies: {"studies": [...], "nextPageToken"?, "totalCount"?}. as_stored: where
    the records are served whole as stored (no `fields`, no cutoff), each is its stored JSON text (bytes), for
    page_json: parsing and writing them again was most of a page's Python."""
    search = parse_request(params, mirror)
    matcher = Matcher(mirror, as_of)
    return _page(mirror, search, matcher, _found(matcher, search), has_query=bool(search.queries), as_of=as_of,
                 as_stored=as_stored and search.fields is None and as_of is None and not search.legacy_markup), search


def _found(matcher: Matcher, search: Search) -> str:
    """The term of the studies every query of the search finds (none: every study shown, through the same query)."""
    found = None
    for context, tree in search.queries:
        matched = matcher.evaluate(tree, context)
        found = matched if found is None else matcher.combine("and", found, matched)
    return matcher.leaf_table("no_terms") if found is None else found


def matching_nct_ids(mirror: Mirror, params: dict[str, str], as_of: date | None, limit: int) -> tuple[list[str], int]:
    """The NCT IDs of the first `limit` studies a v2 query finds (by its order), and how many it finds: no record
    is read (the MCP search tool's Essie expression becomes its list of trials)."""
    search = replace(parse_request(params, mirror), page_size=limit, count_total=True)
    matcher = Matcher(mirror, as_of)
    rows = _page_rows(mirror, search, matcher, _found(matcher, search), has_query=bool(search.queries), as_of=as_of)
    nct_at = 1 + PAGE_COLUMNS.index("nct_id")
    return [row[nct_at] for row in rows[:limit]], rows[0][0] if rows else 0


# The DuckDB type of a v2 search's value, by its Python type (answers.VALUE_KINDS); a list is of texts.
ARGUMENT_KINDS = {str: "VARCHAR", list: "VARCHAR[]", int: "BIGINT", float: "DOUBLE", date: "DATE", bool: "BOOLEAN"}


def make_search_tables(mirror: Mirror) -> bool:
    """Makes the connection's serve_near table unless it is there (the server's pool does when it opens a
    Mirror, before anything is prepared on it); whether it made it."""
    create = read_sql("serve/near_table.sql")
    if create in mirror.argument_tables:
        return False
    mirror.con.execute(create)
    mirror.argument_tables.add(create)
    return True


def _literal(value: Any) -> str:
    """One of our own names or numbers as SQL (see _page): never a value the request gave."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return sql_literal(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "[" + ", ".join(sql_literal(item) for item in value) + "]::VARCHAR[]"
    raise TypeError(f"not one of ours: {value!r}")


def _page_rows(mirror: Mirror, search: Search, matcher: Matcher, found: str, *, has_query: bool,
               as_of: date | None) -> list[tuple[Any, ...]]:
    """The rows of a page: the total count, then PAGE_COLUMNS; one more row than the page, when there is more."""
    sort = search.sort + [(None, 1)] * (2 - len(search.sort))
    query_params = {"as_of": as_of, "has_query": has_query, **search.filters, **matcher.params,
                    "dir1": sort[0][1], "dir2": sort[1][1], "limit": search.page_size + 1, "offset": search.offset}
    if query_params["ids"] is not None:
        query_params["ids"] = mirror.con.execute(read_sql("serve/ids_with_aliases.sql"),
                                                 {"ids": query_params["ids"]}).fetchone()[0] or []
    geo = {name: query_params.pop(name) for name in ("geo_lat", "geo_lon", "geo_km")}
    decay = search.geo_decay
    query_params.update(near_given=geo["geo_lat"] is not None, geo_decay=decay is not None,
                        decay_func=decay and decay.func, decay_scale=decay and decay.scale_km,
                        decay_offset=decay and decay.offset_km, decay=decay and decay.decay)
    if make_search_tables(mirror):
        forget_plans(mirror)  # made after statements were prepared: they would be planned at every execution
    if query_params["near_given"]:
        mirror.con.execute(read_sql("serve/queries.sql", "clear_near"))
        mirror.con.execute(read_sql("serve/queries.sql", "fill_near"), geo)
    statement, values = _shaped(read_sql("serve/page.sql").replace(
        "{matches}", read_sql("serve/matches.sql").replace("{found}", matcher.found(found))), query_params, sort,
        own=matcher.own)
    mirror.call_arguments = values
    if query_params["near_given"]:
        # Planned afresh: DuckDB's plan keeps bounds it read from serve_near's contents when it was made, and a
        # prepared one would miss the versions outside another point's bounds.
        return mirror.con.execute(statement).fetchall()
    name = "v2_search_" + hashlib.sha256(statement.encode()).hexdigest()[:20]
    return execute_prepared(mirror, name, lambda: statement).fetchall()


def _page(mirror: Mirror, search: Search, matcher: Matcher, found: str, *, has_query: bool,
          as_of: date | None, as_stored: bool) -> dict[str, Any]:
    rows = _page_rows(mirror, search, matcher, found, has_query=has_query, as_of=as_of)
    shown = [dict(zip(PAGE_COLUMNS, row[1:])) for row in rows]
    more = len(shown) > search.page_size
    shown = shown[:search.page_size]
    if as_stored:
        texts = stored_texts(mirror, shown)
        page: dict[str, Any] = {"studies": [t if isinstance(t, bytes) else t.encode("utf-8") for t in texts]}
    else:
        records = stored_records(mirror, shown, as_of, paths=search.fields)
        page = {"studies": [shape(legacy_markup(r) if search.legacy_markup else r, search.fields) for r in records]}
    if search.count_total and search.offset == 0:
        page["totalCount"] = rows[0][0] if rows else 0
    if more:
        page["nextPageToken"] = write_page_token(mirror, search.offset + len(shown), search.fingerprint)
    return page


def _shaped(statement: str, query_params: dict[str, Any], sort: list[tuple[str | None, int]], *,
            own: list[str]) -> tuple[str, dict[str, Any]]:
    """A search's statement with each `$name` written in, and the values it reads by name (argument_read).

    Written in: an absent filter or cutoff as the NULL literal, our own names (sort fields; `own`: search fields,
    areas, a value's test) and numbers we made or validated (page bounds, directions): DuckDB folds a literal away
    with the test or choice it guards, where it evaluates a parameter's on every row (reading a column of every
    trial_card row for each filter and sort field). Every value of the request's is read, once per statement,
    from the reader's function of its type (Mirror.call_arguments holds it under its name, one of ours), so the
    text depends on the request's shape alone and is prepared once per connection."""
    written = {name: "NULL" for name, value in query_params.items() if value is None}
    for name, (field, _) in zip(("sort1", "sort2"), sort):
        if field is not None and field != "relevance" and field not in SORTABLE.values():
            raise V2Error(f"sort: {field!r} is not sortable here")
        written[name] = "NULL" if field is None else sql_literal(field)
    for name in ("has_query", "dir1", "dir2", "limit", "offset", "near_given", "geo_decay", "decay_func", *own):
        if query_params[name] is not None:
            written[name] = _literal(query_params[name])
    values = {name: value for name, value in query_params.items() if name not in written}
    for name, value in values.items():
        written[name] = argument_read(ARGUMENT_KINDS[type(value)], name)
    return PARAMETER.sub(lambda found: written.get(found[1], found[0]), statement), values


def page_json(page: dict[str, Any]) -> bytes:
    """A page as the API writes it; records given as stored JSON text (studies(as_stored=True)) are copied in."""
    if not page["studies"] or not isinstance(page["studies"][0], bytes):
        return json.dumps(page, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    rest = json.dumps({k: v for k, v in page.items() if k != "studies"}, separators=(",", ":")).encode("utf-8")
    return b'{"studies":[' + b",".join(page["studies"]) + b"]" + (b"," + rest[1:] if len(rest) > 2 else b"}")


def shape(record: dict[str, Any], paths: list[tuple[str, ...]] | None) -> dict[str, Any]:
    return record if paths is None else project(record, paths)


def csv_text(page: dict[str, Any], search: Search, *, header: bool) -> str:
    return write_csv(page["studies"], search.csv_columns or [], header=header)


