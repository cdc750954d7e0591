"""GET /api/v2/stats/field/values and /api/v2/stats/field/sizes: statistics of any field of the study record.

Every leaf field of the field tree (/api/v2/studies/metadata) has its values counted, typed as the spec's
FieldStatsType says: ENUM and STRING (how many studies have each value; a STRING's longest), DATE (earliest,
latest, the formats written), INTEGER and NUMBER (least, greatest, mean), BOOLEAN (studies with true, with false);
every list field its sizes. A handful the catalog holds as columns (VALUE_SQL, SIZE_SQL) are counted in SQL; the
others are read from the records of the studies shown, as of the reader's cutoff (what it withholds is not
counted), in one pass for all the fields a request names, and kept per state, so a field costs one pass per
process and state.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from typing import TYPE_CHECKING, Any

from ctmirror.core.sqlfiles import read_sql
from ctmirror.server.records import field_nodes, leaf_pieces, parts_decoder, record_as_of
from ctmirror.server.v2.errors import V2Error
from ctmirror.server.v2.stored import PAGE_COLUMNS, stored_texts

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror

STATS_TYPES = ("ENUM", "STRING", "DATE", "INTEGER", "NUMBER", "BOOLEAN")
TOP_VALUES = 1000  # values listed of a field, the most frequent first
TOP_PROSE_VALUES = 25  # of a markup field (prose, where nearly every value is one study's)
# Fields whose values sql/serve/field_values.sql counts, and the list fields whose sizes field_sizes.sql does.
VALUE_SQL = ("OverallStatus", "Phase", "StudyType", "Sex", "StdAge", "LeadSponsorClass", "LeadSponsorName",
             "InterventionName", "Condition", "Keyword", "LocationCountry", "LocationCity", "LocationState",
             "LocationFacility", "LocationStatus", "ConditionMeshTerm", "ConditionAncestorTerm",
             "InterventionMeshTerm")
SIZE_SQL = ("Phase", "StdAge", "Keyword", "Intervention", "Location", "ConditionMesh")
DATE_FORMATS = {4: "yyyy", 7: "yyyy-MM", 10: "yyyy-MM-dd", 16: "yyyy-MM-dd'T'HH:mm"}
RECORDS_A_BATCH = 2000


@dataclass(frozen=True)
class Field:
    piece: str
    path: tuple[str, ...]
    kind: str  # a FieldStatsType for a leaf; "LIST" for a list field
    top: int = TOP_VALUES  # how many values to list, the most frequent first


def _kind(node: dict[str, Any]) -> str:
    if node.get("isEnum"):
        return "ENUM"
    if node["type"] in ("boolean", "integer", "number"):
        return node["type"].upper()
    return "DATE" if node["sourceType"] == "DATE" else "STRING"


@cache
def catalogue() -> tuple[dict[str, Field], dict[str, Field], dict[str, str]]:
    """(leaf fields, list fields) by piece name, in the field tree's order, and every name a request may use for a
    list field (piece, alternative piece name, dotted path; lower-cased) → its piece (records.leaf_pieces names
    the leaves)."""
    leaves: dict[str, Field] = {}
    lists: dict[str, Field] = {}
    names: dict[str, str] = {}
    for path, node in field_nodes():
        if node["type"].endswith("[]"):
            lists[node["piece"]] = Field(node["piece"], path, "LIST")
            for name in (node["piece"], *node.get("altPieceNames", []), ".".join(path)):
                names.setdefault(name.lower(), node["piece"])
        if not node.get("children"):
            leaves[node["piece"]] = Field(node["piece"], path, _kind(node),
                                          TOP_PROSE_VALUES if node["sourceType"] == "MARKUP" else TOP_VALUES)
    return leaves, lists, names


def _chosen(fields: list[str] | None, known: dict[str, Field], names: dict[str, str], what: str) -> list[Field]:
    """The fields a request names (every known one when none; `names`: a name, lower-cased, → its piece), or a
    V2Error naming the first that is not one."""
    if not fields:
        return list(known.values())
    chosen = []
    for name in fields:
        piece = names.get(name.strip().lower())
        if piece not in known:
            raise V2Error(f"fields: {name!r} is not {what} of the study record (see /api/v2/studies/metadata)")
        chosen.append(known[piece])
    return chosen


# ---- reading the records ---------------------------------------------------------------------------------------
def shown_records(mirror: Mirror, trie: dict[str, Any],
                  as_of: date | None) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(row of shown_records.sql, record as of cutoff `as_of`) of every study shown at it, in NCT ID order. Only the
    parts the trie names are decoded (records.parts_decoder)."""
    rows = mirror.con.execute(read_sql("serve/shown_records.sql"), {"as_of": as_of}).fetchall()
    decode = parts_decoder(trie, as_of is not None)
    for start in range(0, len(rows), RECORDS_A_BATCH):
        shown = [dict(zip(PAGE_COLUMNS, row)) for row in rows[start:start + RECORDS_A_BATCH]]
        for row, text in zip(shown, stored_texts(mirror, shown)):
            yield row, record_as_of(decode(text), row, as_of)


