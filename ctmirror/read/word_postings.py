"""Essie's scattered words, intersected where versions can be skipped: a reader's matcher for search_word.

An unquoted query of several words matches a version holding each word in some text of a field's areas
(sql/methods/_matching.sql, scattered_word_versions_many). In SQL that is every word's rows of search_word grouped
by version: "alzheimer disease" groups the 366,174 versions of "disease" to keep alzheimer's 1,317, and that
grouping was most of a method's call at 500,000 studies. Here each word's versions are read once into sorted arrays
(kept, up to a budget, for the reader's later calls: a state never changes under its reader) and intersected by
binary search from the rarest word's: a few microseconds a candidate, whatever the other words' sizes. A reader that
has read many words of a field one by one (a server, a backtest) reads the field's whole search_word at once, held
for every reader of that catalog file in the process: each later word is then a slice of it rather than a query.

The function answers each version packed with its areas in one 64-bit number (version_no << 16 | area_mask), which
the macro unpacks: DuckDB takes a list of two-field structs back from Python and unnests it at several times the
cost of a list of numbers.

A reader registers `intersect_word_versions` on its connection and replaces the catalog's
scattered_word_versions_many by sql/calls/word_postings.sql's, which calls it for the condition's and the
intervention's fields; the free text's and get_terminated's scattered words stay in SQL, where they cost less (the
macro's comment says why). It also replaces words_intersected_outside_plan (true there): search_trials then takes
the condition's intersection rather than grouping its words' rows among the drug's versions. Any other DuckDB client
reads the catalog's macros, with the same answers.
"""

from __future__ import annotations

import queue
import threading
from collections import Counter, OrderedDict
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from ctmirror.core.sqlfiles import read_sql
from ctmirror.read.phrase_texts import WordRuns, byte_ordered, held_for

# A reader keeps the versions of the words it has read up to this many bytes (8 a version), the least recently
# used let go first: at 500,000 studies the commonest condition word ("disease") holds 2.9 MB of them.
CACHE_BYTES = 128 * 1024 * 1024
# After this many words of a field read one by one (a query each, 0.8 ms at the least at 500,000 studies), the
# field's whole search_word is read at once and held: at 500,000 studies the condition's 15.6 million rows (125 MB,
# read in 1.0 s) and the intervention's 26.5 million (212 MB, 1.4 s). A call on the command line never reads so many.
WHOLE_FIELD_AFTER = 64
# ...and on a long-running reader (a server's, a backtest's: Mirror(long_running=True)), which will answer thousands
# of calls: held after a few calls' words rather than after twenty-odd calls slowed by queries of one word each.
WHOLE_FIELD_AFTER_LONG_RUNNING = 16
FUNCTION = "intersect_word_versions"
# The words one query may intersect: the macros keep a query's first 32 (sql/methods/_matching.sql,
# scattered_words); a user's own call with more is refused rather than read word by word.
MAX_WORDS = 32
# Cursors reading words side by side: as many as DuckDB's threads that call the function on a reader of two cores.
READING_CURSORS = 2
RESULT_TYPE = duckdb.list_type(duckdb.sqltypes.UBIGINT)
# A version_no (version_number in sql/schema/as_of_rules.sql: a study's number, under 10^8, times 2^20, plus its
# version's ordinal) is under 2^47, so it packs above a field's 16 area bits.
AREA_BITS = 16
VERSION_LIMIT = 1 << 47
AREA_MASK = np.uint64((1 << AREA_BITS) - 1)
_NO_VERSIONS = np.empty(0, np.uint64)

# pyarrow looks for pandas once, on its first array; where ctmirror/core/duck.py has marked pandas absent, that
# first look fails (it takes the mark for a module). Made here, at import, it fails here rather than in a query.
try:
    pa.array(_NO_VERSIONS, pa.int64())
except AttributeError:
    pass


class FieldPostings(WordRuns):
    """A field's search_word held whole: for each of its words, its run of versions packed with their areas
    (version_no << 16 | area_mask, sorted)."""

    @classmethod
    def read(cls, cursor: duckdb.DuckDBPyConnection, field: str) -> FieldPostings | None:
        """The field's rows, or None where DuckDB does not order its words by code point (a reader's lookup does)."""
        counts = cursor.execute(_query("field_words"), {"field": field}).to_arrow_table()
        if not byte_ordered(counts.column("token").combine_chunks()):
            return None
        found = cursor.execute(_query("field_word_versions"), {"field": field}).fetchnumpy()
        return cls(counts, _packed(found["version_no"], found["area_mask"]))


