"""Mirror: the read-only Python entry point to a warehouse (or a frozen snapshot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ctmirror.errors import WarehouseError
from ctmirror.methods import Methods
from ctmirror.warehouse import State, Warehouse


class Mirror(Methods):
    """Opens one published state of a warehouse read-only; every query sees that state, whatever syncs do.

    >>> m = Mirror("warehouse")
    >>> m.sql("SELECT overall_status, count(*) AS n FROM studies GROUP BY ALL ORDER BY n DESC")
    """

    def __init__(self, warehouse: str | Path | None = None, *, state: str | None = None) -> None:
        self.warehouse = Warehouse(warehouse)
        self.state: State = self.warehouse.state(state)
        self._pinned: dict[str, Mirror] = {}
        try:
            self.con = duckdb.connect(str(self.state.catalog), read_only=True)
        except duckdb.Error as exc:
            raise WarehouseError(f"cannot open the catalog of state {self.state.state_id}: {exc}") from exc

    @property
    def state_id(self) -> str:
        return self.state.state_id

    def sql(self, query: str, params: dict[str, Any] | list[Any] | None = None) -> pl.DataFrame:
        """Runs one read-only query with bound parameters; returns a polars DataFrame."""
        return self.con.execute(query, params).pl()

    def rows(self, query: str, params: dict[str, Any] | list[Any] | None = None) -> list[dict[str, Any]]:
        cursor = self.con.execute(query, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def at_state(self, state_id: str) -> Mirror:
        """The same warehouse as it was at another kept state (StateNotFound if no longer kept)."""
        other = self._pinned.get(state_id)
        if other is None:
            other = self._pinned[state_id] = Mirror(self.warehouse.root, state=state_id)
        return other

    def close(self) -> None:
        for other in self._pinned.values():
            other.close()
        self.con.close()

    def __enter__(self) -> Mirror:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
