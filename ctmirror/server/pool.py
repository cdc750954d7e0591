"""The Mirrors a server answers on: a few read-only Mirrors of the warehouse's current state (each request takes one,
so DuckDB's work runs in parallel on separate connections), reopened on the new state when a sync publishes one,
between requests: a request always finishes on the state it started on."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

from ctmirror.core.errors import StateNotFound
from ctmirror.core.warehouse import STATE_ID, Warehouse
from ctmirror.read.mirror import Mirror
from ctmirror.server import v2

# An HTTP server's Mirrors run one DuckDB thread each: its requests run side by side, so a query's second thread
# only contends with another request. A stdio MCP server has one client, an agent that mostly waits for each answer
# before its next call: its Mirrors use every core (threads=None), which shortens each call.
READER_THREADS = 1


def freeze_startup_objects() -> None:
    """Moves the objects a server holds once it has started (its modules, the SDKs', its first Mirror) out of the
    garbage collector's sight. A full collection walked all of them, 40-50 ms a time, added to whatever call it
    fell in (MCP calls' p99 at 500,000 studies); the objects a call makes are few and short-lived."""
    gc.collect()
    gc.freeze()


class MirrorPool:
    """At most `size` Mirrors answer at once; idle ones are kept per state, those of a state no longer current are
    closed when returned."""

    def __init__(self, root: Path, *, as_of: date | None = None, size: int = 2,
                 memory_limit: str | None = None, exact_only: bool = False,
                 threads: int | None = READER_THREADS) -> None:
        self.root, self.as_of, self.size, self.memory_limit = Path(root), as_of, max(1, size), memory_limit
        self.exact_only, self.threads = exact_only, threads
        self._slots = threading.BoundedSemaphore(self.size)
        self._lock = threading.Lock()
        self._idle: dict[str, list[Mirror]] = {}
        # fails now, with the warehouse's own message, if it cannot open
        first = self._open(as_of=as_of)
        self.frozen, self._first_state = first.frozen, first.state_id
        self._idle[first.state_id] = [first]

    def _open(self, **options) -> Mirror:
        """A Mirror for requests, long-running (it holds the fields it searches soon): `threads` DuckDB threads
        (None: one a core), and the table of v2 searches' filter.geo versions made before anything is prepared."""
        mirror = Mirror(self.root, threads=self.threads, memory_limit=self.memory_limit, exact_only=self.exact_only,
                        long_running=True, **options)
        v2.make_search_tables(mirror)
        return mirror

    def current_state_id(self) -> str:
        """The state `current` points at, read from the link itself (a snapshot folder has one state only)."""
        if self.frozen:
            return self._first_state
        try:
            return os.path.basename(os.readlink(self.root / "current"))
        except OSError:
            return Warehouse(self.root).state().state_id  # raises the warehouse's own message

    @contextmanager
    def mirror(self, state_id: str | None = None) -> Iterator[Mirror]:
        """A Mirror of `state_id` (default: the current state), for one request."""
        with self._slots:
            wanted = state_id or self.current_state_id()
            with self._lock:
                idle = self._idle.get(wanted)
                mirror = idle.pop() if idle else None
            if mirror is None:
                if state_id is not None and not STATE_ID.fullmatch(state_id):
                    raise StateNotFound(f"state {state_id!r} is not one of this warehouse's",
                                        hint="start again without the page token")
                mirror = self._open(as_of=self.as_of) if self.frozen or state_id is None else \
                    self._open(state=wanted, as_of=self.as_of)
            try:
                yield mirror
            finally:
                self._put_back(mirror)

    def _put_back(self, mirror: Mirror) -> None:
        current = self.current_state_id()
        closing = []
        with self._lock:
            if mirror.state_id == current or self.frozen:
                self._idle.setdefault(mirror.state_id, []).append(mirror)
            else:
                closing.append(mirror)
            for state_id in [s for s in self._idle if s != current and not self.frozen]:
                closing.extend(self._idle.pop(state_id))
        for old in closing:
            old.close()

    def close(self) -> None:
        with self._lock:
            for mirrors in self._idle.values():
                for mirror in mirrors:
                    mirror.close()
            self._idle.clear()
