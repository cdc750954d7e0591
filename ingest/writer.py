"""One writer run, whatever it writes (load, load-aact, sync, bulk, history, rebuild): the warehouse's lock, a
normaliser on a scratch folder of the warehouse, what the run's segments added, the run's record and its publish,
and cleanup however the run ends.

    with writer_run(warehouse, command="load", source="file") as run:
        run.raw.receive_file(path, source="file")
        run.normalizer.run()
        state = run.publish(run.completed(origin=str(path)))
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ctmirror.core.raw_store import RawStore, utc_now
from ctmirror.core.warehouse import State, Warehouse
from ingest.normalize import Normalizer
from ingest.publish import completed_run, publish


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


class WriterRun:
    """A run holding the warehouse's lock. Its normaliser (and the writer's DuckDB it owns) is made on first use,
    after anything the run does first (a rebuild starts a new generation of segments)."""

    def __init__(self, warehouse: Warehouse, command: str, source: str,
                 on_record: Callable[[int], None] | None, on_phase: Callable[[str], None] | None = None) -> None:
        self.warehouse, self.command, self.source, self.on_record = warehouse, command, source, on_record
        self.on_phase = on_phase
        self.started = utc_now()
        self.first_segment = warehouse.last_segment_number()
        self.raw = RawStore(warehouse.root)
        self._normalizer: Normalizer | None = None

    @property
    def normalizer(self) -> Normalizer:
        if self._normalizer is None:
            self._normalizer = Normalizer(self.warehouse, on_record=self.on_record)
        return self._normalizer

    def counts(self) -> dict[str, int]:
        """What the segments this run committed added (a resumed run's earlier segments: see its checkpoint)."""
        return self.warehouse.counts_since(self.first_segment)

    def completed(self, *, origin: str, counts: dict[str, int] | None = None, run_id: str | None = None,
                  started: str | None = None, **details: object) -> dict:
        """This run's record as sync_runs keeps it. counts: what it added (default: what its segments added);
        details: the columns a kind of run knows (data_timestamp, removed, pages, retries, note)."""
        return completed_run(run_id=run_id or new_run_id(), command=self.command, source=self.source,
                             origin=origin, started=started or self.started, finished=utc_now(),
                             counts=self.counts() if counts is None else counts, **details)

    def publish(self, record: dict) -> State:
        """Every segment as a new state, on the writer's DuckDB; the run is recorded once it is published."""
        return publish(self.warehouse, run=record, con=self.normalizer.con, on_phase=self.on_phase)

    def close(self) -> None:
        if self._normalizer is not None:
            self._normalizer.close()
            self._normalizer = None


@contextmanager
def writer_run(warehouse: Warehouse, *, command: str, source: str,
               on_record: Callable[[int], None] | None = None,
               on_phase: Callable[[str], None] | None = None) -> Iterator[WriterRun]:
    """The one way a run writes: one writer at a time (a second fails at once, readers never wait); on any
    failure its scratch and half-written folders are removed and nothing is recorded or published. on_record:
    told of the records normalised; on_phase: of each step of publishing, as it starts."""
    with warehouse.writing():
        run = WriterRun(warehouse, command, source, on_record, on_phase)
        try:
            yield run
        finally:
            run.close()
