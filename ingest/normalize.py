"""Receipts in raw/ → segments: validated, versioned, normalised Parquet rows.

Python only splits and validates records (json.loads plus a walk of the record shape); DuckDB parses each
record once more into a struct and the SQL in `sql/normalize/` turns it into one table each. Receipts are
consumed strictly in order and a segment records where it stopped (receipt id, record index), so
a killed run leaves no partial segment and the next run continues from the last committed one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ctmirror.core.duck import (
    BESIDE_PYTHON,
    all_cores,
    memory_budget,
    new_connection,
    quiet,
    side_by_side,
    write_parquet,
    writer_lanes,
)
from ctmirror.core.raw_store import RawStore, Receipt
from ctmirror.core.sqlfiles import read_sql, sql_files
from ctmirror.core.warehouse import Segment, Warehouse
from ingest.crash import crash_point
from ingest.sources import Candidate, candidates_of
from ingest.validate import MAX_RECORD_BYTES, RecordShape, duplicate_key, nct_id_in_text

BATCH_RECORDS = 10_000
BATCH_BYTES = 400 << 20
# A batch's records are parsed and normalised in DuckDB at once, several times their bytes: a batch is at most
# this share of the writer's memory budget (ctmirror/core/duck.py), and BATCH_BYTES at most.
BATCH_SHARE_OF_BUDGET = 1 / 16
PARSE_BUFFER_BYTES = 16 << 20  # DuckDB's default maximum_object_size; see sql/stage/parse.sql
FIRST_BATCH_SHARE = 4
RECORD_SHARE = 80  # a record may take this share of the writer's memory budget at most
QUARANTINED_TEXT_BYTES = 1 << 20  # of a record over the size limit, the quarantine keeps this much (raw/ all)
# Segment tables whose bytes are mostly texts that never repeat (each version's raw JSON): a dictionary would save
# nothing and cost time. They are written in the smallest row groups DuckDB makes, since the Parquet writer holds a
# row group's column whole in memory, and a batch's raw JSON in one group is hundreds of megabytes.
UNREPEATED_TEXTS = ("study_versions",)
# How search_norm splits words, recorded in each segment: 2 splits at every Unicode punctuation and separator
# and folds compatibility forms (sql/schema/unicode_text.sql); 3 also joins a possessive 's to its word
# (possessive_s); a segment of an older rule is renormalised.
WORD_BOUNDARIES = 3
# Which areas search_terms and places hold, recorded in each segment: 2 adds BasicSearch's lead sponsor,
# collaborators, primary and secondary outcome measures and intervention descriptions, and the sites' facilities
# and ZIP codes; 3 the enumerations' words (intervention and arm group types, phases, age groups, study type, the
# design's) (2026-11-30); a segment of an older set is renormalised, so every study is found by them alike.
SEARCH_TERM_AREAS = 3
SLOWEST_TABLES = ("study_versions", "search_terms", "condition_links", "study_details", "places", "studies")


def normalised_tables() -> list[str]:
    return [Path(f).stem for f in sql_files("normalize")]


def slowest_first(tables: list[str], slowest: tuple[str, ...]) -> list[str]:
    """The tables in the order to hand them to parallel writers: the slow ones first, so the writers finish
    together instead of one waiting on a big table started last."""
    return sorted(tables, key=lambda t: slowest.index(t) if t in slowest else len(slowest))


def table_key(table: str) -> list[str]:
    """The columns that identify a row of a normalised table, from its file's `-- key:` line."""
    for line in read_sql(f"normalize/{table}.sql").splitlines():
        if line.startswith("-- key:"):
            return [column.strip() for column in line.removeprefix("-- key:").split(",")]
    raise ValueError(f"sql/normalize/{table}.sql has no '-- key:' line")


