"""Plain-text tables for the terminal: no colours, no dependencies, widths fitted to the content."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def text_of(value: Any) -> str:
    if value is None:
        text = ""
    elif isinstance(value, (list, tuple, set)):
        text = ", ".join(str(v) for v in (sorted(value) if isinstance(value, set) else value))
    elif isinstance(value, float):
        text = f"{value:g}"
    else:
        text = str(value)
    return " ".join(text.split())


def cell(value: Any, width: int) -> str:
    text = text_of(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def middle_cut(text: str, width: int) -> str:
    """Its start and its end, for texts that differ only past where a plain cut stops."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], *, max_width: int = 48) -> str:
    if not rows:
        return "(no rows)"
    cells = [[cell(row.get(c), max_width) for c in columns] for row in rows]
    for i, column in enumerate(columns):  # two different values must not look the same once cut
        full = [text_of(row.get(column)) for row in rows]
        shown: dict[str, set[str]] = {}
        for text, cut in zip(full, (r[i] for r in cells)):
            shown.setdefault(cut, set()).add(text)
        if any(len(texts) > 1 for texts in shown.values()):
            for r, text in zip(cells, full):
                r[i] = middle_cut(text, max_width)
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)),
             "  ".join("─" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def key_values(pairs: Sequence[tuple[str, Any]], *, max_width: int = 100) -> str:
    width = max(len(k) for k, _ in pairs)
    return "\n".join(f"{k.ljust(width)}  {cell(v, max_width)}" for k, v in pairs)
