"""Plain-text tables for the terminal: no colours, no dependencies, widths fitted to the content."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def cell(value: Any, width: int) -> str:
    if value is None:
        text = ""
    elif isinstance(value, (list, tuple, set)):
        text = ", ".join(str(v) for v in (sorted(value) if isinstance(value, set) else value))
    elif isinstance(value, float):
        text = f"{value:g}"
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], *, max_width: int = 48) -> str:
    if not rows:
        return "(no rows)"
    cells = [[cell(row.get(c), max_width) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)),
             "  ".join("─" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def key_values(pairs: Sequence[tuple[str, Any]], *, max_width: int = 100) -> str:
    width = max(len(k) for k, _ in pairs)
    return "\n".join(f"{k.ljust(width)}  {cell(v, max_width)}" for k, v in pairs)
