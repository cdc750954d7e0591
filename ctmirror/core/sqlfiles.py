"""Access to the SQL files under top-level `sql/`.

An installed wheel carries them as `ctmirror/sql` (hatch force-include); a source checkout or an
editable install reads the top-level folder directly.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path


@cache
def sql_root() -> Path:
    packaged = resources.files("ctmirror") / "sql"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "sql"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError("ctmirror's SQL files are missing: reinstall the package")


@cache
def read_sql(relative: str) -> str:
    """The text of one SQL file, e.g. `read_sql("normalize/studies.sql")`."""
    return (sql_root() / relative).read_text(encoding="utf-8")


def sql_files(folder: str) -> list[str]:
    """Relative names of the `.sql` files of a folder, in name order (their load order)."""
    return sorted(f"{folder}/{p.name}" for p in (sql_root() / folder).glob("*.sql"))


def sql_literal(text: str) -> str:
    """A string as an SQL literal, for the few places DuckDB binds no parameter (a COPY target, the files of a
    view's read_parquet): the one quoting helper."""
    return "'" + text.replace("'", "''") + "'"
