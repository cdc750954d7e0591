"""`ctmirror history`: past versions of studies from the website's history endpoints, into study_versions.

The endpoints are undocumented and may change: `/api/int/studies/{id}/history` lists versions
(`{"history": {"changes": [{"version": n, ...}]}}`, or `{"changes": [...]}`) and
`/api/int/studies/{id}/history/{n}` gives one (`{"study": {...}}`). Any other shape stops the run with a message
saying what was expected; nothing of it is loaded. Same politeness, retries and resumability as sync: each
version is stored in raw/ before the checkpoint (sync/history_checkpoint.json) records its study done.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from ctmirror.core.errors import TerminalHarvestError
from ctmirror.core.raw_store import utc_now
from ctmirror.core.warehouse import State, Warehouse
from ingest.crash import crash_point
from ingest.harvest import Progress, SyncPaths
from ingest.http_client import PoliteClient
from ingest.writer import writer_run


@dataclass
class HistoryResult:
    run: dict
    state: State
    summary: str


def _versions_listed(listing: object, nct_id: str, url: str) -> list[int]:
    changes = None
    if isinstance(listing, dict):
        changes = (listing.get("history") or {}).get("changes") if isinstance(listing.get("history"), dict) \
            else listing.get("changes")
    if not isinstance(changes, list) or not all(isinstance(c, dict) and isinstance(c.get("version"), int)
                                                 for c in changes):
        raise TerminalHarvestError(
            f"the history endpoint {url} answered in a shape ctmirror does not know (expected "
            f"{{'history': {{'changes': [{{'version': <int>, ...}}]}}}}); nothing of {nct_id}'s history was loaded",
            hint="the website's internal API changed: report it; sync and the rest keep working")
    return [c["version"] for c in changes]


def _study_of(version: object, url: str) -> None:
    study = version.get("study") if isinstance(version, dict) else None
    if not isinstance(study, dict) or "protocolSection" not in study:
        raise TerminalHarvestError(
            f"the history endpoint {url} answered in a shape ctmirror does not know (expected "
            "{'study': {'protocolSection': ...}}); nothing of it was loaded")


def fetch_history(warehouse: Warehouse, nct_ids: list[str], *, base_url: str, min_interval: float = 1.2,
                  timeout: float = 60.0, progress: Progress | None = None) -> HistoryResult:
    progress = progress or Progress()
    with writer_run(warehouse, command="history", source="history", on_phase=progress.note) as writer:
        paths = SyncPaths(warehouse)
        checkpoint_path = paths.folder / "history_checkpoint.json"
        checkpoint = paths.read(checkpoint_path)
        if not checkpoint or checkpoint.get("ids") != nct_ids:
            checkpoint = {"run_id": uuid.uuid4().hex[:12], "ids": nct_ids, "done": [], "versions": 0,
                          "started_at": utc_now(), "first_segment": warehouse.last_segment_number()}
            paths.write(checkpoint_path, checkpoint)
        client = PoliteClient(base_url, min_interval, timeout, on_retry=progress.note)
        raw = writer.raw
        progress.start(len(nct_ids))
        try:
            for nct_id in nct_ids:
                if nct_id in checkpoint["done"]:
                    continue
                listing = client.get(f"/api/int/studies/{nct_id}/history")
                for number in _versions_listed(listing.json(), nct_id, listing.url):
                    response = client.get(f"/api/int/studies/{nct_id}/history/{number}")
                    _study_of(response.json(), response.url)
                    raw.receive_bytes(response.body, source="history", origin=response.url,
                                      context={"run_id": checkpoint["run_id"], "version": number})
                    checkpoint["versions"] += 1
                checkpoint["done"].append(nct_id)
                paths.write(checkpoint_path, checkpoint)
                crash_point("history_study_stored")
                progress.page(1, len(nct_ids))
        finally:
            client.close()
        writer.normalizer.run()
        counts = warehouse.counts_since(checkpoint["first_segment"])  # a resumed run's earlier segments too
        run = writer.completed(run_id=checkpoint["run_id"], origin=base_url, started=checkpoint["started_at"],
                               counts=counts, pages=checkpoint["versions"], retries=client.retries)
        state = writer.publish(run)
        checkpoint_path.unlink(missing_ok=True)
    summary = (f"History of {len(nct_ids)} studies: {checkpoint['versions']} versions fetched, "
               f"{counts['versions_added']} new; published state {state.state_id}.")
    return HistoryResult(run=run, state=state, summary=summary)
