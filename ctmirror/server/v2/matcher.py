"""Essie trees evaluated inside DuckDB: each term a named subquery from one leaf query of sql/serve/, combined
by AND, OR and NOT."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any

from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.words import search_norm
from ctmirror.read.answers import PARAMETER
from ctmirror.server import essie
from ctmirror.server.records import enum_value, leaf_pieces
from ctmirror.server.v2 import record_areas
from ctmirror.server.v2.areas import (
    DATE_AREAS,
    EXPANSION_LEVELS,
    IDENTIFIER_AREAS,
    STRUCTURED_AREAS,
    WORD_BY_WORD,
    Context,
    area_context,
)
from ctmirror.server.v2.bounds import bound
from ctmirror.server.v2.errors import V2Error
from ctmirror.server.v2.request import (
    NCT_ID,
)

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror


# ---- matching ------------------------------------------------------------------------------------------------
# The terms one request may hold: each is a subquery DuckDB plans, and planning grows faster than their number,
# holding a reader all along (bench/README.md has the figures).
MAX_TERMS = 64
# A leaf's parameters that are our own names: a search field, its areas, a value's test, how far its words
# expand (see _page): literals, so a plan knows them (a branch of scattered words never taken is planned away).
OWN_KEYS = ("field", "areas", "test", "expand", "relax", "how")




class Matcher:
    """Evaluates Essie trees on one Mirror at one cutoff, inside DuckDB, as one statement: each term's matches are a
    named subquery of the request's query (from one of the leaf queries, its values bound under names of the term's
    own), and AND, OR and NOT combine them (combine_*.sql), so a broad term's hundred thousand versions never leave
    DuckDB. Nothing is made on the connection: a temporary table a term would change its catalog, after which
    DuckDB plans every statement prepared on it again (and a request made four). Subquery names are ours."""

    def __init__(self, mirror: Mirror, as_of: date | None) -> None:
        self.mirror, self.as_of = mirror, as_of
        self.terms: list[tuple[str, str]] = []
        self.params: dict[str, Any] = {}
        self.own: list[str] = []  # the params that are our own names (OWN_KEYS), written in as literals
        self.combined: set[str] = set()  # the terms that combine two others (AND, OR, NOT)
        self.read_twice: set[str] = set()  # the terms another term's {among} reads besides its combination
        self.restrictable: set[str] = set()  # text terms whose {among} is still open (text_leaf.sql)
        self.leaves = 0
        self._universe: str | None = None

    def _term(self, query: str, **params: Any) -> str:
        name = f"essie_term_{len(self.terms) + 1}"
        self.terms.append((name, PARAMETER.sub(lambda m: f"${name}_{m[1]}" if m[1] in params else m[0], query)))
        self.params.update({f"{name}_{key}": value for key, value in params.items()})
        self.own.extend(f"{name}_{key}" for key in params if key in OWN_KEYS)
        return name

    def leaf_table(self, leaf: str, **params: Any) -> str:
        self.leaves += 1
        if self.leaves > MAX_TERMS:
            raise V2Error(f"the request's Essie expressions hold more than {MAX_TERMS} terms (words, phrases and "
                          "AREA[...] values joined by AND, OR and NOT): ctmirror answers at most that many in one "
                          "request; split it into several")
        return self._term(read_sql(f"serve/{leaf}.sql"), **params)

    def combine(self, how: str, left: str, right: str) -> str:
        if how == "and" and left in self.restrictable:
            self._restrict(left, right)
        name = self._term(read_sql(f"serve/combine_{how}.sql").replace("{left}", left).replace("{right}", right))
        self.combined.add(name)
        return name

    def _restrict(self, text_term: str, other: str) -> None:
        """Has a text term group and score its hits among `other`'s versions alone, as their AND keeps no more: a
        broad condition's tens of thousands among a drug's hundreds (the drug's term is read twice, so it is
        materialized). The text term, a leaf that reads no other, moves after `other`, which it now reads."""
        self.restrictable.discard(text_term)
        at = next(i for i, (name, _) in enumerate(self.terms) if name == text_term)
        _, query = self.terms.pop(at)
        among = "".join(line for line in read_sql("serve/queries.sql", "among").splitlines(keepends=True)
                        if not line.startswith("--"))  # an expression, spliced into a line of text_leaf.sql
        query = query.replace("{among}", among.strip().replace("{other}", other))
        self.terms.insert(next(i for i, (name, _) in enumerate(self.terms) if name == other) + 1, (text_term, query))
        self.read_twice.add(other)

    def found(self, last: str) -> str:
        """The versions and scores of term `last`, as a subquery holding every term it reads. A combination of two
        terms is MATERIALIZED: DuckDB's planner inlines a CTE into its reader and pushes filters down through it,
        and over a chain of combinations that work doubled with each term. A term alone is inlined, as it plans
        best."""
        materialized = self.combined | self.read_twice
        terms = ",\n".join(f"{name} AS {'MATERIALIZED ' if name in materialized else ''}(\n"
                            f"{query.replace('{among}', 'true').strip()}\n)" for name, query in self.terms)
        return f"(WITH {terms}\nSELECT version_no, score FROM {last})"

    def universe(self) -> str:
        if self._universe is None:
            self._universe = self.leaf_table("shown_versions", as_of=self.as_of)
        return self._universe

    def evaluate(self, node: object, context: Context) -> str:
        if isinstance(node, essie.And):
            positives = [self.evaluate(p, context) for p in node.parts if not isinstance(p, essie.Not)]
            negatives = [self.evaluate(p.expression, context) for p in node.parts if isinstance(p, essie.Not)]
            result = positives[0] if positives else self.universe()
            for table in positives[1:]:
                result = self.combine("and", result, table)
            for table in negatives:
                result = self.combine("not", result, table)
            return result
        if isinstance(node, essie.Or):
            result = self.evaluate(node.parts[0], context)
            for part in node.parts[1:]:
                result = self.combine("or", result, self.evaluate(part, context))
            return result
        if isinstance(node, essie.Not):
            return self.combine("not", self.universe(), self.evaluate(node.expression, context))
        if isinstance(node, essie.All):
            return self.universe()
        if isinstance(node, essie.Boost):
            inner = self.evaluate(node.expression, context)
            return self._term(read_sql("serve/queries.sql", "boost").replace("{inner}", inner), factor=node.factor)
        if isinstance(node, essie.Tilt):
            dated = area_context(node.field)
            if dated is None or dated.kind != "value" or dated.field not in DATE_AREAS:
                raise V2Error(f"TILT[{node.field}] takes a date field ({', '.join(DATE_AREAS[:6])}, ...)")
            inner = self.evaluate(node.expression, context)
            return self._term(read_sql("serve/queries.sql", "tilt").replace("{inner}", inner), field=dated.field,
                              as_of=self.as_of)
        if isinstance(node, essie.Expansion):
            return self.evaluate(node.expression, replace(context, expansion=node.level))
        if isinstance(node, essie.Search):
            return self.one_site(node.expression)
        if isinstance(node, essie.Coverage):
            return self.evaluate(node.expression, replace(context, coverage=node.how))
        if isinstance(node, essie.Area) and isinstance(node.expression, essie.Distance):
            if leaf_pieces().get(node.field.lower()) != GEO_POINT:
                raise V2Error(f"DISTANCE[...] applies to AREA[{GEO_POINT}] (a site's point), not AREA[{node.field}]")
            point = node.expression
            return self.leaf_table("distance_leaf", lat=point.lat, lon=point.lon, km=point.km)
        if isinstance(node, essie.Area) and node.field.lower().endswith(":size"):
            listed = record_areas.list_field(node.field[:-len(":size")])
            if listed is None:
                raise V2Error(f"AREA[{node.field}]: :size takes a list field (Phase, Condition, Location, ...: see "
                              "/api/v2/stats/field/sizes)")
            found = record_areas.matching_sizes(self.mirror, self.as_of, listed, node.expression)
            return self.leaf_table("versions_leaf", versions=",".join(map(str, found)))
        if isinstance(node, essie.Area):
            inner, piece = area_context(node.field), leaf_pieces().get(node.field.lower())
            if isinstance(node.expression, essie.Missing) and piece and inner and inner.kind != "value":
                inner = Context("record", piece)  # a text area's MISSING: no value in the records
            if inner is None:
                raise V2Error(f"AREA[{node.field}] names no field of the study record and no search area: see "
                              "/api/v2/studies/metadata (a piece name or field path) and /api/v2/studies/search-areas")
            return self.evaluate(node.expression, replace(inner, expansion=context.expansion,
                                                          coverage=context.coverage))
        return self.leaf(node, context)

    def leaf(self, node: object, context: Context) -> str:
        if context.kind == "record":
            found = record_areas.matching_versions(self.mirror, self.as_of, context.field, node, context.coverage)
            return self.leaf_table("versions_leaf", versions=",".join(map(str, found)))
        if context.coverage != "contains" and context.kind in SPONSOR_KINDS and isinstance(node, essie.Words):
            # a sponsor's whole name, its first words or its last (AREA[LeadSponsorName]COVERAGE[FullMatch]"...")
            return self.leaf_table(f"{context.kind}_leaf", phrase=node.text, how=context.coverage)
        if context.coverage != "contains":
            if context.kind != "text" or not isinstance(node, essie.Words):
                raise V2Error("COVERAGE[...] applies to words in the text areas (/api/v2/studies/search-areas), "
                              "not to this term")
            return self.leaf_table("chosen_texts_leaf", field=context.field, how=context.coverage,
                                   term=search_norm(node.text), areas=list(context.areas) if context.areas else None)
        if context.kind == "value":
            return self._value(node, context.field)
        if isinstance(node, essie.Distance):
            raise V2Error(f"DISTANCE[...] applies to AREA[{GEO_POINT}] (a site's point)")
        if isinstance(node, (essie.Range, essie.Missing)):
            raise V2Error(f"{'RANGE' if isinstance(node, essie.Range) else 'MISSING'} applies to a structured "
                          f"field (AREA[{'|'.join(STRUCTURED_AREAS[:4])}|...]), not to a text search")
        if isinstance(node, essie.Prefix):
            if context.kind != "text":
                raise V2Error(f"a wildcard ({node.text}*) applies to the text areas (/api/v2/studies/search-areas), "
                              "not to this one")
            return self.leaf_table("chosen_texts_leaf", field=context.field, how="prefix",
                                   term=search_norm(node.text).strip(),
                                   areas=list(context.areas) if context.areas else None)
        text = node.text
        if context.kind == "text":
            expand, relax = EXPANSION_LEVELS[context.expansion]
            normed = search_norm(text)
            # (the free text's matcher finds the organisation's and secondary study IDs too, as BasicSearch does)
            name = self.leaf_table("text_leaf", field=context.field, phrase=('"' if node.quoted else "") + normed,
                                   as_of=self.as_of, areas=list(context.areas) if context.areas else None,
                                   expand=expand, relax=relax and not node.quoted and len(normed.split()) > 1)
            self.restrictable.add(name)
            return name
        if context.kind in WORD_BY_WORD and not node.quoted and len(search_norm(text).split()) > 1:
            # unquoted words each found, in any order: Essie's word semantics
            return self.evaluate(essie.And(tuple(essie.Words(w) for w in search_norm(text).split())), context)
        if context.kind == "design":
            return self.leaf_table("design_leaf", field=context.field, value=enum_value(text))
        if context.kind == "healthy":
            if text.strip().upper() not in ("TRUE", "FALSE"):
                raise V2Error(f"AREA[HealthyVolunteers] takes true or false, not {text!r}")
            return self.leaf_table("healthy_leaf", accepted=text.strip().upper() == "TRUE")
        if context.kind == "id":
            parts = [part for part in re.split(r"[\s,|]+", text) if part]
            ids = [f"NCT{int(m.group(1)):08d}" for m in map(NCT_ID.match, parts) if m]
            found = self.leaf_table("id_leaf", ids=ids)
            others = [part for part in parts if not NCT_ID.match(part)]
            if others:  # IdSearch's other areas: the acronym ("KEYNOTE-189"), the organisation's and secondary IDs
                named = self.leaf_table("text_leaf", field="term", phrase='"' + search_norm(" ".join(others)),
                                        as_of=self.as_of, areas=["Acronym"], expand=False, relax=False)
                found = self.combine("or", found, named)
                for part in others:
                    found = self.combine("or", found, self.identifier(part, None, 1.0))
            return found
        if context.kind == "identifier":
            return self.identifier(text, list(context.areas or IDENTIFIER_AREAS), 1.0)
        if context.kind == "stored_words":
            return self.leaf_table("stored_words_leaf", field=context.field, phrase=text)
        if context.kind == "why_stopped":
            return self.leaf_table("why_stopped_leaf", phrase=text, as_of=self.as_of)
        if context.kind == "last_known":
            return self.leaf_table("last_known_leaf", value=enum_value(text), as_of=self.as_of)
        if context.kind in SPONSOR_KINDS:
            return self.leaf_table(f"{context.kind}_leaf", phrase=text, how="contains")
        leaf = {"location": "location_leaf", "outcome": "outcome_leaf", "eligibility": "eligibility_leaf"}[context.kind]
        return self.leaf_table(leaf, phrase=text)

    def one_site(self, expression: object) -> str:
        """SEARCH[Location](...): studies with one site (facility, city, state, ZIP code, country, recruitment
        status) that holds every part of one of the expression's alternatives (its OR of ANDs), each part words,
        bare or under AREA[LocationCity|...], or a status under AREA[LocationStatus]."""
        found = None
        for places, statuses in _alternatives(expression):
            phrase = ", ".join(places) or None
            if not statuses:
                site = self.leaf_table("location_leaf", phrase=phrase)
            elif len(set(statuses)) > 1:  # a site has one status
                site = self.leaf_table("no_terms")
            elif phrase is None:  # a site of that status anywhere: AREA[LocationStatus]
                site = self.leaf_table("design_leaf", field=SITE_STATUS, value=statuses[0])
            else:
                site = self.leaf_table("site_leaf", phrase=phrase, status=statuses[0])
            found = site if found is None else self.combine("or", found, site)
        return found

    def identifier(self, text: str, areas: list[str] | None, score: float) -> str:
        """The versions whose organisation's study ID or a secondary ID (within areas; None: both) is `text`."""
        return self.leaf_table("identifier_leaf", norm=search_norm(text), areas=areas, score=score)

    def _value(self, node: object, field: str) -> str:
        params: dict[str, Any] = {"field": field, "as_of": self.as_of, "value": None, "low_number": None,
                                  "high_number": None, "low_day": None, "high_day": None}
        if isinstance(node, essie.Missing):
            params["test"] = "missing"
        elif isinstance(node, essie.Range) or (isinstance(node, essie.Words) and field in DATE_AREAS):
            params["test"] = "range"  # a date given alone is the range of the day, month or year it names
            low, high = (node.low, node.high) if isinstance(node, essie.Range) else (node.text, node.text)
            for side, given in (("low", low), ("high", high)):
                if given is not None:
                    kind, value = bound(field, given, high=side == "high")
                    params[f"{side}_{kind}"] = value
        elif isinstance(node, essie.Words):
            params["test"] = "equals"
            params["value"] = enum_value(node.text)
        else:
            raise V2Error(f"AREA[{field}] takes a value, RANGE[...] or MISSING, not an expression")
        return self.leaf_table("value_leaf", **params)


