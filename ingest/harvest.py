"""`ctmirror sync`: full and incremental harvests of the v2 API, resumable from any point, published atomically.

A run is a checkpointed state machine (warehouse/sync/checkpoint.json, written atomically):

    harvesting   page by page: GET /api/v2/studies with the run's fixed parameters and the saved token;
                 each page is stored in raw/ (fsynced) before the checkpoint moves past it, so a kill at any
                 moment loses no page and a page fetched twice is only a duplicate receipt (no new version).
                 A rejected token (HTTP 400 on a follow-up) restarts the query from its first page.
    finishing    normalise what was received, check that the registry's data timestamp held, find studies
                 that are gone (a full run re-checks every known ID it did not see, with filter.ids, then
                 /studies/{id} for a 301 alias), record the run, publish one new state, then forget the
                 checkpoint.

Incremental runs ask for AREA[LastUpdatePostDate]RANGE[<last completed sync's start date - 1 day>, MAX].
"""

from __future__ import annotations

import json
import logging
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import duckdb

from ctmirror.core.duck import quiet
from ctmirror.core.errors import HarvestError, TerminalHarvestError
from ctmirror.core.raw_store import RawStore, utc_now
from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.warehouse import State, Warehouse, append_lines, atomic_write_text
from ingest.crash import crash_point
from ingest.http_client import DEFAULT_BASE_URL, PoliteClient, RetryPolicy
from ingest.sources import open_decompressed, parse_page
from ingest.writer import WriterRun, writer_run

log = logging.getLogger("ctmirror.harvest")

CHECKPOINT_FORMAT = 1
STUDIES_PATH = "/api/v2/studies"
RECHECK_BATCH = 100


@dataclass
class SyncOptions:
    base_url: str = DEFAULT_BASE_URL
    min_interval: float = 1.2
    timeout: float = 60.0
    full: bool = False
    check_removed: bool = False
    page_size: int = 1000
    retry: RetryPolicy = field(default_factory=RetryPolicy)


@dataclass
class SyncResult:
    run: dict
    state: State
    summary: str
    # Publishing's wall and CPU seconds (the CPU of every thread of this process), apart from the harvest's:
    # it is paid once per run however many pages came before it.
    publish_seconds: float | None = None
    publish_cpu_seconds: float | None = None


class Progress:
    """What the CLI shows; the harvester only reports."""

    def start(self, total: int | None) -> None: ...

    def page(self, studies: int, total: int | None) -> None: ...

    def note(self, message: str) -> None: ...


class SyncPaths:
    def __init__(self, warehouse: Warehouse) -> None:
        self.folder = warehouse.root / "sync"
        self.checkpoint = self.folder / "checkpoint.json"
        self.state = self.folder / "state.json"
        self.removals = self.folder / "removals.ndjson"

    def read(self, path: Path) -> dict | None:
        return json.loads(path.read_text()) if path.exists() else None

    def write(self, path: Path, data: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True))


def sync(warehouse: Warehouse, options: SyncOptions, progress: Progress | None = None) -> SyncResult:
    progress = progress or Progress()
    with writer_run(warehouse, command="sync", source="api", on_phase=progress.note) as writer:
        paths = SyncPaths(warehouse)
        client = PoliteClient(options.base_url, options.min_interval, options.timeout, options.retry,
                              on_retry=progress.note)
        try:
            checkpoint = paths.read(paths.checkpoint)
            if checkpoint and checkpoint.get("base_url") != options.base_url.rstrip("/"):
                progress.note(f"discarding an unfinished run against {checkpoint.get('base_url')}")
                checkpoint = None
            if checkpoint is None:
                checkpoint = _plan(warehouse, paths, client, options)
            else:
                progress.note(f"resuming run {checkpoint['run_id']} ({checkpoint['mode']}) after page "
                              f"{checkpoint['pages']}")
            progress.start(checkpoint.get("total"))
            run = _Run(writer, paths, client, options, checkpoint, progress)
            run.harvest()
            return run.finish()
        finally:
            client.close()