class WordVersions:
    """The versions of each word of a field (search_word's rows), read on first use through a cursor of the reader's
    own connection, and the intersection DuckDB calls as `intersect_word_versions`. catalog: the file the reader
    attached, whose fields' whole rows it may hold (shared with the file's other readers); None: word by word only.
    long_running: it holds a field's whole rows after WHOLE_FIELD_AFTER_LONG_RUNNING words, not WHOLE_FIELD_AFTER."""

    def __init__(self, con: duckdb.DuckDBPyConnection, cache_bytes: int = CACHE_BYTES,
                 catalog: Path | None = None, long_running: bool = False) -> None:
        # DuckDB calls the function from two of its threads at once (a whitespace call's drug and condition): each
        # reads its new words through a cursor of its own, side by side, and the lock guards the kept words alone.
        self._con = con
        self._cursors = reading_cursors(con, _query("use_catalog"))
        self._runs: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._cache_bytes = cache_bytes
        self._lock = threading.Lock()
        self._held = None if catalog is None else held_for(catalog)
        self._read_one_by_one: Counter[str] = Counter()
        self._long_running = long_running
        self._let_go: set[str] = set()  # the fields whose whole rows are held and whose words kept here went

    def words_held(self) -> set[tuple[str, str]]:
        """The (field, word) pairs whose versions this reader holds now, word by word."""
        with self._lock:
            return set(self._runs)

    def fields_held(self) -> set[str]:
        """The fields whose whole rows this reader's catalog holds."""
        if self._held is None:
            return set()
        return {key[1] for key, postings in list(self._held.items.items())
                if key[0] == "search_word" and isinstance(postings, FieldPostings)}

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        con.create_function(FUNCTION, self.intersect,
                            [duckdb.sqltypes.VARCHAR, duckdb.list_type(duckdb.sqltypes.VARCHAR),
                             duckdb.sqltypes.UINTEGER],
                            RESULT_TYPE, type="arrow", null_handling="special", side_effects=False)

    def intersect(self, fields: pa.Array, word_lists: pa.Array, within: pa.Array) -> pa.Array:
        """For each row (a field, its query's words, a mask of the areas they count in or NULL for all): the versions
        holding every word, in version order, each packed with the areas of its words (OR of their masks, within
        `within`) as version_no << 16 | area_mask."""
        offsets = [0]
        found: list[np.ndarray] = [_NO_VERSIONS]
        for field, words, areas in zip(fields.to_pylist(), word_lists.to_pylist(), within.to_pylist(), strict=True):
            packed = self._versions_of_all(field, words, areas)
            found.append(packed)
            offsets.append(offsets[-1] + len(packed))
        return pa.ListArray.from_arrays(pa.array(np.asarray(offsets, np.int32), pa.int32()),
                                        pa.array(np.concatenate(found), pa.uint64()))

    def _versions_of_all(self, field: str | None, words: list[str] | None, areas: int | None) -> np.ndarray:
        """The versions holding every word, packed: the rarest word's, each looked up by binary search in the next
        rarer's."""
        if field is None or not words or any(word is None for word in words):
            return _NO_VERSIONS
        words = list(dict.fromkeys(words))
        if len(words) > MAX_WORDS:
            raise ValueError(f"{FUNCTION} takes at most {MAX_WORDS} words a query, not {len(words)}")
        runs = self._word_runs(field, words)
        if areas is not None:
            kept_areas = ~AREA_MASK | np.uint64(areas)
            runs = [run[(run & np.uint64(areas)) != 0] & kept_areas for run in runs]
        runs.sort(key=len)
        packed = runs[0]
        for other in runs[1:]:
            if not len(packed) or not len(other):
                return _NO_VERSIONS
            at = np.searchsorted(other, packed & ~AREA_MASK)
            at[at == len(other)] = 0
            held = (other[at] >> np.uint64(AREA_BITS)) == (packed >> np.uint64(AREA_BITS))
            packed = packed[held] | (other[at[held]] & AREA_MASK)
        return packed

    def _word_runs(self, field: str, words: list[str]) -> list[np.ndarray]:
        """Each word's packed versions (sorted): from the field's whole rows where they are held, else from the
        words kept or read now."""
        postings = self._whole_field(field)
        if postings is not None:
            if field not in self._let_go:
                self._let_go_words_of(field)
            return [postings.run_of(word) for word in words]
        with self._lock:
            runs = {}
            for word in words:
                run = self._runs.get((field, word))
                if run is not None:
                    self._runs.move_to_end((field, word))
                    runs[word] = run
        missing = [word for word in words if word not in runs]
        for word in missing:
            runs[word] = self._read(field, word)
        if missing and self._held is not None:
            with self._lock:
                self._read_one_by_one[field] += len(missing)
                read_enough = self._read_one_by_one[field] >= (WHOLE_FIELD_AFTER_LONG_RUNNING if self._long_running
                                                                else WHOLE_FIELD_AFTER)
            if read_enough:
                self._begin_holding_whole_field(field)
        return [runs[word] for word in words]

    def _whole_field(self, field: str) -> FieldPostings | None:
        found = None if self._held is None else self._held.items.get(("search_word", field))
        return found if isinstance(found, FieldPostings) else None

    def _begin_holding_whole_field(self, field: str) -> None:
        """Reads the field's whole rows, once for every reader of the catalog: the call that read the last word one
        by one waits for them (1.0 s for the condition's and 1.4 s for the intervention's at 500,000 studies); other
        calls meanwhile go on word by word. (Read in a thread of its own, the rows took the CPU from every call of
        the next few seconds: a first pass's p50 for detect_whitespace 21-25 ms against 17-18.)"""
        self._hold_whole_field(field)

    def _hold_whole_field(self, field: str) -> FieldPostings | None:
        """Reads the field's whole rows through a cursor of its own (the reading cursors stay free meanwhile) and
        holds them for every reader of the catalog (None: not held, and its readers go on word by word: its words
        out of byte order, or the reader closed while they were read)."""
        def read() -> FieldPostings | None:
            cursor = self._con.cursor()
            try:
                cursor.execute(_query("use_catalog"))
                return FieldPostings.read(cursor, field)
            finally:
                cursor.close()

        return self._held.hold(("search_word", field), read)

    def _let_go_words_of(self, field: str) -> None:
        """Lets go of the field's words kept word by word, once its whole rows are held."""
        with self._lock:
            self._let_go.add(field)
            for key in [key for key in self._runs if key[0] == field]:
                self._bytes -= self._runs.pop(key).nbytes

    def _read(self, field: str, word: str) -> np.ndarray:
        """A word's packed versions, read and kept. Its rows come as stored, in version order but for the studies a
        night's patch rewrote, sorted here then: DuckDB sorting them cost "disease" 17 ms at 500,000 studies,
        against 4."""
        cursor = self._cursors.get()  # waits while every cursor reads
        try:
            found = cursor.execute(_query("search_word_versions"), {"field": field, "word": word}).fetchnumpy()
        finally:
            self._cursors.put(cursor)
        packed = _packed(found["version_no"], found["area_mask"])
        if len(packed) > 1 and not bool(np.all(packed[1:] > packed[:-1])):
            packed = np.sort(packed)
        with self._lock:
            if (field, word) not in self._runs:  # another thread may have read it meanwhile
                self._runs[(field, word)] = packed
                self._bytes += packed.nbytes
            while self._bytes > self._cache_bytes and len(self._runs) > 1:  # the least recently used go first
                self._bytes -= self._runs.popitem(last=False)[1].nbytes
        return packed


