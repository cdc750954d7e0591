"""A query's phrases and concepts, found in the texts by a reader: the catalog's field_texts_many, outside the plan.

field_texts_many (sql/methods/_matching.sql) answers, per query, the texts whose hits count: those holding one of
its phrases (the query, its synonyms, a drug's other names) and the MeSH headings linked from them, as of the
call's cutoff. In SQL that is some ninety operators a field (the synonym join, the link joins, the words'
positions, the headings), each paying DuckDB's fixed cost in every call however few rows it sees. Here the same
rows come from what the reader holds (a state never changes under it): the condition's and intervention's words
with their texts and positions (field_token, read whole on first use), the synonym groups, the other names and
the condition links, so a call's work is a few binary searches and array intersections. These are read once per
catalog file and shared by every reader of it in the process (CatalogHeld). The free text's words (search_token,
every text's) are read word by word and kept by each reader, as word_postings.py keeps search_word's.

A reader registers `field_phrase_texts` (and `field_phrase_texts_listed`, the same answer as text when short:
list_answers.py) on its connection and replaces the catalog's field_texts_many there by sql/calls/phrase_texts.sql's,
which unnests its answer. Any other DuckDB client reads the catalog's macro, with
the same rows (tests/test_phrase_texts.py compares the two).
"""

from __future__ import annotations

import bisect
import datetime
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.words import may_scatter
from ctmirror.read.list_answers import ListAnswers, register_list_functions

FUNCTION = "field_phrase_texts"
LISTED_FUNCTION = "field_phrase_texts_listed"
RESULT_TYPE = duckdb.list_type(duckdb.sqltypes.BIGINT)
# The functions' arguments: a field, a normalised query, the call's strict cutoff or NULL, whether concepts expand,
# whether the query's own phrase is left out where its words scatter (phrase_hits.py's functions take the same).
PHRASE_ARGUMENTS = [duckdb.sqltypes.VARCHAR, duckdb.sqltypes.VARCHAR, duckdb.sqltypes.DATE, duckdb.sqltypes.BOOLEAN,
                    duckdb.sqltypes.BOOLEAN]
# A reader keeps the free text's words' texts and positions up to this many bytes (8 a position), the least
# recently used let go first.
CACHE_BYTES = 64 * 1024 * 1024
# A word's position in a text fits in 32 bits, so a (text, position) pair is one 64-bit key.
POSITION_BITS = 32
_NO_KEYS = np.empty(0, np.int64)
READING = "reading"  # what CatalogHeld holds under a key while a reader reads it
_EPOCH = datetime.date(1970, 1, 1)
_NEVER = np.iinfo(np.int64).max  # a link learned on no known day counts at no cutoff


def _query(name: str) -> str:
    return read_sql("calls/phrase_texts.sql", name)


class SortedLookup:
    """Rows held as two Arrow arrays, the keys in byte order and their values, looked up by binary search: a few
    bytes a row, where a dict of Python objects would take a hundred."""

    def __init__(self, keys: pa.Array, values: pa.Array) -> None:
        self._keys = keys
        self._values = values

    @classmethod
    def read(cls, cursor: duckdb.DuckDBPyConnection, name: str, parameters: dict[str, Any] | None = None
             ) -> SortedLookup:
        """sql/calls/phrase_texts.sql's query `name`, whose rows are (key, value) ordered by key."""
        rows = cursor.execute(_query(name), parameters or {}).to_arrow_table()
        keys, values = rows.column(0).combine_chunks(), rows.column(1).combine_chunks()
        if not byte_ordered(keys):
            # bisect compares as Python does (by code point, UTF-8's byte order): DuckDB under another collation
            # would order otherwise, so the rows are put in that order here.
            order = pc.sort_indices(keys)
            keys, values = keys.take(order), values.take(order)
        return cls(keys, values)

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, i: int) -> str:
        return self._keys[i].as_py()

    def position(self, key: str) -> int | None:
        i = bisect.bisect_left(self, key)
        return i if i < len(self._keys) and self[i] == key else None

    def get(self, key: str) -> Any:
        i = self.position(key)
        return None if i is None else self._values[i].as_py()


