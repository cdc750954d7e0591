"""Essie's scattered words, intersected where versions can be skipped: a reader's matcher for search_word.

An unquoted query of several words matches a version holding each word in some text of a field's areas
(sql/methods/_matching.sql, scattered_word_versions_many). In SQL that is every word's rows of search_word grouped
by version: "alzheimer disease" groups the 366,174 versions of "disease" to keep alzheimer's 1,317, and that
grouping was most of a method's call at 500,000 studies. Here each word's versions are read once into sorted arrays
(kept, up to a budget, for the reader's later calls: a state never changes under its reader) and intersected by
binary search from the rarest word's: a few microseconds a candidate, whatever the other words' sizes.

The function answers each version packed with its areas in one 64-bit number (version_no << 16 | area_mask), which
the macro unpacks: DuckDB takes a list of two-field structs back from Python and unnests it at several times the
cost of a list of numbers.

A reader registers `intersect_word_versions` on its connection and replaces the catalog's
scattered_word_versions_many by sql/calls/word_postings.sql's, which calls it for the condition's and the
intervention's fields; the free text's, get_terminated's and search_trials' scattered words stay in SQL, where they
cost less (the macro's comment says why). Any other DuckDB client reads the catalog's macro, with the same answers.
"""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict

import duckdb
import numpy as np
import pyarrow as pa

from ctmirror.core.sqlfiles import read_sql

# A reader keeps the versions of the words it has read up to this many bytes (12 a version), the least recently
# used let go first: at 500,000 studies the commonest condition word ("disease") holds 4.4 MB of them.
CACHE_BYTES = 128 * 1024 * 1024
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
_NO_VERSIONS = np.empty(0, np.int64)
_NO_MASKS = np.empty(0, np.uint32)

# pyarrow looks for pandas once, on its first array; where ctmirror/core/duck.py has marked pandas absent, that
# first look fails (it takes the mark for a module). Made here, at import, it fails here rather than in a query.
try:
    pa.array(_NO_VERSIONS, pa.int64())
except AttributeError:
    pass


class WordVersions:
    """The versions of each word of a field (search_word's rows), read on first use through a cursor of the reader's
    own connection, and the intersection DuckDB calls as `intersect_word_versions`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, cache_bytes: int = CACHE_BYTES) -> None:
        # DuckDB calls the function from two of its threads at once (a whitespace call's drug and condition): each
        # reads its new words through a cursor of its own, side by side, and the lock guards the kept words alone.
        self._cursors: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()
        for _ in range(READING_CURSORS):
            cursor = con.cursor()
            cursor.execute(read_sql("calls/word_postings.sql", "use_catalog"))
            self._cursors.put(cursor)
        self._runs: OrderedDict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._bytes = 0
        self._cache_bytes = cache_bytes
        self._lock = threading.Lock()

    def words_held(self) -> set[tuple[str, str]]:
        """The (field, word) pairs whose versions this reader holds now."""
        with self._lock:
            return set(self._runs)

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
        found: list[np.ndarray] = [np.empty(0, np.uint64)]
        for field, words, areas in zip(fields.to_pylist(), word_lists.to_pylist(), within.to_pylist(), strict=True):
            versions, masks = self._versions_of_all(field, words, areas)
            if len(versions) and not (0 <= versions[0] and versions[-1] < VERSION_LIMIT):
                raise ValueError(f"{FUNCTION}: a version number outside 0..2^47 cannot be packed with its areas")
            found.append((versions.astype(np.uint64) << np.uint64(AREA_BITS)) | masks.astype(np.uint64))
            offsets.append(offsets[-1] + len(versions))
        return pa.ListArray.from_arrays(pa.array(np.asarray(offsets, np.int32), pa.int32()),
                                        pa.array(np.concatenate(found), pa.uint64()))

    def _versions_of_all(self, field: str | None, words: list[str] | None,
                         areas: int | None) -> tuple[np.ndarray, np.ndarray]:
        """The versions holding every word: the rarest word's, each looked up by binary search in the next rarer's."""
        if field is None or not words or any(word is None for word in words):
            return _NO_VERSIONS, _NO_MASKS
        words = list(dict.fromkeys(words))
        if len(words) > MAX_WORDS:
            raise ValueError(f"{FUNCTION} takes at most {MAX_WORDS} words a query, not {len(words)}")
        runs = self._word_runs(field, words)
        if areas is not None:
            runs = [(versions[kept], masks[kept] & areas)
                    for versions, masks in runs for kept in [(masks & areas) != 0]]
        runs.sort(key=lambda run: len(run[0]))
        versions, masks = runs[0]
        for other_versions, other_masks in runs[1:]:
            if not len(versions) or not len(other_versions):
                return _NO_VERSIONS, _NO_MASKS
            at = np.searchsorted(other_versions, versions)
            at[at == len(other_versions)] = 0
            held = other_versions[at] == versions
            versions = versions[held]
            masks = masks[held] | other_masks[at[held]]
        return versions, masks

    def _word_runs(self, field: str, words: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each word's versions (sorted) and masks, from the cache or read now."""
        with self._lock:
            runs = {}
            for word in words:
                run = self._runs.get((field, word))
                if run is not None:
                    self._runs.move_to_end((field, word))
                    runs[word] = run
        for word in words:
            if word not in runs:
                runs[word] = self._read(field, word)
        return [runs[word] for word in words]

    def _read(self, field: str, word: str) -> tuple[np.ndarray, np.ndarray]:
        """A word's versions and masks, read and kept. Its rows come as stored, in version order but for the studies
        a night's patch rewrote, sorted here then: DuckDB sorting them cost "disease" 17 ms at 500,000 studies,
        against 4."""
        cursor = self._cursors.get()  # waits while every cursor reads
        try:
            found = cursor.execute(read_sql("calls/word_postings.sql", "search_word_versions"),
                                   {"field": field, "word": word}).fetchnumpy()
        finally:
            self._cursors.put(cursor)
        versions = np.asarray(found["version_no"], np.int64)
        masks = np.asarray(found["area_mask"], np.uint32)
        if len(versions) > 1 and not bool(np.all(versions[1:] > versions[:-1])):
            order = np.argsort(versions, kind="stable")
            versions, masks = versions[order], masks[order]
        with self._lock:
            if (field, word) not in self._runs:  # another thread may have read it meanwhile
                self._runs[(field, word)] = (versions, masks)
                self._bytes += versions.nbytes + masks.nbytes
            while self._bytes > self._cache_bytes and len(self._runs) > 1:  # the least recently used go first
                old_versions, old_masks = self._runs.popitem(last=False)[1]
                self._bytes -= old_versions.nbytes + old_masks.nbytes
        return versions, masks


def install_word_postings(con: duckdb.DuckDBPyConnection) -> WordVersions:
    """Registers the intersection on a reader's connection and replaces the catalog's scattered_word_versions_many
    there by sql/calls/word_postings.sql's (a temporary macro, which DuckDB finds before the catalog's, so run this
    after any other replacement of the catalog's macros: Mirror._connect, after _check_catalog)."""
    word_versions = WordVersions(con)
    word_versions.register(con)
    con.execute(read_sql("calls/word_postings.sql", "scattered_word_versions_many"))
    return word_versions
