"""AACT flat-file dumps → v2 study records.

An AACT dump (a zip, or a folder, of `|`-delimited `.txt` files, one per table) is read with DuckDB's CSV reader
and each study is put back together as the v2 JSON record CTTI's mapping took it from (ingest/aact_plan.py says
how). The records then go through the same validation, versioning and normalisation as the API's, so every
method means the same whichever source fed the warehouse.

A dump is checked whole before anything is stored: a missing required file, a missing column or a file not
delimited by `|` refuses the dump, naming the file. A row DuckDB cannot read (wrong type, too many fields) costs
only its study, quarantined with the file and line; a bad row that names no study refuses the dump.
"""

from __future__ import annotations

import bisect
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ctmirror.core.duck import BESIDE_PYTHON, CORES, new_connection
from ctmirror.core.errors import InputError
from ctmirror.core.sqlfiles import read_sql, sql_literal
from ingest.aact_plan import (
    DERIVED_LEAVES,
    LINKED_MEMBERS,
    Entry,
    Path_,
    field_types,
    parent_keys,
    plan,
    required_tables,
    tables_read,
)
from ingest.sources import Candidate

_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_NCT_ID = re.compile(r"NCT\d{8}")
_DUMP_DATE = re.compile(r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})(?!\d)")
CHUNK_STUDIES = 10_000
PARALLEL_EXTRACTORS = CORES
_AFTER_ALL = "\U0010ffff"  # sorts after every string: the last chunk's upper bound
_CHUNK = "{alias}.nct_id >= (SELECT lo FROM aact_args) AND {alias}.nct_id < (SELECT hi FROM aact_args)"


class AactDumpError(InputError):
    """The dump cannot be loaded as a whole; the message names the file (and line, where there is one)."""


def dump_date_from_name(path: Path) -> str | None:
    """AACT names its dumps by date (`20240601_clinical_trials.zip`, `2024-06-01_export`)."""
    match = _DUMP_DATE.search(path.name)
    return f"{match[1]}-{match[2]}-{match[3]}" if match else None


@dataclass
class _Table:
    name: str
    path: Path
    header: list[str]


