"""The warehouse on disk, and the one atomic step that publishes a new state of it.

    warehouse/
      raw/              everything received, as received (ctmirror/core/raw_store.py)
      segments/gNNNN/NNNNNN/
                        append-only: the versions and quarantine rows one normalisation batch added, as
                        Parquet per table, plus segment.json (which receipts it consumed, its counts).
                        `rebuild` writes a new generation gNNNN beside the old one, so states still being
                        read keep their files; segments/GENERATION names the one in use
      states/NNNNNN/    one published state: tables/<table>/*.parquet (current version of each study: the
                        files of segments whose versions are all current, hard-linked, plus current.parquet with
                        the current rows of the others), a catalog.duckdb (views over those files, the methods as
                        macros) and state.json
      current           symlink to the published state; swapping it (os.replace) is the publish step
      tables            symlink to current/tables        (stable path for Parquet readers)
      ctmirror.duckdb   symlink to current/catalog.duckdb (stable path for `duckdb warehouse/ctmirror.duckdb`)

A reader resolves `current` once and sees that whole state; a writer never touches a published state, so
readers never see a mixture. Only one writer at a time: `Warehouse.writing()` holds an exclusive lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ctmirror.core.errors import StateNotFound, WarehouseError

# A published state's ID: six digits, never a path.
STATE_ID = re.compile(r"[0-9]{6}")
# In a state's folder of a table, the rows that publish wrote (beside the segments' files it linked).
CURRENT_ROWS_FILE = "current.parquet"
# Published states kept after a publish, the current one included. Besides them, a state a reader has open (a
# Mirror holds a lease on it) and a pinned one are kept; a state is a few GB at the registry's size, so the
# default keeps the current state alone.
DEFAULT_KEEP_STATES = int(os.environ.get("CTMIRROR_KEEP_STATES", "1"))


def default_warehouse() -> Path:
    return Path(os.environ.get("CTMIRROR_WAREHOUSE", "warehouse"))


def warehouse_containing(path: Path) -> Path | None:
    """The warehouse (or snapshot folder) a path lies in, if any: a folder up the path holding published states
    or a snapshot's manifest."""
    for folder in (Path(path).resolve(), *Path(path).resolve().parents):
        if (folder / "snapshot.json").is_file() or ((folder / "states").is_dir() and (
                (folder / "current").is_symlink() or (folder / "raw").is_dir() or (folder / ".writer.lock").exists())):
            return folder
    return None


