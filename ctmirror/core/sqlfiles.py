"""Access to the SQL files under top-level `sql/`.

An installed wheel carries them as `ctmirror/sql` (hatch force-include); a source checkout or an
editable install reads the top-level folder directly.
"""

from __future__ import annotations

import hashlib
import re
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
def read_sql(relative: str, name: str | None = None) -> str:
    """The text of one SQL file, e.g. `read_sql("normalize/studies.sql")`; or, with `name`, of one query of a file
    of named queries, e.g. `read_sql("session/settings.sql", "threads")`."""
    if name is None:
        return (sql_root() / relative).read_text(encoding="utf-8")
    queries = named_queries(relative)
    if name not in queries:
        raise KeyError(f"sql/{relative} has no query named {name!r}: it has {', '.join(queries)}")
    return queries[name]


# The line a query of a file of named queries begins with (its comment follows it).
QUERY_NAME = re.compile(r"^-- name: (\w+)[ \t]*$", re.MULTILINE)


@cache
def named_queries(relative: str) -> dict[str, str]:
    """The queries of a file of short ones, by name: each from the line after its `-- name: <name>` to the next
    such line (the file's own comment, before the first, describes the file). Short statements live together so
    a folder shows what it makes rather than dozens of one-line files."""
    pieces = QUERY_NAME.split(read_sql(relative))
    queries = {name: text.strip("\n") + "\n" for name, text in zip(pieces[1::2], pieces[2::2], strict=True)}
    if len(queries) != len(pieces) // 2:
        raise ValueError(f"sql/{relative} names a query twice")
    return queries


@cache
def macro_sql(relative: str) -> str:
    """The statements of a file of macros: a statistic's file (sql/stats/stats_*.sql) is the body of its macro,
    written into the signature every statistic shares (sql/stats/template/statistic.sql); any other file as it is."""
    folder, _, name = relative.partition("/")
    if folder != "stats" or not name.startswith("stats_"):
        return read_sql(relative)
    template = "\n".join(line for line in read_sql("stats/template/statistic.sql").splitlines()
                         if not line.startswith("--"))  # its comment names the placeholders
    return template.replace("{name}", name.removesuffix(".sql")).replace("{body}", read_sql(relative))


def sql_files(folder: str) -> list[str]:
    """Relative names of the `.sql` files of a folder, in name order (their load order)."""
    return sorted(f"{folder}/{p.name}" for p in (sql_root() / folder).glob("*.sql"))


def sql_literal(text: str) -> str:
    """A string as an SQL literal, for the few places DuckDB binds no parameter (a COPY target, the files of a
    view's read_parquet): the one quoting helper."""
    return "'" + text.replace("'", "''") + "'"


def sql_digest(leaving_out: tuple[str, ...] = (), seed: str = "", only: tuple[str, ...] | None = None) -> str:
    """A digest of the SQL files (their names and bytes) but those of the top-level folders left out (or of the
    folders `only` names alone), after `seed`: what tells a warehouse built by other SQL from one built by this."""
    digest = hashlib.sha256(seed.encode())
    for path in sorted(sql_root().rglob("*")):
        folder = path.relative_to(sql_root()).parts[0]
        if path.is_file() and folder not in leaving_out and (only is None or folder in only):
            digest.update(path.relative_to(sql_root()).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


# The folders of the catalog's macros, installed in every catalog and installable by a reader over a catalog built
# by other ones (ctmirror.read.mirror), schema first: the methods and statistics use its helpers.
CATALOG_MACROS = ("schema", "methods", "stats")
# The folders a catalog's tables and views do not come from: the readers' own queries (read as they run), the
# catalog's documentation and the macros above.
NOT_IN_CATALOG_TABLES = ("serve", "calls", "catalog", "methods", "stats")


@cache
def catalog_digests() -> tuple[str, str]:
    """(tables, macros): digests of the SQL a catalog's tables and views come from, and of its macros. A state whose
    tables' digest is another reads as another version's; one whose macros' alone differ is read with these."""
    return sql_digest(NOT_IN_CATALOG_TABLES), sql_digest(only=CATALOG_MACROS)