def paths_trie(fields: list[Field]) -> dict[str, Any]:
    """The paths of `fields` as nested dicts; a field's piece under the key "" (no record key is empty) of the
    node its path ends at."""
    root: dict[str, Any] = {}
    for one in fields:
        node = root
        for part in one.path:
            node = node.setdefault(part, {})
        node[""] = one.piece
    return root


def walk_values(node: dict[str, Any], trie: dict[str, Any], found: Callable[[str, list | tuple], None]) -> None:
    """Tells `found` the value (as a list: a list as it is, one value alone) of each of the trie's fields in
    `node`, through lists (as LocationCity is each site's city: once per site)."""
    for key, value in node.items():  # a record's keys: fewer than the trie's, where the record was read whole
        child = trie.get(key) if key else None
        if child is None or value is None:
            continue
        items = value if isinstance(value, list) else (value,)
        piece = child.get("")
        if piece is not None:
            found(piece, items)
        if len(child) > (piece is not None):
            for item in items:
                if isinstance(item, dict):
                    walk_values(item, child, found)


def list_sizes(record: dict[str, Any], trie: dict[str, Any]) -> Counter:
    """The size of each of the trie's list fields in the record (a nested list's elements summed); a list the record
    does not hold is left out."""
    sizes: Counter = Counter()
    walk_values(record, trie, lambda piece, items: sizes.update({piece: len(items)}))
    return sizes


def gather_values(record: dict[str, Any], trie: dict[str, Any]) -> dict[str, list[Any]]:
    """The values (all of them, through lists) of each of the trie's fields in the record; a field without any is
    left out."""
    found: dict[str, list[Any]] = {}
    walk_values(record, trie, lambda piece, items: found.setdefault(piece, []).extend(items))
    return found


# ---- counting --------------------------------------------------------------------------------------------------
@dataclass
class Tally:
    """One field's statistics over the studies seen, as the spec's EnumStats ... BooleanStats say them."""
    field: Field
    missing: int = 0  # studies without a value: those seen less those with one (set by `answer`'s caller)
    present: int = 0
    counts: Counter = field(default_factory=Counter)
    longest: tuple[int, str, str] | None = None  # (length, value, NCT ID): the longest, then the least value
    numbers: list[float] = field(default_factory=list)
    formats: set[str] = field(default_factory=set)

    def add(self, nct_id: str, values: list[Any]) -> None:
        """One study's values (one or more)."""
        self.present += 1
        kind = self.field.kind
        if kind in ("INTEGER", "NUMBER"):
            self.numbers.extend(v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))
            return
        try:
            texts = set(values)
        except TypeError:  # an object where the field tree has a leaf
            texts = {_text(v) for v in values}
        if not all(type(t) is str for t in texts):  # a boolean, a number or a null where text was expected
            texts = {_text(v) for v in texts if v is not None}
        if kind == "DATE":
            self.formats.update(DATE_FORMATS.get(n, "text") for n in set(map(len, texts)))
        self.counts.update(texts)
        if kind == "STRING" and texts:
            length = max(map(len, texts))
            if self.longest is None or length >= self.longest[0]:
                self.consider(length, min(t for t in texts if len(t) == length), nct_id)

    def consider(self, length: int, text: str, nct_id: str) -> None:
        """Keeps the longest value, the least of equally long ones, with the first study (by NCT ID) holding it."""
        if self.longest is None or length > self.longest[0] or (length == self.longest[0] and text < self.longest[1]):
            self.longest = (length, text, nct_id)

    def answer(self) -> dict[str, Any]:
        one = self.field
        head = {"type": one.kind, "piece": one.piece, "field": ".".join(one.path),
                "missingStudiesCount": self.missing}
        if one.kind == "BOOLEAN":
            return {**head, "trueCount": self.counts["true"], "falseCount": self.counts["false"]}
        if one.kind in ("INTEGER", "NUMBER"):
            if not self.numbers:
                return head
            cast = int if one.kind == "INTEGER" else float
            return {**head, "min": cast(min(self.numbers)), "max": cast(max(self.numbers)),
                    "avg": math.fsum(self.numbers) / len(self.numbers)}
        if one.kind == "DATE":
            dated = sorted(self.counts)
            return {**head, "formats": sorted(self.formats), **({"min": dated[0], "max": dated[-1]} if dated else {})}
        top = sorted(self.counts.items(), key=lambda vc: (-vc[1], vc[0]))[:one.top]
        answer = {**head, "uniqueValuesCount": len(self.counts),
                  "topValues": [{"value": value, "studiesCount": n} for value, n in top]}
        if one.kind == "STRING" and self.longest is not None:
            answer["longest"] = {"length": self.longest[0], "nctId": self.longest[2], "value": self.longest[1]}
        return answer


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


