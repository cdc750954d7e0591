"""Mirror: the read-only Python entry point to a warehouse (or a frozen snapshot)."""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import polars as pl

from ctmirror.core.duck import record_pandas_absent
from ctmirror.core.errors import InvalidArgument, StateNotFound, WarehouseError
from ctmirror.core.sqlfiles import CATALOG_MACROS, catalog_digests, macro_sql, read_sql, sql_files
from ctmirror.core.warehouse import State, Warehouse
from ctmirror.core.words import query_norm
from ctmirror.read import arguments
from ctmirror.read.answers import answer_saying_left_out, install_call_arguments, make_argument_tables, rows_of
from ctmirror.read.methods import Methods
from ctmirror.read.phrase_hits import install_phrase_hits
from ctmirror.read.phrase_texts import install_phrase_texts
from ctmirror.read.readonly import check_query, engine_error, open_reader, query_error
from ctmirror.read.registry import METHODS, STATISTIC_ARGUMENTS, Method
from ctmirror.read.word_postings import install_word_postings

Answer = TypeVar("Answer")


class Mirror(Methods):
    """Opens one published state of a warehouse read-only; every query sees that state, whatever syncs do.

    A Mirror may be shared by threads: its calls take turns on its one connection (a lock, uncontended for one
    thread). For calls that run side by side, open a Mirror per thread (or use `ctmirror serve`, which does).
    long_running=True, for a reader that will answer thousands of calls (a backtest): it holds the search index's
    rows of a field in memory after a few calls of it (up to some 400 MB and 3 s at 500,000 studies, once per
    catalog in the process), where a default reader does after twenty-odd.

    >>> m = Mirror("warehouse")
    >>> m.sql("SELECT overall_status, count(*) AS n FROM studies GROUP BY ALL ORDER BY n DESC")
    """

    def __init__(self, warehouse: str | Path | None = None, *, state: str | None = None,
                 as_of: date | str | None = None, threads: int | None = None,
                 memory_limit: str | None = None, exact_only: bool = False, long_running: bool = False) -> None:
        record_pandas_absent()
        self.lock = threading.RLock()  # every use of the connection and of the call state below holds it
        self.warehouse = Warehouse(warehouse)
        self.resolved_root = self.warehouse.root.resolve()  # its links followed, once for every lookup
        self._pinned: dict[object, Mirror] = {}
        self._collecting: list[tuple[Mirror, Method, dict[str, Any]]] | None = None
        self.prepared_calls: set[str] = set()  # the methods' call queries prepared on this connection
        self.shaped_plans: dict[str, None] = {}  # search's, by shape, least recently used first
        self.argument_tables: set[str] = set()  # the statements that made the methods' arguments tables here
        self.as_of: date | None = None
        self._threads, self._memory_limit = threads, memory_limit
        # at a cutoff, only studies whose version of that day is held (no reconstruction): leak-proof backtests
        self.exact_only = exact_only
        # A reader that will answer thousands of calls (a server's, a backtest's) holds a field's rows after a few
        # calls of it rather than after twenty-odd (word_postings.py, phrase_hits.py): memory for speed sooner.
        self.long_running = long_running
        self._lease: weakref.finalize | None = None  # the state's lease (Warehouse.lease) while this Mirror is open
        manifest = self.warehouse.root / "snapshot.json"
        self._is_snapshot = manifest.exists()
        if self._is_snapshot:  # a frozen snapshot folder: its own state, pinned to its cutoff
            meta = json.loads(manifest.read_text())
            self.state = State(f"snapshot-{meta['cutoff']}", self.warehouse.root, meta)
            self.as_of = date.fromisoformat(meta["cutoff"])
        else:
            self.state, lease = self._leased_state(state)
            self._lease = weakref.finalize(self, os.close, lease)  # let go when closed, or when collected unclosed
        if as_of is not None and self.as_of is None:
            self.as_of = arguments.cutoff(as_of)
        try:
            self._connect()
        except BaseException:
            self._let_go()
            raise

    def _leased_state(self, state_id: str | None) -> tuple[State, int]:
        """The state to read and its lease. The current state may be replaced and pruned between reading the link
        and taking the lease: then the new current state is taken."""
        for _ in range(5):
            found = self.warehouse.state(state_id)
            lease = self.warehouse.lease(found)
            if lease is not None:
                return found, lease
            if state_id is not None:
                break
        raise StateNotFound(f"state {state_id or found.state_id} was pruned as it was opened",
                            hint="open the warehouse again for its current state")

    def _let_go(self) -> None:
        if self._lease is not None:
            self._lease()  # closes the lease's descriptor once, however often it is called

    def _connect(self) -> None:
        if not self.state.catalog.is_file():
            raise WarehouseError(f"state {self.state.state_id} has no catalog ({self.state.catalog} is missing)",
                                 hint="run `ctmirror republish` to publish the data again (raw/ and segments are "
                                      "untouched), or `ctmirror rebuild` if that fails")
        try:
            self.con = open_reader(self.state.catalog, *self._folders(), threads=self._threads,
                                   memory_limit=self._memory_limit, exact_only=self.exact_only)
        except duckdb.Error as exc:
            raise WarehouseError(f"cannot open the catalog of state {self.state.state_id}: "
                                 f"{str(exc).splitlines()[0]}",
                                 hint="run `ctmirror republish`, or `ctmirror rebuild` if that fails") from exc
        self._check_catalog()  # before anything is prepared: it may install macros
        # Scattered words intersected outside the plan (ctmirror/read/word_postings.py), over the catalog's macros.
        self.word_versions = install_word_postings(self.con, self.state.catalog, long_running=self.long_running)
        # A query's phrases and concepts found outside the plan too (ctmirror/read/phrase_texts.py).
        self.phrase_texts = install_phrase_texts(self.con, self.state.catalog)
        # ...and their versions, from the search_hit rows the reader reads or holds (ctmirror/read/phrase_hits.py).
        self.phrase_hits = install_phrase_hits(self.con, self.state.catalog, self.phrase_texts,
                                               long_running=self.long_running)
        self.prepared_calls = set()
        self.shaped_plans = {}
        self.argument_tables = set()
        make_argument_tables(self, [*METHODS.values(), STATISTIC_ARGUMENTS])
        self.call_arguments: dict[str, Any] = {}  # a call alone's arguments, which its query reads from functions
        install_call_arguments(self)

    def _folders(self) -> tuple[Path, list[Path]]:
        """(root, allowed): the folder the catalog's views name files relative to, and the folders below which
        this reader may read: a snapshot's own folder; a state's folder and the segments it reads."""
        root = self.resolved_root
        if self._is_snapshot:
            return root, [root]
        generation = self.state.meta.get("generation") or self.warehouse.generation
        return root, [self.state.path.resolve(), root / "segments" / generation]

    @property
    def frozen(self) -> bool:
        """Whether this mirror reads a frozen snapshot, whose rows are already as of its cutoff."""
        return self._is_snapshot

    def _reconnect(self) -> None:
        try:
            self.con.close()
        except duckdb.Error:
            pass
        self._connect()

    def recovering(self, work: Callable[[], Answer]) -> Answer:
        """Runs work(), a call on this mirror's connection. After an internal error DuckDB refuses every further
        query on the database ("invalidated"), though a reader has changed nothing: one was seen, rarely, inside
        its window operator. So the mirror reconnects and runs the call once more; a second failure is raised as
        a WarehouseError. A damaged or vanished file of the state becomes the error that says what to do."""
        try:
            try:
                return work()
            except (duckdb.InternalException, duckdb.FatalException) as first:
                self._reconnect()
                try:
                    return work()
                except (duckdb.InternalException, duckdb.FatalException) as again:
                    raise WarehouseError(f"DuckDB failed twice on this call: {again}".splitlines()[0],
                                         hint="report it with the call; other calls go on working") from first
        except duckdb.Error as exc:
            damage = engine_error(exc, f"state {self.state_id} of {self.warehouse.root}")
            if damage is not None and not self.state.path.exists():
                raise StateNotFound(f"state {self.state_id} was pruned while this Mirror had it open (newer syncs "
                                    "published since)",
                                    hint="open the warehouse again for its current state; pin a state a long job "
                                         "needs with `ctmirror pin STATE`") from exc
            if damage is not None:
                raise damage from exc
            raise

    def _check_catalog(self) -> None:
        """Reads the catalog's digests (publish/queries.sql, catalog_format): tables and views from other SQL than this
        version's are refused with the way out; macros alone from other SQL are replaced, on this connection, by this
        version's (temporary macros, which DuckDB finds before the catalog's), so the state reads as is."""
        tables, macros = catalog_digests()
        try:
            found = self.con.execute(read_sql("calls/queries.sql", "catalog_format")).fetchone()
        except duckdb.Error:  # a catalog from before the digests
            found = None
        if found is None or found[0] != tables:
            self.con.close()
            what = "snapshot" if self._is_snapshot else "state"
            hint = ("build the snapshot again (`ctmirror snapshot` into a new folder); nothing else changes"
                    if self._is_snapshot else
                    "run `ctmirror republish`: it publishes the same data again with this version (no reloading)")
            raise WarehouseError(f"{what} {self.state.state_id} was published by another version of ctmirror, whose "
                                 "tables this one does not read", hint=hint)
        if found[1] != macros:
            for name in [name for folder in CATALOG_MACROS for name in sql_files(folder)]:
                self.con.execute(macro_sql(name).replace("CREATE OR REPLACE MACRO", "CREATE OR REPLACE TEMP MACRO"))

    @property
    def state_id(self) -> str:
        return self.state.state_id

    def sql(self, query: str, params: dict[str, Any] | list[Any] | None = None, *,
            limit: int | None = None) -> pl.DataFrame:
        """Runs one query (SELECT) with bound parameters; returns a polars DataFrame. Anything else is refused
        (ReadOnlyViolation), and the connection can read no file outside this state. limit: at most this many
        rows, as part of the plan DuckDB runs (the rest is never computed)."""
        self._check_sql(query)
        with self.lock:
            if limit is None:
                return self.answering(lambda: self.con.execute(query, params).pl())
            return self.answering(lambda: self.con.sql(query, params=params).limit(limit).pl())

    def rows(self, query: str, params: dict[str, Any] | list[Any] | None = None) -> list[dict[str, Any]]:
        """As `sql`, as a list of dicts."""
        self._check_sql(query)
        with self.lock:
            return self.answering(lambda: rows_of(self.con.execute(query, params)))

    def expansions(self, term: str, field: str = "condition") -> list[dict[str, Any]]:
        """What a query term finds besides itself in a field ('condition', 'intervention' or 'term', the free
        text of query.term), as of this mirror's cutoff: the phrases of its synonym groups (sql/data/'s synonym
        files, an imported MeSH thesaurus), the MeSH headings and the other drug names the records teach, with up
        to five of the studies that taught each (docs/methods.md, "How words match")."""
        if field not in ("condition", "intervention", "term"):
            raise InvalidArgument(f"field must be condition, intervention or term, not {field!r}",
                                  invalid_input=field)
        normed = query_norm(arguments.text("term", term))
        with self.lock:
            return self.recovering(lambda: rows_of(self.con.execute(
                read_sql("calls/expansions.sql"), {"field": field, "term": normed, "as_of": self.as_of})))

    def _check_sql(self, query: str) -> None:
        check_query(query)
        if self.as_of is not None and not self.frozen:
            # The tables hold every version and the current state: SQL here would see past the cutoff.
            raise InvalidArgument(f"this mirror answers its methods as of {self.as_of}, but its tables are the "
                                  "warehouse's own (every version, the current state): SQL on them would see past "
                                  "the cutoff", invalid_input=self.as_of.isoformat(),
                                  recovery_hint=f"write a snapshot (`ctmirror snapshot --as-of {self.as_of} --out "
                                                "DIR`) and query it, or open the warehouse without as_of")

    def answering(self, work: Callable[[], Answer]) -> Answer:
        """Runs work(), user SQL, as `recovering` does; the engine's refusal of the query is its QueryFailed."""
        try:
            return self.recovering(work)
        except duckdb.Error as exc:
            raise query_error(exc) from exc

    def batch(self, calls: list[tuple[str, dict]]) -> list[Any]:
        """Runs [(method name, keyword arguments), ...], any method of the registry, and returns the answers in
        order. Every call is validated before any query runs; then each set-wise method's calls on each pinned
        state are answered together, CALLS_PER_QUERY to a query, which is what makes a backtest's thousands of
        calls fast. The others (search, which pages with cursors, and the statistics) run call by call, after."""
        with self.lock:
            return self._batch(calls)

    def _batch(self, calls: list[tuple[str, dict]]) -> list[Any]:
        for name, kwargs in calls:
            if name not in METHODS:
                raise InvalidArgument(f"unknown method {name!r}: one of {', '.join(METHODS)}", invalid_input=name)
            if METHODS[name].kind != "set-wise":
                self.validated(METHODS[name], (), kwargs)  # now: the set-wise ones are validated as they are recorded
        recorded: list[tuple[Mirror, Method, dict[str, Any]]] = []
        positions: list[int] = []  # recorded[i] is the call at positions[i]
        for position, (name, kwargs) in enumerate(calls):
            if METHODS[name].kind == "set-wise":
                self._collecting = recorded
                try:
                    self.call(name, **kwargs)
                finally:
                    self._collecting = None
                positions.append(position)
        groups: dict[tuple[int, str], list[int]] = {}
        for index, (mirror, method, _) in enumerate(recorded):
            groups.setdefault((id(mirror), method.name), []).append(index)
        results: list[Any] = [None] * len(calls)
        for indexes in groups.values():
            mirror, method, _ = recorded[indexes[0]]
            found = answer_saying_left_out(mirror, method, [recorded[i][2] for i in indexes])
            for index, result in zip(indexes, found):
                results[positions[index]] = result
        for position, (name, kwargs) in enumerate(calls):
            if METHODS[name].kind != "set-wise":
                results[position] = self.call(name, **kwargs)
        return results

    def at_state(self, state_id: str) -> Mirror:
        """The same warehouse as it was at another kept state (StateNotFound if no longer kept)."""
        with self.lock:
            other = self._pinned.get(state_id)
            if other is None:
                other = self._pinned[state_id] = Mirror(self.warehouse.root, state=state_id,
                                                        long_running=self.long_running)
            return other

    def exact_sibling(self) -> Mirror:
        """This state as an exact-only reader reads it (holdout="exact"): at a cutoff, no reconstructed study."""
        with self.lock:
            other = self._pinned.get("exact")
            if other is None:
                other = self._pinned["exact"] = Mirror(self.warehouse.root, state=self.state_id, as_of=self.as_of,
                                                       threads=self._threads, exact_only=True,
                                                       long_running=self.long_running)
            return other

    def strict_sibling(self) -> Mirror:
        """This state as a strict reader reads it: reconstructions shown (self, unless self is exact-only)."""
        if not self.exact_only:
            return self
        with self.lock:
            other = self._pinned.get("strict")
            if other is None:
                other = self._pinned["strict"] = Mirror(self.warehouse.root, state=self.state_id, as_of=self.as_of,
                                                        threads=self._threads, long_running=self.long_running)
            return other

    def close(self) -> None:
        with self.lock:
            for other in self._pinned.values():
                other.close()
            self.con.close()
            self._let_go()

    def __enter__(self) -> Mirror:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