def _query(name: str) -> str:
    return read_sql("calls/word_postings.sql", name)


def reading_cursors(con: duckdb.DuckDBPyConnection, use_catalog: str) -> queue.SimpleQueue[duckdb.DuckDBPyConnection]:
    """READING_CURSORS cursors of the reader's connection, each reading its catalog (`use_catalog`), for the
    threads DuckDB calls a function from to read side by side: take one with get(), put it back when done."""
    cursors: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()
    for _ in range(READING_CURSORS):
        cursor = con.cursor()
        cursor.execute(use_catalog)
        cursors.put(cursor)
    return cursors


def _packed(version_nos: np.ndarray, area_masks: np.ndarray) -> np.ndarray:
    """Versions packed with their areas, version_no << 16 | area_mask."""
    return packed_versions(version_nos, area_masks, AREA_BITS, FUNCTION)


def packed_versions(version_nos: np.ndarray, low_values: np.ndarray, low_bits: int, function: str) -> np.ndarray:
    """Versions packed above other values of `low_bits` bits (version_no << low_bits | value), in 64 bits: a
    version_no is under 2^47, so up to 17 bits fit. `function` names the caller in the error."""
    versions = np.asarray(version_nos, np.int64)
    if len(versions) and not (0 <= versions.min() and versions.max() < VERSION_LIMIT):
        raise ValueError(f"{function}: a version number outside 0..2^47 cannot be packed with its areas")
    values = np.asarray(low_values, np.uint64)
    if len(values) and int(values.max()) >> low_bits:
        raise ValueError(f"{function}: an area mask wider than {low_bits} bits cannot be packed")
    return (versions.astype(np.uint64) << np.uint64(low_bits)) | values


def install_word_postings(con: duckdb.DuckDBPyConnection, catalog: Path | None = None, *,
                          long_running: bool = False) -> WordVersions:
    """Registers the intersection on a reader's connection and replaces the catalog's scattered_word_versions_many
    and words_intersected_outside_plan there by sql/calls/word_postings.sql's (temporary macros, which DuckDB finds
    before the catalog's, so run this after any other replacement of the catalog's macros: Mirror._connect, after
    _check_catalog)."""
    word_versions = WordVersions(con, catalog=catalog, long_running=long_running)
    word_versions.register(con)
    for name in ("scattered_word_versions_many", "words_intersected_outside_plan"):
        con.execute(read_sql("calls/word_postings.sql", name))
    return word_versions
