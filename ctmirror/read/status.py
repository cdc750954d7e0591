"""What `ctmirror status` reports about a warehouse."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime
from pathlib import Path

from ctmirror.core.sqlfiles import read_sql
from ctmirror.read.mirror import Mirror


def directory_size(path: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            file = Path(folder) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def warehouse_status(mirror: Mirror, as_of: date | None = None) -> dict:
    """The report; as_of: also how many of the studies a strict answer on that day shows are exact (their version
    of that day held) rather than reconstructed."""
    overview = mirror.rows(read_sql("catalog/queries/status_overview.sql"))[0]
    return {
        "warehouse": str(mirror.warehouse.root.resolve()),
        "state": mirror.state_id,
        "published_at": mirror.state.meta.get("published_at"),
        **overview,
        "by_status": mirror.rows(read_sql("catalog/queries/status.sql", "status_by_status")),
        "by_phase": mirror.rows(read_sql("catalog/queries/status.sql", "status_by_phase")),
        "last_run": (mirror.rows(read_sql("catalog/queries/status.sql", "status_last_run")) or [None])[0],
        **_runs(mirror),
        "size_bytes": directory_size(mirror.state.path) if not mirror.frozen else directory_size(mirror.warehouse.root),
        "size_all_bytes": directory_size(mirror.warehouse.root),
        "snapshot": _snapshot(mirror),
        "exact_at": _exact_at(mirror, as_of) if as_of is not None else None,
    }


def _exact_at(mirror: Mirror, as_of: date) -> dict:
    found = mirror.rows(read_sql("catalog/queries/status_exact_at.sql"), {"as_of": as_of})[0]
    share = round(found["exact"] / found["studies"], 4) if found["studies"] else None
    return {"as_of": as_of.isoformat(), **found, "share_exact": share}


def _runs(mirror: Mirror) -> dict:
    return run_report([] if mirror.frozen else mirror.warehouse.recorded_runs(), mirror.state.meta.get("published_at"))


def run_report(runs: list[dict], published_at: str | None = None) -> dict:
    """For monitors: the last run that completed, the last that failed (or was interrupted), whether the newest
    run failed, and how old the data is (hours since the registry's data timestamp, or since the last success)."""
    finished = sorted(runs, key=lambda r: str(r.get("finished_at") or ""))
    successes = [r for r in finished if r.get("status") == "completed"]
    failures = [r for r in finished if r.get("status") in ("failed", "interrupted")]
    keys = ("command", "source", "status", "started_at", "finished_at", "data_timestamp", "versions_added", "note")
    success = {k: successes[-1].get(k) for k in keys} if successes else None
    failure = {k: failures[-1].get(k) for k in keys} if failures else None
    newest_failed = bool(finished) and finished[-1].get("status") in ("failed", "interrupted")
    stamp = (success or {}).get("data_timestamp") or (success or {}).get("finished_at") or published_at
    age = None
    try:
        then = datetime.fromisoformat(str(stamp).rstrip("Z"))
        then = then if then.tzinfo else then.replace(tzinfo=UTC)
        age = round((datetime.now(UTC) - then).total_seconds() / 3600, 1)
    except ValueError:
        pass
    return {"last_success": success, "last_failure": failure, "last_run_failed": newest_failed,
            "data_age_hours": age}


def _snapshot(mirror: Mirror) -> dict | None:
    """For a frozen snapshot: its cutoff and the state it was made from (snapshot.json)."""
    if mirror.as_of is None or "cutoff" not in mirror.state.meta:
        return None
    keys = ("cutoff", "mode", "source_state", "source_published_at", "studies", "exact_studies", "content_hash")
    return {key: mirror.state.meta.get(key) for key in keys}
