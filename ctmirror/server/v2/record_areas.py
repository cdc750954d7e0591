"""AREA[...] of any other leaf field of the study record (a result's group title, a contact's name, a reference's
citation): its values read from the records of the studies shown at the request's cutoff, as record_as_of shows
them (nothing published later), matched here, and the matching versions handed to the request's query
(sql/serve/versions_leaf.sql). The first request naming such a field reads every record shown, as the statistics
do (field_stats.py); the values are kept per state and cutoff, so later requests cost a pass over them in memory.

Matching follows the field's type in the field tree: text is matched by words (unquoted words each somewhere in the
study's values of the field, a quoted phrase contiguous; plural and case folded as everywhere), a wildcard, and
COVERAGE; an enumeration or a boolean by its value; a date and a number by RANGE or a value alone; MISSING by no
value.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.words import search_norm
from ctmirror.server import essie
from ctmirror.server.records import enum_value, first_day
from ctmirror.server.v2.bounds import bound
from ctmirror.server.v2.errors import V2Error
from ctmirror.server.v2.field_stats import (
    SIZE_SQL,
    Field,
    catalogue,
    gather_values,
    list_sizes,
    paths_trie,
    shown_records,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from ctmirror.read.mirror import Mirror

KEPT_FIELDS = 8  # fields whose values are kept, per process, the last asked
TEXT_KINDS = ("STRING",)


@dataclass
class ShownValues:
    """Every study shown at one cutoff: its version and its values of one field, as the record has them."""
    versions: list[int]
    values: list[list[Any]]
    _texts: list[list[str]] | None = None

    def texts(self) -> list[list[str]]:
        """The values as search_norm writes them (made on first use: MISSING needs none)."""
        if self._texts is None:
            self._texts = [[search_norm(str(v)) for v in values] for values in self.values]
        return self._texts


_KEPT: dict[tuple[Any, ...], ShownValues] = {}
_KEPT_LOCK = threading.Lock()


def record_field(piece: str) -> Field:
    return catalogue()[0][piece]


def shown_values(mirror: Mirror, as_of: date | None, pieces: list[str]) -> dict[str, ShownValues]:
    """Each field's values in the studies shown at `as_of`, read in one pass over the records for all that are not
    kept."""
    state = (str(mirror.warehouse.root.resolve()), mirror.state_id, as_of, mirror.exact_only)
    with _KEPT_LOCK:
        answer = {p: _KEPT.get((*state, p)) for p in pieces}
    missing = [p for p, kept in answer.items() if kept is None]
    if missing:
        fields = [record_field(p) for p in missing]
        versions: list[int] = []
        values: dict[str, list[list[Any]]] = {p: [] for p in missing}
        trie = paths_trie(fields)
        for row, record in shown_records(mirror, trie, as_of):
            versions.append(row["version_no"])
            found = gather_values(record, trie)
            for piece in missing:
                values[piece].append([v for v in found.get(piece, ()) if v is not None and v != ""])
        answer.update({p: ShownValues(versions, values[p]) for p in missing})
    _keep({(*state, piece): kept for piece, kept in answer.items()})
    return answer  # type: ignore[return-value]


def _keep(kept: dict[tuple[Any, ...], ShownValues]) -> None:
    """Keeps what was just asked (the last asked last: the oldest go first), up to KEPT_FIELDS or what was asked."""
    with _KEPT_LOCK:
        for key, values in kept.items():
            _KEPT.pop(key, None)
            _KEPT[key] = values
        while len(_KEPT) > max(KEPT_FIELDS, len(kept)):
            del _KEPT[next(iter(_KEPT))]


def list_field(name: str) -> Field | None:
    """The list field a name (piece, alternative name or field path, any case) names, or None."""
    piece = catalogue()[2].get(name.lower())
    return None if piece is None else catalogue()[1][piece]


def shown_sizes(mirror: Mirror, as_of: date | None, one: Field) -> ShownValues:
    """Each study's size of list field `one` shown at `as_of` (a nested list's elements summed over the study; 0
    without the list): from the catalog for the lists it holds (SIZE_SQL), else read from the records once; kept
    as shown_values keeps values."""
    state = (str(mirror.warehouse.root.resolve()), mirror.state_id, as_of, mirror.exact_only, "size")
    with _KEPT_LOCK:
        kept = _KEPT.get((*state, one.piece))
    if kept is None and one.piece in SIZE_SQL:  # the catalog holds its lists
        rows = mirror.con.execute(read_sql("serve/list_sizes.sql"), {"field": one.piece, "as_of": as_of}).fetchall()
        kept = ShownValues([version for version, _ in rows], [size for _, size in rows])
    if kept is None:
        trie, versions, sizes = paths_trie([one]), [], []
        for row, record in shown_records(mirror, trie, as_of):
            versions.append(row["version_no"])
            sizes.append(list_sizes(record, trie)[one.piece])
        kept = ShownValues(versions, sizes)
    _keep({(*state, one.piece): kept})
    return kept


def matching_sizes(mirror: Mirror, as_of: date | None, one: Field, node: object) -> list[int]:
    """The versions shown at `as_of` whose list field `one` has a size `node` admits: AREA[Phase:size]2 (a number),
    RANGE[2, MAX], or MISSING (none: size 0)."""
    if isinstance(node, essie.Missing):
        low = high = 0
    elif isinstance(node, (essie.Range, essie.Words)):
        low, high = (node.low, node.high) if isinstance(node, essie.Range) else (node.text, node.text)
        low, high = (None if b is None else _size_bound(one, b) for b in (low, high))
    else:
        raise V2Error(f"AREA[{one.piece}:size] takes a size, RANGE[low, high] or MISSING, not this term")
    shown = shown_sizes(mirror, as_of, one)
    return [version for version, size in zip(shown.versions, shown.values) if _within(size, low, high)]


def _size_bound(one: Field, text: str) -> int:
    if not text.strip().isdigit():
        raise V2Error(f"AREA[{one.piece}:size]: {text!r} is not a size (a whole number from 0)")
    return int(text)


def matching_versions(mirror: Mirror, as_of: date | None, piece: str, node: object, coverage: str) -> list[int]:
    """The versions shown at `as_of` whose values of field `piece` the Essie term `node` matches (under `coverage`),
    or a V2Error saying why the term does not apply to the field."""
    one = record_field(piece)
    test = _test(one, node, coverage)
    shown = shown_values(mirror, as_of, [piece])[piece]
    values = shown.texts() if one.kind in TEXT_KINDS and not isinstance(node, essie.Missing) else shown.values
    return [version for version, held in zip(shown.versions, values) if test(held)]


def _test(one: Field, node: object, coverage: str) -> Callable[[list[Any]], bool]:
    """What a study's values of the field must pass for `node` to match it."""
    if isinstance(node, essie.Missing):
        return lambda values: not values
    if coverage != "contains" and (one.kind not in TEXT_KINDS or not isinstance(node, essie.Words)):
        raise V2Error(f"COVERAGE[...] applies to words of a text field, not to AREA[{one.piece}] ({one.kind})")
    if one.kind in TEXT_KINDS:
        return _text_test(one, node, coverage)
    if one.kind in ("DATE", "INTEGER", "NUMBER"):
        low, high = _bounds(one, node)
        measure = _day if one.kind == "DATE" else _number
        return lambda values: any(_within(measure(v), low, high) for v in values)
    if not isinstance(node, essie.Words):
        raise V2Error(f"AREA[{one.piece}] ({one.kind}) takes a value or MISSING, not RANGE[...] or a wildcard")
    if one.kind == "BOOLEAN":
        wanted = node.text.strip().lower()
        if wanted not in ("true", "false"):
            raise V2Error(f"AREA[{one.piece}] takes true or false, not {node.text!r}")
        return lambda values: any(str(v).lower() == wanted for v in values)
    wanted = enum_value(node.text)  # an enumeration, as its values are written
    return lambda values: any(str(v).upper() == wanted for v in values)