class WordRuns:
    """Rows held whole by word: the words in byte order, each with its count of rows (`counts`: an Arrow table of
    the two, as a query gives them), and each word's run of values (`values`, the runs end to end in the words'
    order)."""

    def __init__(self, counts: pa.Table, values: np.ndarray) -> None:
        words, rows = counts.column(0).combine_chunks(), counts.column(1).combine_chunks()
        self._words = SortedLookup(words, rows)
        self._starts = np.zeros(len(words) + 1, np.int64)
        np.cumsum(rows.to_numpy(), out=self._starts[1:])
        self._values = values

    def run_of(self, word: str) -> np.ndarray:
        """The word's run of values (a view of the held array; empty for a word not held)."""
        i = self._words.position(word)
        return self._values[:0] if i is None else self._values[self._starts[i]:self._starts[i + 1]]


class TokenIndex(WordRuns):
    """field_token held whole: for each of its distinct tokens, its run of (text, position) keys, sorted. 770,000
    rows at 500,000 studies: 22 MB, read in 0.19 s by the first call that matches a condition or a drug."""

    @classmethod
    def read(cls, cursor: duckdb.DuckDBPyConnection) -> TokenIndex:
        counts = cursor.execute(_query("field_token_counts")).to_arrow_table()
        if not byte_ordered(counts.column("token").combine_chunks()):
            # the rows below come in DuckDB's order of tokens, which must be the lookup's (by code point)
            raise RuntimeError("field_token's tokens do not come in byte order from DuckDB: a reader cannot index "
                               "them (is a default collation set?)")
        rows = cursor.execute(_query("field_token_rows")).fetchnumpy()
        return cls(counts, _packed(rows["text_id"], rows["position"]))


