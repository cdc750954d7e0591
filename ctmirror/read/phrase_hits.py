"""A query's phrases and concepts, found in the versions by a reader: the catalog's phrase_hit_rows_many for the
condition's and the intervention's fields, outside the plan.

phrase_hit_rows_many (sql/methods/_matching.sql) joins the texts a query finds (field_texts_many: its phrases, its
synonyms, a drug's other names, the MeSH headings linked from them at the cutoff) to their versions in search_hit.
In SQL that join scans search_hit's row groups around each text, several for a text of a few hundred rows, and for a
drug's dozens of names most of the field's: about a third of a search_trials call at 500,000 studies. Here a text's
versions are a slice of the field's rows, held sorted by text (the state never changes under its reader), and the
call's are those slices laid end to end.

A reader reads the rows of each call's texts with a query of its own until it has answered WHOLE_FIELD_AFTER queries
of a field (a call on the command line answers a few), then the field's whole rows, held for every reader of that
catalog file in the process: 6.5 million rows a field at 500,000 studies, 52 MB, read in 0.3 s.

The function answers each version packed with whether a learned link found its text (the concept's lane) and its
areas, version_no << 17 | learned << 16 | area_mask, in one 64-bit number (version_no < 2^47); sql/calls/
phrase_hits.sql's phrase_hit_rows_many unpacks it. The free text's rows (term) and get_terminated's (stopped_hit)
stay in SQL. Any other DuckDB client reads the catalog's macro, with the same rows (tests/test_phrase_hits.py).
"""

from __future__ import annotations

import datetime
import threading
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from ctmirror.core.sqlfiles import read_sql
from ctmirror.read.list_answers import ListAnswers, register_list_functions
from ctmirror.read.phrase_texts import PHRASE_ARGUMENTS, PhraseTexts, held_for
from ctmirror.read.word_postings import packed_versions, reading_cursors

FUNCTION = "field_phrase_hits"
LISTED_FUNCTION = "field_phrase_hits_listed"
FIELDS = ("condition", "intervention")
RESULT_TYPE = duckdb.list_type(duckdb.sqltypes.UBIGINT)
# After this many queries of a field answered text by text (a query of search_hit each), the field's whole rows are
# read and held; on a long-running reader (Mirror(long_running=True)) after a few.
WHOLE_FIELD_AFTER = 16
WHOLE_FIELD_AFTER_LONG_RUNNING = 4
# A version's areas (fewer than 16 a field) take its low 16 bits, whether a learned link found it the 17th.
AREA_BITS = 16
LEARNED_BIT = np.uint64(1 << AREA_BITS)
_NO_HITS = np.empty(0, np.uint64)


class FieldHits:
    """Rows of search_hit held sorted by text: the texts in order, where each text's run starts, and the runs'
    versions packed with their areas (version_no << 17 | area_mask)."""

    def __init__(self, texts: np.ndarray, starts: np.ndarray, packed: np.ndarray) -> None:
        self._texts = texts
        self._starts = starts
        self._packed = packed

    @classmethod
    def of_rows(cls, text_ids: np.ndarray, version_nos: np.ndarray, area_masks: np.ndarray) -> FieldHits:
        """The rows indexed by text (sorted here by text and version where they do not come so)."""
        texts = np.asarray(text_ids, np.int64)
        packed = _packed(version_nos, area_masks)
        if len(texts) > 1 and not bool(np.all(texts[1:] >= texts[:-1])):
            order = np.lexsort((packed, texts))
            texts, packed = texts[order], packed[order]
        first = np.flatnonzero(np.r_[True, texts[1:] != texts[:-1]]) if len(texts) else np.empty(0, np.int64)
        return cls(texts[first], np.append(first, len(texts)), packed)

    def hits_of(self, packed_texts: np.ndarray) -> np.ndarray:
        """The versions of these texts (each text_id << 1 | learned), each packed with the learned bit of its text:
        the texts' runs laid end to end."""
        ids = packed_texts >> 1
        at = np.searchsorted(self._texts, ids)
        at[at == len(self._texts)] = 0
        found = self._texts[at] == ids if len(self._texts) else np.zeros(len(ids), bool)
        at, learned = at[found], (packed_texts[found] & 1).astype(np.uint64) * LEARNED_BIT
        starts, counts = self._starts[at], self._starts[at + 1] - self._starts[at]
        rows = np.arange(counts.sum()) + np.repeat(starts - (np.cumsum(counts) - counts), counts)
        return self._packed[rows] | np.repeat(learned, counts)