def _text_test(one: Field, node: object, coverage: str) -> Callable[[list[Any]], bool]:
    if isinstance(node, essie.Prefix):
        start = " " + search_norm(node.text).strip()
        return lambda values: any(start in v for v in values)
    if not isinstance(node, essie.Words):
        raise V2Error(f"AREA[{one.piece}] takes words, a quoted phrase or a wildcard, not RANGE[...]")
    normed = search_norm(node.text)
    if not normed.strip():
        return lambda values: False
    if coverage == "fullmatch":
        return lambda values: normed in values
    if coverage == "startswith":
        return lambda values: any(v.startswith(normed) for v in values)
    if coverage == "endswith":
        return lambda values: any(v.endswith(normed) for v in values)
    if node.quoted:
        return lambda values: any(normed in v for v in values)
    words = [f" {w} " for w in normed.split()]
    return lambda values: all(any(w in v for v in values) for w in words)


def _bounds(one: Field, node: object) -> tuple[Any, Any]:
    """(low, high) of a RANGE, or of a value alone (a date stands for its whole year, month or day); None: open."""
    if isinstance(node, essie.Range):
        low, high = node.low, node.high
    elif isinstance(node, essie.Words):
        low = high = node.text
    else:
        raise V2Error(f"AREA[{one.piece}] ({one.kind}) takes RANGE[...], a value or MISSING, not this term")
    if one.kind == "DATE":
        return (None if low is None else bound(one.piece, low)[1],
                None if high is None else bound(one.piece, high, high=True)[1])
    return tuple(None if b is None else _number_bound(one, b) for b in (low, high))


def _number_bound(one: Field, text: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise V2Error(f"RANGE of AREA[{one.piece}]: {text!r} is not a number") from None


NUMBER_TEXT = re.compile(r"-?\d+(\.\d+)?")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return float(value) if isinstance(value, str) and NUMBER_TEXT.fullmatch(value) else None


def _day(value: Any) -> date | None:
    try:
        return first_day(value[:10]) if isinstance(value, str) and len(value) >= 7 else None
    except ValueError:
        return None


def _within(value: Any, low: Any, high: Any) -> bool:
    return value is not None and (low is None or value >= low) and (high is None or value <= high)