class CatalogHeld:
    """What the readers of one catalog file hold, read once and shared by every reader of it in the process (a
    server's pool, a Mirror's siblings): the file never changes while it is read."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: dict[tuple, Any] = {}

    def hold(self, key: tuple, read: Callable[[], Any]) -> Any:
        """Reads `read()` and holds it under `key` for the catalog's readers, unless one of them holds it or is
        reading it (then None at once: the caller goes on without it). The calling reader waits for the read; a read
        that fails for want of memory, or in DuckDB (its reader closed meanwhile), is held as None, and the readers
        go on without it."""
        with self.lock:
            if key in self.items:
                return None
            self.items[key] = READING
        try:
            found = read()
        except (duckdb.Error, MemoryError):
            found = None
        with self.lock:
            self.items[key] = found
        return found


_HELD: weakref.WeakValueDictionary[tuple, CatalogHeld] = weakref.WeakValueDictionary()
_HELD_LOCK = threading.Lock()


def held_for(catalog: Path) -> CatalogHeld:
    """The shared holdings of this catalog file (by its path, inode and times: a file written anew is another)."""
    stat = catalog.stat()
    key = (str(catalog.resolve()), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is None:
            held = _HELD[key] = CatalogHeld()
        return held


class PhraseTexts:
    """The texts a field's phrases find (field_texts_many's rows), from what the reader holds, and the function
    DuckDB calls as `field_phrase_texts`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, catalog: Path, cache_bytes: int = CACHE_BYTES) -> None:
        self._cursor = con.cursor()
        self._cursor.execute(_query("use_catalog"))
        # DuckDB may call the function from two of its threads at once: reads through the cursor take turns
        self._lock = threading.Lock()
        self._held = held_for(catalog)
        self._postings: OrderedDict[str, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._cache_bytes = cache_bytes
        self._answers = ListAnswers(self.packed_texts)

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        register_list_functions(con, FUNCTION, self.texts, LISTED_FUNCTION, self.texts_listed, PHRASE_ARGUMENTS,
                                RESULT_TYPE)

    def texts(self, fields: pa.Array, queries: pa.Array, as_ofs: pa.Array, expands: pa.Array,
              skips: pa.Array) -> pa.Array:
        """For each row (a field, a normalised query, the call's strict cutoff or NULL, whether concepts expand,
        whether the query's own phrase is left out where its words scatter): its texts, each packed with whether a
        link the records taught found it (text_id << 1 | learned), in that order."""
        return self._answers.arrow_lists([fields, queries, as_ofs, expands, skips], pa.int64())

    def texts_listed(self, field: str | None, query: str | None, as_of: datetime.date | None, expand: bool | None,
                     skip: bool | None) -> str | None:
        """One row's texts (see texts) as the text of a list, or None where they are too many (list_answers.py)."""
        return self._answers.listed(field, query, as_of, expand, skip)

    def packed_texts(self, field: str | None, query: str | None, as_of: datetime.date | None, expand: bool | None,
                     skip: bool | None) -> np.ndarray:
        """One row's texts (see texts) as an array, from the function's arguments."""
        return self.field_texts(field, query, _day(as_of), bool(expand), bool(skip))

    # field_texts_many, step by step (sql/methods/_matching.sql says why each step is so).
    def field_texts(self, field: str | None, query: str | None, day: int | None, expand: bool,
                    skip_scattered: bool) -> np.ndarray:
        """One query's packed texts (see texts); day: the cutoff as days since 1970-01-01, None for the current
        state."""
        if field is None or query is None:
            return _NO_KEYS
        phrase = query.lstrip('"')
        if not phrase.strip(" "):
            return _NO_KEYS
        scatters = skip_scattered and self._scatters(query)
        own = (self._synonyms_of(field, phrase) or [phrase]) if expand else [phrase]
        phrases = {(p, False, scatters and p == phrase) for p in own}
        if expand and field in ("intervention", "term"):  # the other names of each own phrase's drug
            phrases |= {(name, True, False) for p in own for name, learned_from, is_current in self._other_names_of(p)
                        if (is_current if day is None else learned_from is not None and learned_from <= day)}
        kept: list[np.ndarray] = []
        heading_sources: list[np.ndarray] = []
        for words, learned, scattered in phrases:
            texts = self._phrase_texts(field, words)
            if not scattered:  # a scattered query's own texts: its words find their versions anyway
                kept.append((texts << 1) | int(learned))
            if not learned:
                heading_sources.append(texts)
        if expand and field in ("condition", "term") and heading_sources:
            kept.append((self._headings(np.unique(np.concatenate(heading_sources)), day) << 1) | 1)
        return np.unique(np.concatenate(kept)) if kept else _NO_KEYS

    def _scatters(self, query: str) -> bool:
        """scatters(query, true): an unquoted query of two words or more (may_scatter), one of them not a stop
        word."""
        stop_words = self._read_once(("stop_words",), lambda: frozenset(
            self._cursor.execute(_query("stop_words")).fetchone()[0]))
        return may_scatter(query) and any(word and word not in stop_words for word in query.split(" "))

    def _phrase_texts(self, field: str, phrase: str) -> np.ndarray:
        """The texts holding the phrase's words at consecutive positions: the rarest word's (text, start) pairs,
        each looked up in the others' by binary search."""
        runs = sorted((self._word_keys(field, word) - i for i, word in enumerate(phrase.strip(" ").split(" "))),
                      key=len)
        keys = runs[0]
        for other in runs[1:]:
            if not len(keys):
                break
            at = np.searchsorted(other, keys)
            at[at == len(other)] = 0
            keys = keys[other[at] == keys]
        return np.unique(keys >> POSITION_BITS)

    def _word_keys(self, field: str, word: str) -> np.ndarray:
        """A word's (text, position) pairs as sorted keys text_id << 32 | position: a condition's or intervention's
        from field_token, held whole; the free text's (search_token) read word by word and kept."""
        if field != "term":
            return self._read_once(("field_token",), lambda: TokenIndex.read(self._cursor)).run_of(word)
        with self._lock:
            keys = self._postings.get(word)
            if keys is not None:
                self._postings.move_to_end(word)
                return keys
            found = self._cursor.execute(_query("search_token_positions"), {"word": word}).fetchnumpy()
            keys = _packed(found["text_id"], found["position"])
            if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):  # as stored: sorted here if not
                keys = np.unique(keys)
            self._postings[word] = keys
            self._bytes += keys.nbytes
            while self._bytes > self._cache_bytes and len(self._postings) > 1:  # the least recently used go first
                self._bytes -= self._postings.popitem(last=False)[1].nbytes
            return keys

    def _synonyms_of(self, field: str, phrase: str) -> list[str] | None:
        """The phrases of the phrase's synonym groups in the field (search_phrases_many; None: it has none)."""
        return self._read_once(("synonyms", field), lambda: SortedLookup.read(
            self._cursor, "synonym_sets", {"field": field})).get(phrase)

    def _other_names_of(self, phrase: str) -> list[tuple[str, int | None, bool]]:
        """The names the records link to the text that is the phrase itself, each with the day it was learned and
        whether the current state holds it."""
        names = self._read_once(("other_names",), lambda: SortedLookup.read(self._cursor, "other_names"))
        return [(name["norm"], _day(name["learned_from"]), bool(name["is_current"]))
                for name in names.get(phrase) or []]

    def _headings(self, texts: np.ndarray, day: int | None) -> np.ndarray:
        """The MeSH headings condition_link links from these texts at the cutoff, other than the texts themselves."""
        from_text, to_text, learned_from, is_current = self._read_once(("condition_links",), self._condition_links)
        starts = np.searchsorted(from_text, texts, side="left")
        counts = np.searchsorted(from_text, texts, side="right") - starts
        # each text's run of links (rows starts[j] to starts[j] + counts[j] - 1), laid end to end
        rows = np.arange(counts.sum()) + np.repeat(starts - (np.cumsum(counts) - counts), counts)
        held = is_current[rows] if day is None else learned_from[rows] <= day
        rows = rows[held & (to_text[rows] != from_text[rows])]
        return np.unique(to_text[rows])

    def _condition_links(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        found = self._cursor.execute(_query("condition_links")).fetchnumpy()
        learned = found["learned_days"]
        return (np.asarray(found["text_id"], np.int64), np.asarray(found["term_text_id"], np.int64),
                np.where(np.ma.getmaskarray(learned), _NEVER, np.ma.getdata(learned)).astype(np.int64),
                np.asarray(np.ma.filled(found["is_current"], False), bool))

    def _read_once(self, key: tuple, read: Any) -> Any:
        """The catalog's `key`, read through this reader's cursor by the first reader of the process to need it."""
        found = self._held.items.get(key)
        if found is None:
            with self._held.lock, self._lock:
                found = self._held.items.get(key)
                if found is None:
                    found = self._held.items[key] = read()
        return found


def _packed(text_ids: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """(text, position) pairs as keys text_id << 32 | position."""
    return (np.asarray(text_ids, np.int64) << POSITION_BITS) | np.asarray(positions, np.int64)


def byte_ordered(keys: pa.Array) -> bool:
    """Whether strings come in the order bisect compares them (by code point: UTF-8's byte order)."""
    return len(keys) < 2 or pc.all(pc.less(keys[:-1], keys[1:])).as_py()


def _day(value: datetime.date | None) -> int | None:
    return None if value is None else (value - _EPOCH).days


def install_phrase_texts(con: duckdb.DuckDBPyConnection, catalog: Path) -> PhraseTexts:
    """Registers the function on a reader's connection to `catalog` (the file it attached) and replaces the
    catalog's field_texts_many there by sql/calls/phrase_texts.sql's (a temporary macro, found before the
    catalog's: run after any other replacement of the catalog's macros)."""
    phrase_texts = PhraseTexts(con, catalog)
    phrase_texts.register(con)
    con.execute(_query("field_texts_many"))
    return phrase_texts