class PhraseHits:
    """The versions a field's phrases and concepts find (phrase_hit_rows_many's rows), from the texts the reader's
    PhraseTexts finds and the search_hit rows it reads or holds, and the functions DuckDB calls as
    `field_phrase_hits` and `field_phrase_hits_listed`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, catalog: Path, phrase_texts: PhraseTexts,
                 long_running: bool = False) -> None:
        self._con = con
        self._long_running = long_running
        self._phrase_texts = phrase_texts
        self._cursors = reading_cursors(con, _query("use_catalog"))
        self._held = held_for(catalog)
        self._lock = threading.Lock()
        self._read_text_by_text: Counter[str] = Counter()
        self._answers = ListAnswers(self._packed_hits)

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        register_list_functions(con, FUNCTION, self.hits, LISTED_FUNCTION, self.hits_listed, PHRASE_ARGUMENTS,
                                RESULT_TYPE)

    def fields_held(self) -> set[str]:
        """The fields whose whole rows this reader's catalog holds."""
        return {field for field in FIELDS if isinstance(self._held.items.get(("search_hit", field)), FieldHits)}

    def hits(self, fields: pa.Array, queries: pa.Array, as_ofs: pa.Array, expands: pa.Array,
             skips: pa.Array) -> pa.Array:
        """For each row (as field_phrase_texts takes: a field, a normalised query, the call's strict cutoff or NULL,
        whether concepts expand, whether the query's own phrase is left out where its words scatter): the versions
        holding its texts, packed (version_no << 17 | learned << 16 | area_mask), a text's versions in order."""
        return self._answers.arrow_lists([fields, queries, as_ofs, expands, skips], pa.uint64())

    def hits_listed(self, field: str | None, query: str | None, as_of: datetime.date | None, expand: bool | None,
                    skip: bool | None) -> str | None:
        """One row's versions (see hits) as the text of a list, or None where they are too many (list_answers.py)."""
        return self._answers.listed(field, query, as_of, expand, skip)

    def _packed_hits(self, field: str | None, query: str | None, as_of: datetime.date | None, expand: bool | None,
                     skip: bool | None) -> np.ndarray:
        if field not in FIELDS:
            return _NO_HITS
        texts = self._phrase_texts.packed_texts(field, query, as_of, expand, skip)
        if not len(texts):
            return _NO_HITS
        held = self._held.items.get(("search_hit", field))
        if not isinstance(held, FieldHits):
            held = self._read(field, np.unique(texts >> 1))
        return held.hits_of(texts)

    def _read(self, field: str, text_ids: np.ndarray) -> FieldHits:
        """The rows of these texts, read with a query; or, once the reader has answered WHOLE_FIELD_AFTER queries of
        the field so (WHOLE_FIELD_AFTER_LONG_RUNNING on a long-running reader), the field's whole rows, read now and
        held for every reader of the catalog (other calls meanwhile go on text by text)."""
        with self._lock:
            self._read_text_by_text[field] += 1
            read_enough = self._read_text_by_text[field] > (WHOLE_FIELD_AFTER_LONG_RUNNING if self._long_running
                                                            else WHOLE_FIELD_AFTER)
        if read_enough:
            held = self._hold_whole_field(field)
            if held is not None:
                return held
        cursor = self._cursors.get()  # waits while every cursor reads
        try:
            found = cursor.execute(_query("text_hits"), {"field": field, "texts": text_ids.tolist()}).fetchnumpy()
        finally:
            self._cursors.put(cursor)
        return FieldHits.of_rows(found["text_id"], found["version_no"], found["area_mask"])

    def _hold_whole_field(self, field: str) -> FieldHits | None:
        """Reads the field's whole rows through a cursor of its own and holds them for the catalog's readers (None:
        another reader holds them or is reading them, or they could not be read, and its readers go on text by
        text)."""
        def read() -> FieldHits:
            cursor = self._con.cursor()
            try:
                cursor.execute(_query("use_catalog"))
                found = cursor.execute(_query("field_hits"), {"field": field}).fetchnumpy()
            finally:
                cursor.close()
            return FieldHits.of_rows(found["text_id"], found["version_no"], found["area_mask"])

        return self._held.hold(("search_hit", field), read)


def _query(name: str) -> str:
    return read_sql("calls/phrase_hits.sql", name)


def _packed(version_nos: np.ndarray, area_masks: np.ndarray) -> np.ndarray:
    """Versions packed with their areas, version_no << 17 | area_mask (the learned bit left 0)."""
    if len(area_masks) and int(np.max(area_masks)) >> AREA_BITS:
        raise ValueError(f"{FUNCTION}: an area mask wider than {AREA_BITS} bits cannot be packed")
    return packed_versions(version_nos, area_masks, AREA_BITS + 1, FUNCTION)


def install_phrase_hits(con: duckdb.DuckDBPyConnection, catalog: Path, phrase_texts: PhraseTexts, *,
                        long_running: bool = False) -> PhraseHits:
    """Registers the functions on a reader's connection to `catalog` (the file it attached) and replaces the
    catalog's phrase_hit_rows_many there by sql/calls/phrase_hits.sql's (a temporary macro, found before the
    catalog's: run after any other replacement of the catalog's macros)."""
    phrase_hits = PhraseHits(con, catalog, phrase_texts, long_running=long_running)
    phrase_hits.register(con)
    con.execute(_query("phrase_hit_rows_many"))
    return phrase_hits