def _plan(warehouse: Warehouse, paths: SyncPaths, client: PoliteClient, options: SyncOptions) -> dict:
    last = paths.read(paths.state)
    params: dict[str, str] = {"format": "json", "pageSize": str(options.page_size), "countTotal": "true"}
    mode = "full" if options.full or not last else "incremental"
    since = None
    if mode == "incremental":
        since = (date.fromisoformat(last["next_since"]) - timedelta(days=1)).isoformat()
        params["filter.advanced"] = f"AREA[LastUpdatePostDate]RANGE[{since},MAX]"
    checkpoint = {
        "format": CHECKPOINT_FORMAT, "run_id": uuid.uuid4().hex[:12], "mode": mode,
        "base_url": options.base_url.rstrip("/"), "params": params, "since": since,
        "started_at": utc_now(), "data_timestamp": _data_timestamp(client), "phase": "harvesting",
        "next_token": None, "pages": 0, "studies": 0, "total": None, "receipts": [], "token_restarts": 0,
        "retries": 0, "notes": [], "first_segment": warehouse.last_segment_number(),
    }
    paths.write(paths.checkpoint, checkpoint)
    return checkpoint


def _parse_page(body: bytes) -> tuple[dict, list]:
    """A page split into its studies. A cut-short or malformed body raises ValueError (retried, like a dropped
    connection); a well-formed answer that is not a page is the API having changed, which no retry mends."""
    try:
        return parse_page(body)
    except ValueError:
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and not isinstance(answer.get("studies"), list):
            keys = ", ".join(sorted(answer)[:10]) or "none"
            raise TerminalHarvestError(
                f"the API answered with a JSON object without a 'studies' list (its keys: {keys}): the response "
                "shape changed; nothing of it was loaded",
                hint="check --base-url points at a ClinicalTrials.gov v2 API") from None
        raise


def _data_timestamp(client: PoliteClient) -> str | None:
    version = client.get("/api/v2/version").json()
    return version.get("dataTimestamp") if isinstance(version, dict) else None