class AactDump:
    """One dump's table files, checked and read into a DuckDB connection of its own."""

    def __init__(self, label: str, files: dict[str, Path], structure: dict) -> None:
        self.label = label
        self.files = files
        self.structure = structure
        self.tables: dict[str, _Table] = {}
        self.bad: dict[str, tuple[str, str, str]] = {}
        self.parent_key: dict[str, str | None] = {}
        self.con: duckdb.DuckDBPyConnection | None = None

    def check(self) -> None:
        """Required files present, `|`-delimited, with every column the reassembly reads."""
        required = required_tables(self.structure)
        for table in sorted(required):
            if table not in self.files:
                raise AactDumpError(f"AACT dump {self.label}: the required file {table}.txt is missing")
        keys = parent_keys()
        for table, columns in tables_read().items():
            if table not in self.files:
                continue
            header = self._header(table)
            missing = [c for c in columns if c not in header and c not in keys.get(table, ())]
            if table in keys and not any(k in header for k in keys[table]):
                missing.append(" or ".join(keys[table]))
            if missing and table in required:
                raise AactDumpError(
                    f"AACT dump {self.label}: {table}.txt line 1: missing column(s) {', '.join(missing)} "
                    f"(the header has {', '.join(header)})")
            if not missing:  # a table ctmirror does not read from, in a shape it does not know: left out
                self.tables[table] = _Table(table, self.files[table], header)

    def _header(self, table: str) -> list[str]:
        with open(self.files[table], "rb") as f:
            first = f.readline().removeprefix(b"\xef\xbb\xbf").rstrip(b"\r\n")
        try:
            text = first.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AactDumpError(f"AACT dump {self.label}: {table}.txt line 1: not UTF-8 ({exc})") from exc
        if not text:
            raise AactDumpError(f"AACT dump {self.label}: {table}.txt line 1: no header (empty file)")
        if "|" not in text and "nct_id" not in text.split("|"):
            for other in (",", "\t", ";"):
                if other in text:
                    raise AactDumpError(
                        f"AACT dump {self.label}: {table}.txt line 1: the header is delimited by {other!r}, "
                        f"AACT files use '|': {text[:200]!r}")
        return text.split("|")

    def read(self, con: duckdb.DuckDBPyConnection) -> None:
        """Reads every table into `con` and sorts out refused rows; raises on one that names no study."""
        needed = tables_read()
        for table in self.tables.values():
            if not _IDENTIFIER.match(table.name):
                raise AactDumpError(f"AACT dump {self.label}: {table.name!r} is not a table name")
            types = needed[table.name]
            columns = {c: types.get(c, "VARCHAR") for c in table.header}
            links = parent_keys().get(table.name, ())
            self.parent_key[table.name] = next((c for c in table.header if c in links), None)
            con.execute(read_sql("aact/read_table.sql").replace("{table}", table.name),
                        {"path": str(table.path), "columns": columns})
        con.execute(read_sql("aact/derived.sql"))
        con.execute(read_sql("aact/links.sql"))
        self.bad = self._bad_rows(con)
        unnamed = con.execute(read_sql("aact/queries.sql", "unnamed_studies")).fetchone()[0]
        if unnamed:
            raise AactDumpError(f"AACT dump {self.label}: studies.txt: {unnamed} row(s) have no nct_id")
        # The reassembly runs beside the normaliser's DuckDB and Python's validation, so it gets what they leave: a
        # second thread only adds contention, even for the first chunk, which runs while the dump is stored.
        con.execute(read_sql("session/settings.sql", "threads"), {"threads": BESIDE_PYTHON})
        self.con = con

    @contextmanager
    def reassembled(self) -> Iterator[Iterator[Candidate]]:
        """Every study as a candidate record, in nct_id order; then the studies a refused row quarantines
        (all of a study or none of it: a half-read study is never loaded). The first chunk is put together from
        the moment the block is entered, while the caller stores the dump and sets up its normaliser."""
        query, params = reassembly_sql(set(self.tables), self.parent_key)
        every = {"every": CHUNK_STUDIES}
        ids = [r[0] for r in self.con.execute(read_sql("aact/chunk_starts.sql"), every).fetchall()]
        bounds = list(zip(ids, [*ids[1:], None]))
        reassembly = self.con.cursor()

        def prepare() -> None:
            # Prepared once: planning the query took 0.6 s, a fifth of putting a chunk together. Its arguments (the
            # chunk's bounds, the mapping's constants) are a row it reads, bound when written, so the plan holds.
            columns = ", ".join(f"${name} AS {_ident(name)}" for name in ("lo", "hi", *params))
            reassembly.execute(f"CREATE OR REPLACE TABLE aact_args AS SELECT {columns}",
                               {"lo": "", "hi": _AFTER_ALL, **params})
            reassembly.execute(f"PREPARE aact_reassembly AS {query}")

        def chunk(lo: str, hi: str | None) -> list[tuple[str, bytes]]:
            reassembly.execute(read_sql("aact/queries.sql", "chunk_bounds"), {"lo": lo, "hi": hi or _AFTER_ALL})
            return reassembly.execute("EXECUTE aact_reassembly").fetchall()

        def first(lo: str, hi: str | None) -> list[tuple[str, bytes]]:
            prepare()
            return chunk(lo, hi)

        def in_order(ahead: ThreadPoolExecutor, upcoming: Future | None) -> Iterator[Candidate]:
            # In chunks of studies, so the records in hand take bounded memory however big the dump. The next chunk
            # is put together on a cursor of its own while this one's records are validated and handed to the
            # normaliser (a third thread); records come as bytes (the query encodes them), which validation and
            # staging read.
            for n in range(len(bounds)):
                rows = upcoming.result()
                upcoming = ahead.submit(chunk, *bounds[n + 1]) if n + 1 < len(bounds) else None
                for nct_id, record in rows:
                    if nct_id not in self.bad:
                        yield Candidate(f"studies.txt {nct_id}", data=record)
            for nct_id, (where, reason, text) in sorted(self.bad.items()):
                yield Candidate(where, problem=reason, raw_text=text, nct_id=nct_id)

        try:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctmirror-aact") as ahead:
                yield in_order(ahead, ahead.submit(first, *bounds[0]) if bounds else None)
        finally:
            reassembly.close()

    def _bad_rows(self, con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, str, str]]:
        """Studies with a row DuckDB refused: nct_id → (file and line, reason, the row's text). The first
        refusal (by file, then line) is the reason given."""
        rejects = con.execute(read_sql("aact/rejects.sql")).fetchall()
        by_path = {str(t.path): t.name for t in self.tables.values()}
        lines = _LineIndex()
        bad: dict[str, tuple[str, str, str]] = {}
        for path, position, column, _kind, text, message in rejects:
            file = f"{by_path.get(path, Path(path).stem)}.txt"
            where = f"{file} line {lines.line_of(path, position)}"
            column_note = f" (column {column})" if column else ""
            nct = _NCT_ID.search(text or "")
            if nct is None:
                raise AactDumpError(f"AACT dump {self.label}: {where}: {message}{column_note}; the row names "
                                    "no study, so the dump is refused")
            bad.setdefault(nct[0], (where, f"AACT {where}: {message}{column_note}", text))
        return bad


