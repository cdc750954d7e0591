"""What `ctmirror status` reports about a warehouse."""

from __future__ import annotations

import os
from pathlib import Path

from ctmirror.core.sqlfiles import read_sql
from ctmirror.mirror import Mirror


def directory_size(path: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            file = Path(folder) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def warehouse_status(mirror: Mirror) -> dict:
    overview = mirror.rows(read_sql("catalog/queries/status_overview.sql"))[0]
    return {
        "warehouse": str(mirror.warehouse.root.resolve()),
        "state": mirror.state_id,
        "published_at": mirror.state.meta.get("published_at"),
        **overview,
        "by_status": mirror.rows(read_sql("catalog/queries/status_by_status.sql")),
        "by_phase": mirror.rows(read_sql("catalog/queries/status_by_phase.sql")),
        "last_run": (mirror.rows(read_sql("catalog/queries/status_last_run.sql")) or [None])[0],
        "size_bytes": directory_size(mirror.warehouse.root),
        "snapshot": _snapshot(mirror),
    }


def _snapshot(mirror: Mirror) -> dict | None:
    """For a frozen snapshot: its cutoff and the state it was made from (snapshot.json)."""
    if mirror.as_of is None or "cutoff" not in mirror.state.meta:
        return None
    keys = ("cutoff", "mode", "source_state", "source_published_at", "studies", "exact_studies", "content_hash")
    return {key: mirror.state.meta.get(key) for key in keys}