class _Run:
    def __init__(self, writer: WriterRun, paths: SyncPaths, client: PoliteClient, options: SyncOptions,
                 checkpoint: dict, progress: Progress) -> None:
        self.writer, self.warehouse, self.paths, self.client = writer, writer.warehouse, paths, client
        self.options, self.cp, self.progress = options, checkpoint, progress
        self.normalizer = writer.normalizer  # one for the whole run, publishing included
        self.raw = writer.raw
        self.started = time.monotonic()

    def save(self) -> None:
        self.cp["retries"] = self.cp.get("retries_before", 0) + self.client.retries
        self.paths.write(self.paths.checkpoint, self.cp)

    # ---- harvesting ---------------------------------------------------------------------------------
    def harvest(self) -> None:
        self.cp["retries_before"] = self.cp.get("retries", 0)
        if self.cp["phase"] != "harvesting":
            return
        # The loader's batches (10,000 records; the first a quarter of that, so normalising starts early): DuckDB
        # normalises one while the next pages are fetched and validated. Smaller batches pay the fixed work of each
        # (a file per table, the receipts, the counts) more often.
        self.normalizer.run()  # what an interrupted run stored but did not normalise
        self._adopt_stored_page()
        with self.normalizer.session() as feed:
            self._pages(feed)

    def _adopt_stored_page(self) -> None:
        """A page this run stored before a crash, whose checkpoint was not saved: it was normalised just now, so
        the run goes on from its nextPageToken instead of fetching it again (which would count its studies twice
        in sightings)."""
        receipts = self.raw.receipts()
        last = receipts[-1] if receipts else None
        context = (last.context or {}) if last else {}
        if (last is None or context.get("run_id") != self.cp["run_id"] or context.get("page") != self.cp["pages"] + 1
                or last.receipt_id in self.cp["receipts"]):
            return
        with open_decompressed(self.raw.path_of(last)) as stream:
            page, candidates = _parse_page(stream.read())
        self._advance(last, page, len(candidates))

    def _advance(self, receipt, page: dict, studies: int) -> None:
        """The checkpoint after a page is stored and handed to the normaliser."""
        self.cp["receipts"].append(receipt.receipt_id)
        self.cp["pages"] += 1
        self.cp["studies"] += studies
        if page.get("totalCount") is not None and not self.cp["next_token"]:
            self.cp["total"] = page["totalCount"]
            self.progress.start(self.cp["total"])
        self.cp["next_token"] = page.get("nextPageToken")
        if not self.cp["next_token"]:
            self.cp["phase"] = "finishing"
        self.save()

    def _pages(self, feed) -> None:
        while self.cp["phase"] == "harvesting":
            params = dict(self.cp["params"])
            if self.cp["next_token"]:
                params["pageToken"] = self.cp["next_token"]
            try:
                response = self.client.get(STUDIES_PATH, params, parse=_parse_page)
            except TerminalHarvestError as exc:
                if self.cp["next_token"] and getattr(exc, "status", None) == 400:
                    self._restart_query(str(exc))
                    continue
                raise
            page, candidates = response.data
            crash_point("page_received")
            if not candidates:  # a full last page's token leads here: the end
                self.cp["phase"] = "finishing"
                self.save()
                break
            receipt = self.raw.receive_bytes(response.body, source="api", origin=response.url,
                                             context={"run_id": self.cp["run_id"], "page": self.cp["pages"] + 1})
            crash_point("raw_written")
            feed.add(receipt, candidates)
            self._advance(receipt, page, len(candidates))
            crash_point("checkpoint_saved")
            self.progress.page(len(candidates), self.cp["total"])

    def _restart_query(self, reason: str) -> None:
        self.cp["token_restarts"] += 1
        if self.cp["token_restarts"] > 5:
            raise TerminalHarvestError(f"the API rejected this run's page tokens {self.cp['token_restarts']} "
                                       f"times; last: {reason}")
        note = f"page token rejected after page {self.cp['pages']} ({reason}); restarted the query from its start"
        self.cp["notes"].append(note)
        self.progress.note(note)
        self.cp["next_token"] = None
        self.save()

    # ---- finishing ----------------------------------------------------------------------------------
    def finish(self) -> SyncResult:
        self.normalizer.run()
        end_timestamp = _data_timestamp(self.client)
        if end_timestamp != self.cp["data_timestamp"]:
            note = (f"the registry's data timestamp changed during the harvest ({self.cp['data_timestamp']} → "
                    f"{end_timestamp}); studies updated meanwhile may be in their older form, and the next "
                    f"incremental sync re-fetches everything updated since this run began")
            if self.cp["mode"] == "full":
                note += "; studies not seen were re-checked by ID before being marked removed"
            if note not in self.cp["notes"]:
                self.cp["notes"].append(note)
                self.progress.note(note)
        seen = self._seen()  # the studies this run's receipts carried, all normalised above
        removed, merged = self._find_removed(seen)
        self.normalizer.run()
        counts = self._counts()
        # A page fetched twice (a resumed run, a restarted query) is a second receipt of the same records: the run
        # counts each study it received once.
        counts["records"] = len(seen) + counts["quarantined"]
        finished = utc_now()
        run = self.writer.completed(run_id=self.cp["run_id"], origin=self.cp["base_url"], started=self.cp["started_at"],
                                    counts=counts, data_timestamp=end_timestamp or self.cp["data_timestamp"],
                                    removed=removed, pages=self.cp["pages"], retries=self.cp["retries"],
                                    note="; ".join(self.cp["notes"]) or None)
        publish_started, publish_cpu_started = time.monotonic(), time.process_time()
        # A night that changed nothing publishes nothing: the current state answers the same.
        state, published = self.writer.publish_if_new(run, always=bool(removed))
        publish_seconds = time.monotonic() - publish_started
        publish_cpu = time.process_time() - publish_cpu_started
        self.paths.write(self.paths.state, {
            "run_id": run["run_id"], "mode": self.cp["mode"], "finished_at": finished,
            "data_timestamp": run["data_timestamp"], "next_since": self.cp["started_at"][:10],
        })
        self.paths.checkpoint.unlink(missing_ok=True)
        summary = self._summary(run, merged, state.state_id, publish_seconds, published)
        return SyncResult(run=run, state=state, summary=summary, publish_seconds=publish_seconds,
                          publish_cpu_seconds=publish_cpu)

    def _counts(self) -> dict:
        return self.warehouse.counts_since(self.cp["first_segment"])

    def _find_removed(self, seen: set[str]) -> tuple[int, int]:
        """Studies gone from the registry: for a full run, every known study this run did not see; with
        --check-removed, every known study. Each is re-checked by ID before it is marked."""
        if self.cp["mode"] != "full" and not self.options.check_removed:
            return 0, 0
        known = self._known()
        candidates = sorted(known - seen) if self.cp["mode"] == "full" else sorted(known)
        present: set[str] = set()
        for start in range(0, len(candidates), RECHECK_BATCH):
            batch = candidates[start:start + RECHECK_BATCH]
            response = self.client.get(STUDIES_PATH, {"format": "json", "filter.ids": ",".join(batch),
                                                      "pageSize": str(len(batch))})
            studies = response.json().get("studies", [])
            if studies:
                self.raw.receive_bytes(response.body, source="api", origin=response.url,
                                       context={"run_id": self.cp["run_id"], "recheck": True})
            present |= {s.get("protocolSection", {}).get("identificationModule", {}).get("nctId") for s in studies}
        gone = [c for c in candidates if c not in present]
        merged = 0
        today = datetime.fromisoformat(self.cp["started_at"].rstrip("Z")).date().isoformat()
        lines = []
        for nct_id in gone:
            new_id = self._alias_target(nct_id)
            merged += new_id is not None
            lines.append(json.dumps({"nct_id": nct_id, "removed_on": today, "detected_at": utc_now().rstrip("Z"),
                                     "run_id": self.cp["run_id"], "merged_into": new_id}))
        if lines:
            append_lines(self.paths.removals, lines)
        if gone:
            self.progress.note(f"{len(gone)} studies are gone from the registry ({merged} now aliases of others)")
        return len(gone), merged

    def _alias_target(self, nct_id: str) -> str | None:
        try:
            response = self.client.get(f"{STUDIES_PATH}/{nct_id}", {"format": "json"}, expect_json=False,
                                       follow_redirects=False)
        except TerminalHarvestError:
            return None  # 404: simply gone
        location = response.headers.get("location", "")
        if response.status in (301, 302, 308) and "/studies/" in location:
            return location.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
        return None

    def _known(self) -> set[str]:
        """The studies the current state holds."""
        current = self.warehouse.current_state()
        known: set[str] = set()
        if current is not None:
            con = quiet(duckdb.connect())
            try:
                studies = [str(f) for f in current.table_files("studies")]
                known = {r[0] for r in con.execute(read_sql("publish/queries.sql", "present_studies"),
                                                   {"studies": studies}).fetchall()}
            finally:
                con.close()
        return known

    def _seen(self) -> set[str]:
        """The studies this run's receipts carried (well-formed records, new versions or not)."""
        segments, run_receipts = self.warehouse.segments(), self.cp["receipts"]
        if not segments or not run_receipts:
            return set()
        con = quiet(duckdb.connect())
        try:
            return {r[0] for r in con.execute(read_sql("publish/queries.sql", "seen_in_receipts"), {
                "sightings": [str(s.table_file("sightings")) for s in segments], "receipts": run_receipts,
            }).fetchall()}
        finally:
            con.close()

    def _summary(self, run: dict, merged: int, state_id: str, publish_seconds: float, published: bool) -> str:
        took = time.monotonic() - self.started
        removed = f"{run['removed']} removed" + (f" ({merged} now aliases)" if merged else "")
        text = (f"{self.cp['mode'].capitalize()} sync of {self.cp['base_url']} finished in {took:,.1f} s "
                f"(publishing {publish_seconds:,.1f} s): "
                f"{run['studies_added']:,} studies added, {run['studies_changed']:,} changed, "
                f"{run['unchanged']:,} unchanged, {removed}, {run['quarantined']:,} quarantined; "
                f"{run['pages']:,} pages, {run['retries']:,} retries; registry data timestamp "
                f"{run['data_timestamp'] or 'unknown'}; "
                + (f"published state {state_id}." if published else
                   f"nothing changed, so nothing published: state {state_id} stays current."))
        if self.cp["notes"]:
            text += " Noticed: " + "; ".join(self.cp["notes"]) + "."
        return text