# ---- answering -------------------------------------------------------------------------------------------------
# Answers kept per reader's state (warehouse, state, cutoff, exact-only, values or sizes): piece → answer; the
# KEPT_STATES asked for last.
_KEPT: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
_KEPT_LOCK = threading.Lock()
KEPT_STATES = 2


def _kept(mirror: Mirror, kind: str, pieces: list[str],
          compute: Callable[[list[str]], dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each piece's answer of the reader's state and cutoff, computed (all that are missing at once, by
    `compute(pieces)` → {piece: answer}) where this process has not kept it."""
    state = (str(mirror.warehouse.root.resolve()), mirror.state_id, mirror.as_of, mirror.exact_only, kind)
    with _KEPT_LOCK:
        missing = [p for p in pieces if p not in _KEPT.get(state, {})]
    answers = compute(missing) if missing else {}
    with _KEPT_LOCK:
        kept = _KEPT.setdefault(state, {})
        kept.update(answers)
        while len(_KEPT) > KEPT_STATES:  # the oldest first; this state, just added or kept, is not the oldest
            del _KEPT[next(k for k in _KEPT if k != state)]
        return [kept[p] for p in pieces]


def field_values(mirror: Mirror, fields: list[str] | None, types: list[str] | None = None) -> list[dict[str, Any]]:
    """GET /api/v2/stats/field/values: the statistics of each leaf field `fields` names (piece names, alternative
    names or field paths; none: every leaf field), of the `types` asked (none: all)."""
    wanted = {t.strip().upper() for t in types or []}
    for kind in wanted:
        if kind not in STATS_TYPES:
            raise V2Error(f"types: {kind!r} is not one of {', '.join(STATS_TYPES)}")
    chosen = [f for f in _chosen(fields, catalogue()[0], leaf_pieces(), "a leaf field")
              if not wanted or f.kind in wanted]

    def compute(pieces: list[str]) -> dict[str, dict[str, Any]]:
        by_piece = {f.piece: f for f in chosen}
        answers = {p: _values_in_sql(mirror, by_piece[p]) for p in pieces if p in VALUE_SQL}
        read = [by_piece[p] for p in pieces if p not in answers]
        if read:
            tallies = {f.piece: Tally(f) for f in read}
            trie, studies = paths_trie(read), 0
            for row, record in shown_records(mirror, trie, mirror.as_of):
                studies += 1
                for piece, values in gather_values(record, trie).items():
                    if values:
                        tallies[piece].add(row["nct_id"], values)
            for tally in tallies.values():
                tally.missing = studies - tally.present
            answers.update({piece: tally.answer() for piece, tally in tallies.items()})
        return answers

    return _kept(mirror, "values", [f.piece for f in chosen], compute)


def _values_in_sql(mirror: Mirror, one: Field) -> dict[str, Any]:
    tally = Tally(one)
    for value, studies, first in mirror.con.execute(read_sql("serve/field_values.sql"),
                                                    {"field": one.piece, "as_of": mirror.as_of}).fetchall():
        if value is None:
            tally.missing = studies
            continue
        tally.counts[value] = studies
        if one.kind == "STRING":
            tally.consider(len(value), value, first)
    return tally.answer()


def field_sizes(mirror: Mirror, fields: list[str] | None) -> list[dict[str, Any]]:
    """GET /api/v2/stats/field/sizes: for each list field `fields` names (none: every list field), the sizes its
    lists have in the studies shown (a nested list's elements summed over the study), with how many studies have
    each; a study without the list is not counted."""
    chosen = _chosen(fields, catalogue()[1], catalogue()[2], "a list field")

    def compute(pieces: list[str]) -> dict[str, dict[str, Any]]:
        by_piece = {f.piece: f for f in chosen}
        counted = {p: Counter(dict(mirror.con.execute(read_sql("serve/field_sizes.sql").replace(
                                                          "{list_sizes}", read_sql("serve/list_sizes.sql")),
                                                      {"field": p, "as_of": mirror.as_of}).fetchall()))
                   for p in pieces if p in SIZE_SQL}
        read = [by_piece[p] for p in pieces if p not in counted]
        if read:
            counted.update({f.piece: Counter() for f in read})
            trie = paths_trie(read)
            for _, record in shown_records(mirror, trie, mirror.as_of):
                for piece, size in list_sizes(record, trie).items():
                    if size:
                        counted[piece][size] += 1
        return {p: _sizes_answer(by_piece[p], counted[p]) for p in pieces}

    return _kept(mirror, "sizes", [f.piece for f in chosen], compute)


def _sizes_answer(one: Field, sizes: Counter) -> dict[str, Any]:
    top = sorted(sizes.items(), key=lambda sc: (-sc[1], sc[0]))
    return {"field": ".".join(one.path), "piece": one.piece,
            **({"minSize": min(sizes), "maxSize": max(sizes)} if sizes else {}), "uniqueSizesCount": len(sizes),
            "topSizes": [{"size": size, "studiesCount": n} for size, n in top[:TOP_VALUES]]}