class _LineIndex:
    """Byte offsets → 1-based line numbers, one pass per file, only for files with refused rows."""

    def __init__(self) -> None:
        self._starts: dict[str, list[int]] = {}

    def line_of(self, path: str, position: int) -> int:
        if path not in self._starts:
            starts = [0]
            offset = 0
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    at = chunk.find(b"\n")
                    while at != -1:
                        starts.append(offset + at + 1)
                        at = chunk.find(b"\n", at + 1)
                    offset += len(chunk)
            self._starts[path] = starts
        return bisect.bisect_right(self._starts[path], position)


@contextmanager
def open_dump(path: Path, structure: dict) -> Iterator[AactDump]:
    """A zip or folder of AACT `.txt` files; a zip's members are extracted to a scratch folder (only the
    tables read), since DuckDB reads files."""
    wanted = set(tables_read())
    if path.is_dir():
        files = {p.stem: p for p in sorted(path.rglob("*.txt")) if p.stem in wanted}
        yield AactDump(str(path), files, structure)
        return
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise AactDumpError(f"AACT dump {path}: not a readable zip archive or folder ({exc})") from exc
    scratch = Path(tempfile.mkdtemp(prefix="ctmirror-aact-"))
    try:
        with archive:
            members: dict[str, zipfile.ZipInfo] = {}
            for info in sorted(archive.infolist(), key=lambda i: i.filename):
                name = Path(info.filename)
                if name.suffix == ".txt" and name.stem in wanted:
                    members.setdefault(name.stem, info)
        files = {stem: scratch / Path(info.filename).name for stem, info in members.items()}

        def extract(stem: str) -> None:
            # Each worker reads through an archive handle of its own; zlib inflates without holding the GIL.
            with zipfile.ZipFile(path) as own, own.open(members[stem]) as src, open(files[stem], "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)

        biggest_first = sorted(members, key=lambda stem: -members[stem].file_size)
        with ThreadPoolExecutor(max_workers=PARALLEL_EXTRACTORS, thread_name_prefix="ctmirror-unzip") as pool:
            list(pool.map(extract, biggest_first))
        yield AactDump(str(path), files, structure)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def dump_candidates(path: Path) -> Iterator[Candidate]:
    """The records of a stored dump (rebuild reads raw/ this way). A dump was checked when it was received,
    so a failure here is reported as one quarantined candidate rather than raised."""
    from ingest.normalize import study_structure_of

    with dump_connection() as con, open_dump(path, study_structure_of(con)) as dump:
        try:
            dump.check()
            dump.read(con)
        except AactDumpError as exc:
            yield Candidate("dump", problem=str(exc), raw_text="")
            return
        with dump.reassembled() as candidates:
            yield from candidates


@contextmanager
def dump_connection() -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection for reading one dump. Its tables hold the whole dump (a full registry's is several GB), so
    DuckDB gets a scratch folder to spill them to rather than holding them all in memory."""
    with tempfile.TemporaryDirectory(prefix="ctmirror-aact-spill-") as spill:
        con = new_connection(Path(spill))
        try:
            yield con
        finally:
            con.close()


def reassembly_sql(available: set[str], parent_key: dict[str, str | None]) -> tuple[str, dict[str, object]]:
    """One query giving (nct_id, v2 record JSON) per AACT study, built from the plan: a CTE per entry, then the
    record's JSON text following the v2 field tree. Names come from CTTI's mapping (checked identifiers); the
    chunk's bounds and the constants are read from the one-row table aact_args, whose values are bound when it is
    written (the query is prepared once for every chunk), and params names them."""
    builder = _Builder(available, parent_key)
    return builder.query(), builder.params


class _Builder:
    """Every value is written as JSON text where it is read (a leaf with to_json, an object or list by joining
    its parts), never as a struct serialised at the end. The record joins one entry after another to the
    studies, and each join copies every column joined so far: a deep copy for nested lists and structs, one
    pointer for a text. And an object written member by member leaves out the NULL ones, as the API does, where
    a serialised struct writes "member":null for each, to be cut out of the text afterwards: the same bytes, in a
    fraction of the time."""

    def __init__(self, available: set[str], parent_key: dict[str, str | None]) -> None:
        self.available = available
        self.parent_key = parent_key
        self.ctes: list[str] = []
        self.joins: list[str] = []
        self.params: dict[str, object] = {}
        self.leaves: dict[Path_, str] = {}  # path → SQL giving the field's JSON text, NULL when absent

    def query(self) -> str:
        for entry in plan():
            if entry.table in self.available:
                self._top_entry(entry)
        for path, (table, expression, _types) in DERIVED_LEAVES.items():
            if table == "studies":
                self.leaves[path] = _json_of(f"s.{expression}" if _IDENTIFIER.match(expression) else expression)
            elif table in self.available:
                alias = self._cte(f"SELECT t.nct_id, {expression} AS v FROM {_ident('aact_' + table)} AS t "
                                  f"{self._where(None)} "
                                  "QUALIFY row_number() OVER (PARTITION BY t.nct_id ORDER BY t.id) = 1")
                self.leaves[path] = _json_of(f"{alias}.v")
        record = _json_tree(self.leaves, field_types())
        # The chunk's studies first, on their own: filtered where they are joined, every study of the dump went
        # through each of the fifty joins before the filter (0.43 s for a chunk of one study at 100,224, 0.23-0.26 now).
        chunk = f"chunk_studies AS MATERIALIZED (SELECT * FROM aact_studies AS s WHERE {_CHUNK.format(alias='s')})"
        return ("WITH " + ",\n".join([chunk, *self.ctes]) + "\n"
                f"SELECT s.nct_id, encode({record}) AS record\n"
                f"FROM chunk_studies AS s\n" + "\n".join(self.joins) + "\nORDER BY s.nct_id")

    def _bind(self, value: object) -> str:
        """A constant, as a column of the row of arguments (see AactDump.reassembled)."""
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f"(SELECT {name} FROM aact_args)"

    def _cte(self, body: str) -> str:
        alias = f"e{len(self.ctes)}"
        self.ctes.append(f"{alias} AS ({body})")
        self.joins.append(f"LEFT JOIN {alias} ON {alias}.nct_id = s.nct_id")
        return alias

    def _where(self, entry: Entry | None, alias: str = "t") -> str:
        """This chunk's studies (every table has nct_id), and the entry's constants."""
        conditions = [_CHUNK.format(alias=alias)]
        conditions += [f"{alias}.{_ident(c)} = {self._bind(v)}" for c, v in (entry.filters if entry else {}).items()]
        return " WHERE " + " AND ".join(conditions)

    def _top_entry(self, entry: Entry) -> None:
        table = _ident(f"aact_{entry.table}")
        if entry.table == "studies":
            for member in entry.members:
                self.leaves.setdefault(entry.root + member.path, _json_of(_member_sql(member, "s")))
            return
        if not entry.is_list:
            columns = ", ".join(f"{_member_sql(m, 't')} AS m{i}" for i, m in enumerate(entry.members))
            alias = self._cte(f"SELECT t.nct_id, {columns} FROM {table} AS t{self._where(entry)} "
                              "QUALIFY row_number() OVER (PARTITION BY t.nct_id ORDER BY t.id) = 1")
            for i, member in enumerate(entry.members):
                self.leaves.setdefault(entry.root + member.path, _json_of(f"{alias}.m{i}"))
            return
        element, joins = self._element(entry, "t")
        alias = self._cte(_json_list("t.nct_id", "t", f"FROM {table} AS t {joins}{self._where(entry)}", element))
        self.leaves.setdefault(entry.root, f"{alias}.v")

    def _element(self, entry: Entry, alias: str) -> tuple[str, str]:
        """One list element's JSON text (a string, or an object), and the joins it needs."""
        if entry.scalar_column:
            return _json_of(f"{alias}.{_ident(entry.scalar_column)}"), ""
        members: dict[Path_, str] = {m.path: _json_of(_member_sql(m, alias)) for m in entry.members}
        joins = []
        for n, child in enumerate(entry.children):
            if child.table not in self.available:
                continue
            child_alias = f"{alias}c{n}"
            rows = f"{child_alias}r"
            inner, inner_joins = self._element(child, rows)
            parent = f"{rows}.{_ident(self.parent_key[child.table] or '')}"
            listed = _json_list(parent, rows, f"FROM {_ident('aact_' + child.table)} AS {rows} {inner_joins}"
                                              f"{self._where(child, rows)}", inner, key_name="parent_id")
            joins.append(f"LEFT JOIN ({listed}) AS {child_alias} ON {child_alias}.parent_id = {alias}.id")
            members[child.root] = f"{child_alias}.v"
        for (root, member), view in LINKED_MEMBERS.items():
            if root == entry.root and "design_group_interventions" in self.available:
                link_alias = f"{alias}l{len(joins)}"
                # The chunk's links only: joined whole, the link table was a hash table built afresh for every
                # chunk, and a bigger one the bigger the dump.
                links = f"SELECT parent_id, v FROM {view} AS {link_alias}{self._where(None, link_alias)}"
                joins.append(f"LEFT JOIN ({links}) AS {link_alias} ON {link_alias}.parent_id = {alias}.id")
                members[(member,)] = _json_of(f"{link_alias}.v")
        element_types = _subtree(field_types(), entry.root)
        return _json_tree(members, element_types), " ".join(joins)


def _json_list(key: str, alias: str, source: str, element: str, *, key_name: str = "nct_id") -> str:
    """A query of one JSON list per key: the elements of the rows of `source` (whose alias is `alias`) that are
    not NULL, in AACT id order (the record's order); NULL for a key with none. The element is computed once, in
    the inner query: as a WHERE clause the NULL test would be pushed into it and compute the element twice."""
    return (f"SELECT k AS {_ident(key_name)}, nullif(concat('[', array_to_string(in_ordinal_order("
            f"list({{'o': o, 'v': e}}) FILTER (WHERE e IS NOT NULL)), ','), ']'), '[]') AS v "
            f"FROM (SELECT {key} AS k, {alias}.id AS o, {element} AS e {source}) GROUP BY k")


def _subtree(tree: dict, path: Path_) -> dict:
    node: dict = {"children": tree}
    for name in path:
        node = node.get("children", {}).get(name, {})
    return node.get("children", {})


def _json_of(expression: str) -> str:
    """A value's JSON text; NULL stays NULL (to_json(NULL) is NULL), so the member is left out."""
    return f"to_json({expression})::VARCHAR"


def _json_tree(leaves: dict[Path_, str], types: dict, key: str | None = None) -> str:
    """The JSON text of an object holding the leaves (each already JSON text), members in the v2 field tree's
    order, NULL ones left out; an object with no member left is NULL itself, so its parent leaves it out too.
    With a key, the text is the parent's member `"key":{...}`. Each level's text is made with one concat: a
    record's bytes are copied once per level, where `'{' || ... || '}'` and then `'"key":' || ...` copied
    them three times (a third of putting a chunk together)."""
    grouped: dict[str, dict[Path_, str]] = {}
    for path, expression in leaves.items():
        grouped.setdefault(path[0], {})[path[1:]] = expression
    order = list(types)
    parts = []
    for name in sorted(grouped, key=lambda n: (order.index(n) if n in order else len(order), n)):
        inner = grouped[name]
        member = _ident(name, camel=True)[1:-1]
        if list(inner) == [()]:
            parts.append(f"'\"{member}\":' || {inner[()]}")
        else:
            parts.append(_json_tree(inner, types.get(name, {}).get("children", {}), member))
    prefix = f'"{key}":' if key else ""
    return f"nullif(concat('{prefix}{{', concat_ws(',', {', '.join(parts)}), '}}'), '{prefix}{{}}')"


def _member_sql(member, alias: str) -> str:
    column = f"{alias}.{_ident(member.column)}"
    if member.absent_as is not None:
        column = f"nullif({column}, {sql_literal(member.absent_as)})"
    if member.kind == "enum":
        return f"aact_enum({column})"
    if member.kind == "date":
        return f"aact_date({column})"
    return column


_FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


def _ident(name: str, *, camel: bool = False) -> str:
    if not (_FIELD_NAME if camel else _IDENTIFIER).match(name):
        raise ValueError(f"not a plain identifier: {name!r}")
    return f'"{name}"'