def _studies_in_zip(path: Path) -> int | None:
    """How many study files a bulk zip holds, from its directory alone (None if it is not a zip)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return sum(1 for name in archive.namelist() if name.endswith(".json"))
    except (zipfile.BadZipFile, OSError):
        return None


def sync_from_bulk(warehouse: Warehouse, source: str, *, progress: Progress | None = None,
                   timeout: float = 600.0) -> SyncResult:
    """The registry's bulk json.zip (a path or URL) as the first full load; incremental syncs continue from
    the newest lastUpdatePostDate it holds. Streamed: one zip member at a time, batches of bounded size."""
    progress = progress or Progress()
    total: list[int | None] = [None]  # the bulk file's studies, once it is received
    with writer_run(warehouse, command="sync", source="bulk", on_record=lambda n: progress.page(n, total[0]),
                    on_phase=progress.note) as writer:
        raw = writer.raw
        if source.startswith(("http://", "https://")):
            receipt = _download(raw, source, timeout, progress)
        else:
            path = Path(source)
            if not path.is_file():
                from ctmirror.core.errors import InputError

                raise InputError(f"{source}: no such file (expected the registry's bulk json.zip or its URL)")
            receipt = raw.receive_file(path, source="bulk")
            total[0] = _studies_in_zip(path)
            progress.start(total[0])
        writer.normalizer.run()
        counts = writer.counts()
        run = writer.completed(origin=receipt.origin, counts=counts)
        state = writer.publish(run)
        con = quiet(duckdb.connect())
        try:
            newest = con.execute(read_sql("publish/queries.sql", "newest_update"),
                                 {"studies": [str(f) for f in state.table_files("studies")]}).fetchone()[0]
        finally:
            con.close()
        SyncPaths(warehouse).write(SyncPaths(warehouse).state, {
            "run_id": run["run_id"], "mode": "bulk", "finished_at": run["finished_at"], "data_timestamp": None,
            "next_since": (newest or date.today()).isoformat(),
        })
        summary = (f"Bulk load of {receipt.origin}: {counts['studies_added']:,} studies added, "
                   f"{counts['studies_changed']:,} changed, {run['unchanged']:,} unchanged, "
                   f"{counts['quarantined']:,} quarantined; published state {state.state_id}. Incremental syncs "
                   f"continue from {newest}.")
        return SyncResult(run=run, state=state, summary=summary)


def _download(raw: RawStore, url: str, timeout: float, progress: Progress):
    import tempfile

    import httpx

    with tempfile.NamedTemporaryFile(suffix=".zip") as tmp:
        try:
            with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as reply:
                if reply.status_code != 200:
                    raise TerminalHarvestError(f"HTTP {reply.status_code} from GET {url}")
                for chunk in reply.iter_bytes(1 << 20):
                    tmp.write(chunk)
        except httpx.HTTPError as exc:
            raise HarvestError(f"cannot download {url}: {type(exc).__name__}: {exc}",
                               hint="check the network and run the same command again; or download the registry's "
                                    "bulk file yourself (ctg-studies.json.zip, from the API's /studies/download?"
                                    "format=json.zip) and pass its path to --from-bulk") from exc
        tmp.flush()
        return raw.receive_file(Path(tmp.name), source="bulk", origin=url)
