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
from ingest.publish import RUN_COUNTS, completed_run, publish, record_run


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
        self.recorded = False  # its run is recorded (published, or recorded with nothing to publish)

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
        state = publish(self.warehouse, run=record, con=self.normalizer.con, on_phase=self.on_phase)
        self.recorded = True
        return state

    def publish_if_new(self, record: dict, *, always: bool = False) -> tuple[State, bool]:
        """(state, published): a new state if a segment holds versions or quarantined records that no published
        state shows (this run's, or a killed run's), or `always`; else the run is only recorded and the current
        state stays (it answers the same)."""
        if always or unpublished_segments(self.warehouse):
            return self.publish(record), True
        record_run(self.warehouse, record)
        self.recorded = True
        return self.warehouse.latest_state(), False

    def close(self) -> None:
        if self._normalizer is not None:
            self._normalizer.close()
            self._normalizer = None


def unpublished_segments(warehouse: Warehouse) -> bool:
    """Whether a segment holds versions or quarantined records that no published state shows (a writer killed
    between normalising and publishing): the next load publishes them even if it adds nothing itself."""
    current = warehouse.current_state()
    shown = set(current.meta.get("segments", [])) if current is not None else set()
    if current is not None and current.meta.get("generation", warehouse.generation) != warehouse.generation:
        shown = set()
    for segment in warehouse.segments():
        counts = segment.meta.get("counts", {})
        added = counts.get("versions_added") or counts.get("quarantine_rows_added", counts.get("quarantined"))
        if segment.segment_id not in shown and added:
            return True
    return False


@contextmanager
def writer_run(warehouse: Warehouse, *, command: str, source: str,
               on_record: Callable[[int], None] | None = None,
               on_phase: Callable[[str], None] | None = None) -> Iterator[WriterRun]:
    """The one way a run writes: one writer at a time (a second fails at once, readers never wait); on any
    failure its scratch and half-written folders are removed and nothing is recorded or published. on_record:
    told of the records normalised; on_phase: of each step of publishing, as it starts."""
    started, run = utc_now(), None
    try:
        with warehouse.writing():
            run = WriterRun(warehouse, command, source, on_record, on_phase)
            try:
                yield run
            finally:
                run.close()
    except BaseException as exc:
        if run is None or not run.recorded:
            record_failed_run(warehouse, command=command, source=source, started=started, error=exc,
                              counts=run.counts() if run is not None else None)
        raise


def record_failed_run(warehouse: Warehouse, *, command: str, source: str, started: str, error: BaseException,
                      counts: dict[str, int] | None) -> None:
    """A run that failed (or was interrupted), in runs.ndjson beside the completed ones: `status` shows it and the
    next publish's sync_runs holds it (status 'failed' or 'interrupted', the error in note). What the run had
    committed is kept and published by the next run. Never raises: the run's own error is what the user sees."""
    if isinstance(error, GeneratorExit):
        return
    interrupted = isinstance(error, (KeyboardInterrupt, SystemExit))
    message = "interrupted" if interrupted else f"{type(error).__name__}: {str(error).strip()}"
    hint = getattr(error, "hint", None)
    try:
        run = completed_run(run_id=new_run_id(), command=command, source=source, origin="", started=started,
                            finished=utc_now(), counts=counts or dict.fromkeys(RUN_COUNTS, 0),
                            note=message[:2_000] + (f" (hint: {hint})" if hint else ""))
        run["status"] = "interrupted" if interrupted else "failed"
        record_run(warehouse, run)
    except Exception:  # a full disk, a warehouse folder that is not there: nothing to record into
        pass