def append_lines(path: Path, lines: list[str]) -> None:
    """Appends whole lines to a file ctmirror only ever appends to, durably. A torn last line (a crash mid-append)
    is cut off first: it was never a whole record, and the new lines must not be glued to it."""
    with open(path, "ab") as f:
        size = f.seek(0, os.SEEK_END)
        if size:
            with open(path, "rb") as tail:
                tail.seek(max(0, size - (1 << 20)))
                last = tail.read()
            cut = last.rfind(b"\n")
            if not last.endswith(b"\n") and (cut >= 0 or len(last) == size):  # the torn line's start was read
                f.truncate(size - len(last) + cut + 1)
        f.write("".join(line.rstrip("\n") + "\n" for line in lines).encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_symlink(target: str, link: Path) -> None:
    tmp = link.with_name(f".tmp-{link.name}")
    tmp.unlink(missing_ok=True)
    os.symlink(target, tmp)
    os.replace(tmp, link)


@dataclass(frozen=True)
class Segment:
    segment_id: str
    path: Path
    meta: dict

    def table_file(self, table: str) -> Path:
        return self.path / f"{table}.parquet"


@dataclass(frozen=True)
class State:
    state_id: str
    path: Path
    meta: dict

    @property
    def catalog(self) -> Path:
        return self.path / "catalog.duckdb"

    @property
    def tables(self) -> Path:
        return self.path / "tables"

    def table_files(self, table: str) -> list[Path]:
        """A table's Parquet files: a folder of them (the older layout, before ctmirror linked segments' files
        into states, was one file per table)."""
        folder = self.tables / table
        return sorted(folder.glob("*.parquet")) if folder.is_dir() else [self.tables / f"{table}.parquet"]


class Warehouse:
    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_warehouse()
        self.states_dir = self.root / "states"
        self._generation: str | None = None

    @property
    def generation(self) -> str:
        if self._generation is None:
            self._generation = self._adopted_generation()
        return self._generation

    def _adopted_generation(self) -> str:
        """The generation of segments segments/GENERATION names (the first, before any rebuild)."""
        marker = self.root / "segments" / "GENERATION"
        return marker.read_text().strip() if marker.exists() else "g0001"

    @property
    def segments_dir(self) -> Path:
        return self.root / "segments" / self.generation

    def start_generation(self) -> str:
        """A fresh, empty generation of segments (for rebuild); in use once `adopt_generation` is called."""
        number = int(self.generation[1:]) + 1
        self._generation = f"g{number:04d}"
        shutil.rmtree(self.segments_dir, ignore_errors=True)
        return self._generation

    def adopt_generation(self) -> None:
        atomic_write_text(self.root / "segments" / "GENERATION", self.generation)
        self._sweep_generations()

    def _sweep_generations(self) -> None:
        """Removes the generations of segments that neither the one in use nor any kept state reads: a rebuild's
        old generation goes once the last state reading it is pruned."""
        referenced = {s.meta.get("generation") for s in self.states()} | {self.generation}
        for folder in (self.root / "segments").glob("g*"):
            if folder.is_dir() and folder.name not in referenced:
                shutil.rmtree(folder, ignore_errors=True)

    # ---- writing -------------------------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[Warehouse]:
        """Exclusive right to write; a second writer fails at once with a clear message."""
        self.root.mkdir(parents=True, exist_ok=True)
        lock_file = open(self.root / ".writer.lock", "w")
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock_file.close()
            raise WarehouseError(
                f"another ctmirror process is writing to {self.root}",
                hint="wait for it to finish (readers are never blocked), then run the command again",
            ) from None
        try:
            self._sweep_temporaries()
            yield self
        finally:
            try:
                self._sweep_temporaries()  # a failed writer's scratch and half-written folders: the disk back at once
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)
                lock_file.close()

    def new_scratch_dir(self) -> Path:
        """A writer's scratch folder (staged batches, DuckDB's spill), inside the warehouse so that one left by a
        killed writer is swept by the next rather than left in the system's temporary folder."""
        return Path(tempfile.mkdtemp(prefix=".scratch-", dir=self.root))

    def _sweep_temporaries(self) -> None:
        """Leftovers of a writer that was killed: never referenced by anything published."""
        for leftover in self.root.glob(".scratch-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        if self.segments_dir.is_dir():
            for leftover in self.segments_dir.glob(".tmp-*"):
                shutil.rmtree(leftover, ignore_errors=True)
        # a generation newer than the adopted one that no state reads: a rebuild that failed or was killed (one
        # killed after publishing, before adopting, has a state reading it, and is kept)
        adopted = int(self._adopted_generation()[1:])
        read = {s.meta.get("generation") for s in self.states()}
        for folder in (self.root / "segments").glob("g[0-9]*"):
            if folder.is_dir() and int(folder.name[1:]) > adopted and folder.name not in read:
                shutil.rmtree(folder, ignore_errors=True)
        if self.states_dir.is_dir():
            current = os.path.basename(os.path.realpath(self.root / "current"))
            for folder in self.states_dir.iterdir():
                unpublished = not (folder / "state.json").exists()
                if unpublished and folder.name != current:
                    shutil.rmtree(folder, ignore_errors=True)

    def new_segment_dir(self) -> tuple[str, Path]:
        segments = self.segments()
        next_id = f"{(int(segments[-1].segment_id) + 1) if segments else 1:06d}"
        tmp = self.segments_dir / f".tmp-{next_id}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        return next_id, tmp

    def commit_segment(self, segment_id: str, tmp: Path, meta: dict) -> Segment:
        atomic_write_text(tmp / "segment.json", json.dumps(meta, indent=2, sort_keys=True))
        final = self.segments_dir / segment_id
        os.replace(tmp, final)
        return Segment(segment_id, final, meta)

    def new_state_dir(self) -> tuple[str, Path]:
        """A state folder under its final name (the catalog's views need final paths). It counts as
        published only once state.json is written and `current` points at it."""
        existing = sorted(p.name for p in self.states_dir.iterdir()) if self.states_dir.is_dir() else []
        numbers = [int(name) for name in existing if name.isdigit()]
        next_id = f"{(max(numbers) + 1) if numbers else 1:06d}"
        path = self.states_dir / next_id
        (path / "tables").mkdir(parents=True)
        return next_id, path

    def commit_state(self, state_id: str, path: Path, meta: dict, keep: int = DEFAULT_KEEP_STATES) -> State:
        atomic_write_text(path / "state.json", json.dumps(meta, indent=2, sort_keys=True))
        final = path
        atomic_symlink(f"states/{state_id}", self.root / "current")  # the publish step
        for name, target in (("tables", "current/tables"), ("ctmirror.duckdb", "current/catalog.duckdb")):
            link = self.root / name
            if not link.is_symlink():
                atomic_symlink(target, link)
        self._prune_states(keep)
        return State(state_id, final, meta)

    def _prune_states(self, keep: int) -> None:
        pinned = self.pinned_states()
        states = self.states()
        for state in states[: max(0, len(states) - max(keep, 1))]:
            if state.state_id not in pinned:
                self._remove_unread(state)
        self._sweep_generations()
        self._prune_snapshot_cache()

    @staticmethod
    def _remove_unread(state: State) -> None:
        """Removes a state no reader holds a lease on (see `lease`); one that is read stays for a later publish."""
        try:
            fd = os.open(state.path / "state.json", os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return
        try:
            shutil.rmtree(state.path, ignore_errors=True)
        finally:
            os.close(fd)

    @staticmethod
    def lease(state: State) -> int | None:
        """A reader's claim on a published state: a shared lock on its state.json, held by the descriptor returned
        (close it to let go). A publish removes no state a reader holds. None when the state is gone (pruned
        between finding it and taking the lease)."""
        path = state.path / "state.json"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits only while a publish removes this very state
        try:
            held = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            held = False
        if not held:
            os.close(fd)
            return None
        return fd

    def _prune_snapshot_cache(self) -> None:
        """The snapshots/ folder older versions of ctmirror built strict answers in (one snapshot per cutoff): the
        index answers at any cutoff now, so nothing reads them, and nothing else may be written under a warehouse
        (`ctmirror snapshot --out` refuses such a folder)."""
        shutil.rmtree(self.root / "snapshots", ignore_errors=True)

    def set_pinned(self, state_id: str, pinned: bool) -> set[str]:
        states = self.pinned_states()
        (states.add if pinned else states.discard)(state_id)
        atomic_write_text(self.root / "pins.json", json.dumps(sorted(states)))
        return states

    def pinned_states(self) -> set[str]:
        pins = self.root / "pins.json"
        if not pins.exists():
            return set()
        return set(json.loads(pins.read_text()))

    # ---- reading -------------------------------------------------------------------------------------
    def last_segment_number(self) -> int:
        segments = self.segments()
        return int(segments[-1].segment_id) if segments else 0

    def recorded_runs(self) -> list[dict]:
        """The runs of runs.ndjson (completed, failed, interrupted), oldest first; unreadable lines left out (the
        writer's own reading of the file is strict: ingest/publish.py)."""
        runs = []
        try:
            lines = (self.root / "runs.ndjson").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []
        for line in lines:
            try:
                run = json.loads(line)
            except ValueError:
                continue
            if isinstance(run, dict) and "run_id" in run:
                runs.append(run)
        return runs

    def counts_since(self, segment_number: int) -> dict[str, int]:
        """What the segments written after `segment_number` added (a run notes the number when it starts)."""
        totals = {"records": 0, "versions_added": 0, "studies_added": 0, "studies_changed": 0, "quarantined": 0}
        for segment in self.segments():
            if int(segment.segment_id) > segment_number:
                for key in totals:
                    totals[key] += int(segment.meta["counts"].get(key, 0))
        return totals

    def segments(self) -> list[Segment]:
        return [Segment(path.name, path, meta) for path, meta in _committed(self.segments_dir, "segment.json")]

    def states(self) -> list[State]:
        return [State(path.name, path, meta) for path, meta in _committed(self.states_dir, "state.json")]

    def current_state(self) -> State | None:
        """The published state `current` points at; None where there is no link, or it points at no state."""
        link = self.root / "current"
        if not link.is_symlink():
            return None
        path = Path(os.path.realpath(link))
        try:
            return State(path.name, path, json.loads((path / "state.json").read_text()))
        except (OSError, ValueError):
            return None

    def latest_state(self) -> State:
        """The current state, or, where `current` is missing or broken, the newest kept one."""
        current = self.current_state()
        if current is not None:
            return current
        kept = self.states()
        if kept:
            return kept[-1]
        return self.state()  # raises, saying what to do

    def state(self, state_id: str | None = None) -> State:
        """A published state: the current one, or one kept by id."""
        if state_id is None:
            current = self.current_state()
            if current is not None:
                return current
            kept = [s.state_id for s in self.states()]
            if kept:
                raise WarehouseError(
                    f"{self.root / 'current'} is missing or points at no state, though states "
                    f"{', '.join(kept)} are kept",
                    hint="run `ctmirror republish`: it publishes the newest kept state again and restores the link")
            if not self.root.is_dir():
                raise WarehouseError(f"no published data in {self.root}: there is no such folder "
                                     f"({self.root.resolve()})",
                                     hint="pass --warehouse (or set CTMIRROR_WAREHOUSE) to where it is, or build "
                                          "one: `ctmirror load --sample` (offline) or `ctmirror sync`")
            has_raw = (self.root / "raw" / "manifest.ndjson").exists()
            raise WarehouseError(
                f"no published data in {self.root}",
                hint="run `ctmirror rebuild`: raw/ holds what was received (no network needed)" if has_raw else
                     "build it first: `ctmirror load --sample` (offline) or `ctmirror sync`",
            )
        if not isinstance(state_id, str) or not STATE_ID.fullmatch(state_id):
            raise StateNotFound(f"{state_id!r} is not a state ID (six digits; `ctmirror status` lists them)",
                                hint="pass a state ID as `ctmirror status` shows it")
        path = self.states_dir / state_id
        if not (path / "state.json").exists():
            kept = ", ".join(s.state_id for s in self.states()) or "none"
            raise StateNotFound(f"state {state_id} is not kept in {self.root} (kept: {kept})",
                                hint="pin states you need to rerun later with `ctmirror pin STATE`")
        return State(state_id, path, json.loads((path / "state.json").read_text()))


def _committed(parent: Path, marker: str) -> list[tuple[Path, dict]]:
    """The folders of `parent` in name order that are committed (their marker file written last), with it read."""
    if not parent.is_dir():
        return []
    return [(path, json.loads((path / marker).read_text())) for path in sorted(parent.iterdir())
            if not path.name.startswith(".") and (path / marker).exists()]