# a site's fields (sql/normalize/places.sql), and its recruitment status (trial_detail's locations)
SITE_AREAS = ("LocationFacility", "LocationCity", "LocationState", "LocationZip", "LocationCountry")
SITE_STATUS = "LocationStatus"
GEO_POINT = "LocationGeoPoint"  # DISTANCE[...]'s area: a site's coordinates
# Areas of sponsors' names, which COVERAGE applies to as to the text areas (sponsor_leaf.sql, lead_sponsor_leaf.sql)
SPONSOR_KINDS = ("sponsor", "lead_sponsor")


def _alternatives(node: object) -> list[tuple[list[str], list[str]]]:
    """A SEARCH[Location] expression as alternatives (OR) of what one site must all hold (AND): the parts of its
    place, and its recruitment statuses (as the API's enumeration writes them); a V2Error for what a site cannot
    answer (NOT, another area, a range)."""
    if isinstance(node, essie.Words):
        if "," in node.text:
            raise V2Error("SEARCH[Location](...): give a place's parts as terms joined by AND, not by commas")
        return [([node.text], [])]
    if isinstance(node, essie.Area) and leaf_pieces().get(node.field.lower()) == SITE_STATUS:
        return [([], [status]) for status in _statuses(node.expression)]
    if isinstance(node, essie.Area) and leaf_pieces().get(node.field.lower()) in SITE_AREAS:
        return _alternatives(node.expression)
    if isinstance(node, essie.Or):
        return [alternative for part in node.parts for alternative in _alternatives(part)]
    if isinstance(node, essie.And):
        combined: list[tuple[list[str], list[str]]] = [([], [])]
        for part in node.parts:
            combined = [(places + more_places, statuses + more_statuses) for places, statuses in combined
                        for more_places, more_statuses in _alternatives(part)]
        return combined
    raise V2Error("SEARCH[Location](...) takes a site's place and status: words, AND, OR and AREA[LocationFacility|"
                  "LocationCity|LocationState|LocationZip|LocationCountry|LocationStatus]; not this part")


def _statuses(node: object) -> list[str]:
    """AREA[LocationStatus]'s values, one or several joined by OR."""
    if isinstance(node, essie.Words):
        return [enum_value(node.text)]
    if isinstance(node, essie.Or):
        return [status for part in node.parts for status in _statuses(part)]
    raise V2Error("SEARCH[Location](...): AREA[LocationStatus] takes a status, or statuses joined by OR "
                  "(RECRUITING OR NOT_YET_RECRUITING)")