@dataclass
class LoadCounts:
    records: int = 0
    versions_added: int = 0
    studies_added: int = 0
    studies_changed: int = 0
    unchanged: int = 0
    quarantined: int = 0
    quarantine_rows_added: int = 0  # quarantined records not already in quarantine (a reload adds none)
    segments: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # a few quarantine reasons, for the summary

    def add(self, other: dict) -> None:
        for key in ("records", "versions_added", "studies_added", "studies_changed", "quarantined",
                    "quarantine_rows_added"):
            setattr(self, key, getattr(self, key) + int(other.get(key, 0)))
        self.unchanged = self.records - self.versions_added - self.quarantined  # records count the quarantined


# Where records come as the registry wrote them (its bulk archive; the embedded sample, a copy of its records; AACT's
# files, which ctmirror writes as records itself): not parsed again for a key named twice (validate.duplicate_key),
# a full parse that would cost a bootstrap of the registry about a minute. Any other source (a file given to `load`,
# API pages, history) is.
TRUSTED_SOURCES = ("bulk", "sample", "aact")


def study_structure_of(con: duckdb.DuckDBPyConnection) -> dict:
    return json.loads(con.execute(read_sql("stage/queries.sql", "study_structure")).fetchone()[0])


def record_shape(con: duckdb.DuckDBPyConnection) -> RecordShape:
    return RecordShape(study_structure_of(con))


def pending_receipts(warehouse: Warehouse, raw: RawStore) -> list[tuple[Receipt, int]]:
    """Receipts of raw/ not yet fully consumed into segments, each with the index of its first unconsumed
    record (segments are written in receipt order, the last one saying where it stopped)."""
    segments = warehouse.segments()
    end = segments[-1].meta["end"] if segments else {"receipt_id": 0, "next_index": None}
    result = []
    for receipt in raw.receipts():
        if receipt.receipt_id < end["receipt_id"]:
            continue
        if receipt.receipt_id == end["receipt_id"]:
            if end["next_index"] is not None:
                result.append((receipt, end["next_index"]))
            continue
        result.append((receipt, 0))
    return result


class Normalizer:
    """Consumes pending receipts into segments. Use inside `Warehouse.writing()`. Its `con` is the writer's
    DuckDB: a writer publishes on it too, before `close()` (see ingest.publish.publish)."""

    def __init__(self, warehouse: Warehouse, *, batch_records: int = BATCH_RECORDS,
                 batch_bytes: int | None = None, on_record: Callable[[int], None] | None = None) -> None:
        self.warehouse = warehouse
        self.raw = RawStore(warehouse.root)
        self.batch_records = batch_records
        budget = memory_budget()
        self.batch_bytes = batch_bytes or (BATCH_BYTES if budget is None
                                           else min(BATCH_BYTES, int(budget * BATCH_SHARE_OF_BUDGET)))
        self.on_record = on_record
        self._scratch = warehouse.new_scratch_dir()
        self.con = new_connection(self._scratch, threads=BESIDE_PYTHON)
        self.shape = record_shape(self.con)
        # A record larger than this is quarantined: DuckDB parses a batch's largest record in one buffer, and
        # normalising it takes many times its size (50 MB under a budget of 1 GB ran out of memory).
        self.record_limit = MAX_RECORD_BYTES if budget is None else min(MAX_RECORD_BYTES, budget // RECORD_SHARE)
        self._writers = ThreadPoolExecutor(max_workers=writer_lanes(), thread_name_prefix="ctmirror-table")

    def close(self) -> None:
        self._writers.shutdown()
        self.con.close()
        shutil.rmtree(self._scratch, ignore_errors=True)

    def pending(self) -> list[tuple[Receipt, int]]:
        """Receipts not yet fully consumed, each with the index of its first unconsumed record."""
        return pending_receipts(self.warehouse, self.raw)

    def run(self) -> LoadCounts:
        """Consumes every pending receipt, reading each from raw/."""
        with self.session() as feed:
            for receipt, start in self.pending():
                feed.add(receipt, candidates_of(receipt, self.raw.path_of(receipt)), start)
        return feed.counts

    @contextmanager
    def session(self) -> Iterator[_Feed]:
        """A feed that takes receipts in order, with their candidates, as they arrive (a harvester hands each
        page over once it is stored, so it is never read back or parsed again). Leaving the block flushes
        the last batch; an error leaves it unflushed, to be consumed from raw/ by the next run."""
        feed = _Feed(self)
        try:
            yield feed
        except BaseException:
            feed.abandon()
            raise
        feed.close()

    def _take(self, batch: _Batch, receipt: Receipt, candidate: Candidate) -> None:
        """Stages a candidate, or quarantines it with its reason: no record, whatever it holds, stops a run."""
        text = None
        if candidate.problem:
            problem, nct_id = candidate.problem, candidate.nct_id
        elif len(candidate.data) > self.record_limit:
            problem, nct_id = (f"{len(candidate.data):,} bytes, over the limit of {self.record_limit:,} a record "
                               f"(1/{RECORD_SHARE} of the memory budget, --memory-limit): kept whole in raw/, only its "
                               f"first {QUARANTINED_TEXT_BYTES:,} bytes here"), nct_id_in_text(candidate.data)
            text = candidate.data[:QUARANTINED_TEXT_BYTES].decode("utf-8", "backslashreplace")
        else:
            try:
                problem, nct_id = self.shape.problem_of_bytes(candidate.data)
                if problem is None and receipt.source not in TRUSTED_SOURCES:
                    problem = duplicate_key(candidate.data)
                    nct_id = nct_id_in_text(candidate.data) if problem else nct_id
            except Exception as exc:  # a validator bug must not block the mirror either: the record waits
                problem, nct_id = f"could not be validated ({type(exc).__name__}: {exc})", None
        if problem:
            batch.reject(receipt, candidate.locator, nct_id, problem, text or candidate.text_for_quarantine())
        else:
            batch.stage(receipt, candidate.locator, candidate.data, candidate.member)

    def _write_table(self, write: tuple[str, dict | None, Path]) -> Path:
        """One table of the segment. Each runs on a cursor of its own: a batch's tables hold one row group, which
        DuckDB scans on one thread, so tables side by side are what keeps every core busy."""
        query, params, target = write
        cursor = quiet(self.con.cursor())
        try:
            write_parquet(cursor, read_sql(query), params, target,
                          unrepeated_texts=target.stem in UNREPEATED_TEXTS)
        finally:
            cursor.close()
        return target

    def _flush(self, batch: _Batch, counts: LoadCounts, *, end: dict, last: bool = False) -> Segment:
        con = self.con
        known = [str(s.table_file("study_versions")) for s in self.warehouse.segments()]
        con.execute(read_sql("stage/receipts.sql"))
        con.executemany(read_sql("stage/queries.sql", "receipt_row"),
                        [(r.receipt_id, r.received_at.rstrip("Z"), r.source, r.origin,
                          (r.context or {}).get("dump_date")) for r in batch.receipts])
        con.execute(read_sql("stage/queries.sql", "known_versions"))
        if known:
            con.execute(read_sql("stage/queries.sql", "known_versions_of"), {"files": known})
        con.execute(read_sql("stage/queries.sql", "known_rejects"))
        if known and batch.rejected:
            con.execute(read_sql("stage/queries.sql", "known_rejects_of"),
                        {"files": [str(s.table_file("quarantine")) for s in self.warehouse.segments()]})
        staged = {"staging": str(batch.staging_path), "object_bytes": max(PARSE_BUFFER_BYTES, batch.longest_line + 1)}
        with all_cores(con) if last else nullcontext():
            try:
                con.execute(read_sql("stage/parse.sql"), staged)
            except duckdb.InvalidInputException:
                # Something the fast validator let through (a raw control character in a skipped field, say)
                # that DuckDB's parser refuses: find it with Python's strict parser, quarantine it, go on.
                batch.restage_strictly()
                con.execute(read_sql("stage/parse.sql"), staged)
        con.execute(read_sql("stage/new_versions.sql"))
        segment_id, tmp = self.warehouse.new_segment_dir()
        tables = slowest_first(normalised_tables(), SLOWEST_TABLES)
        writes = [(f"normalize/{table}.sql", None, tmp / f"{table}.parquet") for table in tables]
        writes += [("stage/sightings.sql", None, tmp / "sightings.parquet"),
                   ("stage/quarantine.sql", {"rejects": str(batch.rejects_path),
                                             "object_bytes": max(PARSE_BUFFER_BYTES, batch.longest_reject + 1)},
                    tmp / "quarantine.parquet")]
        with side_by_side(con):
            for _written in self._writers.map(self._write_table, writes):
                crash_point("segment_file_written")
        row = con.execute(read_sql("stage/batch_counts.sql")).fetchone()
        batch_counts = dict(zip(("records", "versions_added", "studies_added", "studies_changed"), row))
        batch_counts["quarantined"] = batch.rejected
        batch_counts["records"] += batch.rejected
        batch_counts["quarantine_rows_added"] = con.execute(read_sql("asof/queries.sql", "row_count"), {
            "file": str(tmp / "quarantine.parquet")}).fetchone()[0] if batch.rejected else 0
        meta = {
            "segment_id": segment_id,
            "end": end,
            "receipts": [r.receipt_id for r in batch.receipts],
            "counts": batch_counts,
            "word_boundaries": WORD_BOUNDARIES,
            "search_term_areas": SEARCH_TERM_AREAS,
        }
        segment = self.warehouse.commit_segment(segment_id, tmp, meta)
        counts.add(batch_counts)
        counts.segments.append(segment_id)
        counts.problems.extend(batch.problems[: max(0, 20 - len(counts.problems))])
        con.execute(read_sql("stage/drop_batch.sql"))
        batch.discard()
        return segment


class _Feed:
    """Python prepares batch N+1 while DuckDB (which releases the GIL) normalises batch N; segments are still
    committed one at a time, in receipt order."""

    def __init__(self, normalizer: Normalizer) -> None:
        self.normalizer = normalizer
        self.counts = LoadCounts()
        self.batch = _Batch(normalizer._scratch)
        self.flusher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctmirror-flush")
        self.in_flight: Future | None = None
        self.handed_over = 0

    def add(self, receipt: Receipt, candidates: Iterable[Candidate], start: int = 0) -> None:
        n = self.normalizer
        batch = self.batch
        batch.receipts.append(receipt)
        for index, candidate in enumerate(_unfailing(candidates)):
            if index < start:
                continue
            n._take(batch, receipt, candidate)
            if n.on_record:
                n.on_record(1)
            # The first batch is a quarter size: DuckDB idles until one is handed over.
            limit = n.batch_records if self.handed_over else max(1, n.batch_records // FIRST_BATCH_SHARE)
            if batch.staged >= limit or batch.staged_bytes >= n.batch_bytes:
                self._hand_over(batch, {"receipt_id": receipt.receipt_id, "next_index": index + 1})
                batch = self.batch = _Batch(n._scratch, receipts=[receipt])
        # The receipt is whole: the flush that carries this batch records it consumed in full.
        batch.end = {"receipt_id": receipt.receipt_id, "next_index": None}

    def _hand_over(self, full: _Batch, end: dict, *, last: bool = False) -> None:
        self.handed_over += 1
        if self.in_flight is not None:
            self.in_flight.result()
        full.close_files()
        self.in_flight = self.flusher.submit(self.normalizer._flush, full, self.counts, end=end, last=last)

    def close(self) -> None:
        try:
            if self.batch.end is not None:
                self._hand_over(self.batch, self.batch.end, last=True)
            else:
                self.batch.discard()
            if self.in_flight is not None:
                self.in_flight.result()
        finally:
            self.flusher.shutdown()

    def abandon(self) -> None:
        try:
            if self.in_flight is not None:
                self.in_flight.result()
        finally:
            self.batch.discard()
            self.flusher.shutdown()


def _unfailing(candidates: Iterable[Candidate]) -> Iterator[Candidate]:
    """The candidates of a receipt; if reading them fails (a reader's bug, input it cannot survive), a last
    candidate that quarantines the rest of the receipt with the reason, so the receipt is consumed and never
    stops a later run. Failures of the machine (a disk, a read) are raised as they are."""
    index = 0
    try:
        for index, candidate in enumerate(candidates, 1):  # noqa: B007 - index is read after the loop
            yield candidate
    except OSError:
        raise
    except Exception as exc:
        yield Candidate(f"after record {index}", problem=f"the rest of this input could not be read "
                        f"({type(exc).__name__}: {str(exc)[:300]}); it is kept whole in raw/", raw_text="")


_STAGED_HEAD = re.compile(rb'^\{"o":\d+,"r":\d+,"l":"(?:[^"\\]|\\.)*"')


class _Batch:
    """Scratch files of one batch: staged records and rejected ones, both NDJSON."""

    def __init__(self, scratch: Path, receipts: list[Receipt] | None = None) -> None:
        fd, name = tempfile.mkstemp(dir=scratch, suffix=".staging.ndjson")
        self.staging_path = Path(name)
        self._staging = os.fdopen(fd, "wb")
        fd, name = tempfile.mkstemp(dir=scratch, suffix=".rejects.ndjson")
        self.rejects_path = Path(name)
        self._rejects = os.fdopen(fd, "w", encoding="utf-8")
        self.receipts: list[Receipt] = list(receipts or [])
        self.staged = 0
        self.staged_bytes = 0
        self.longest_line = 0
        self.longest_reject = 0
        self.rejected = 0
        self.problems: list[str] = []
        self.end: dict | None = None

    def stage(self, receipt: Receipt, locator: str, data: bytes,
              member: tuple[int, int, int, int, int] | None = None) -> None:
        where = f'"m":[{",".join(map(str, member))}],' if member else ""
        head = f'{{"o":{self.staged},"r":{receipt.receipt_id},"l":{json.dumps(locator)},{where}"s":'.encode()
        self._staging.write(head + data + b"}\n")
        line_bytes = len(head) + len(data) + 2
        self.staged += 1
        self.staged_bytes += line_bytes
        self.longest_line = max(self.longest_line, line_bytes)

    def reject(self, receipt: Receipt, locator: str, nct_id: str | None, reason: str, text: str) -> None:
        if nct_id is None:
            nct_id = nct_id_in_text(text[: 1 << 20].encode("utf-8", "backslashreplace"))
        line = json.dumps({
            "receipt_id": receipt.receipt_id, "origin": receipt.origin, "locator": locator, "nct_id": nct_id,
            "reason": reason, "record_text": text, "quarantined_at": receipt.received_at.rstrip("Z"),
        }, ensure_ascii=False) + "\n"
        self._rejects.write(line)
        self.longest_reject = max(self.longest_reject, len(line.encode("utf-8")))
        self.rejected += 1
        if len(self.problems) < 20:
            self.problems.append(f"{receipt.origin} {locator}: {reason}")

    def restage_strictly(self) -> None:
        kept = self.staging_path.with_suffix(".strict")
        by_id = {r.receipt_id: r for r in self.receipts}
        with open(self.staging_path, "rb") as source, open(kept, "wb") as out, \
                open(self.rejects_path, "a", encoding="utf-8") as rejects:
            self._rejects = rejects
            for line in source:
                try:
                    json.loads(line)
                    out.write(line)
                except ValueError as exc:
                    head = json.loads(_STAGED_HEAD.match(line).group(0) + b"}")  # type: ignore[union-attr]
                    self.staged -= 1
                    self.reject(by_id[head["r"]], head["l"], None, f"not valid JSON: {exc}",
                                line.decode("utf-8", "backslashreplace"))
        os.replace(kept, self.staging_path)

    def close_files(self) -> None:
        self._staging.close()
        self._rejects.close()

    def discard(self) -> None:
        self.close_files()
        self.staging_path.unlink(missing_ok=True)
        self.rejects_path.unlink(missing_ok=True)
