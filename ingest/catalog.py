"""Writes a state's catalog.duckdb: views over the state's Parquet files, documentation, macros, methods.

View definitions must name their files literally (DuckDB binds no parameters in DDL), so paths go through
`sql_literal` (ctmirror/sqlfiles.py), the one quoting helper, into the templates of `sql/catalog_views/`;
everything else comes from the files under `sql/`. A view names its files relative to the catalog's root (the
warehouse, or a snapshot's folder), which a reader supplies as the variable ctmirror_root: the answers never
depend on the working directory or on where the folder has been moved.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ctmirror.core.duck import (
    process_threads,
    quiet,
    side_by_side,
    studies_per_index_range,
    writer_lanes,
    writer_memory,
)
from ctmirror.core.errors import WarehouseError
from ctmirror.core.sqlfiles import catalog_digests, macro_sql, read_sql, sql_digest, sql_files, sql_literal, sql_root
from ingest.thesaurus import thesaurus_digest


def file_list_sql(paths: Iterable[Path], root: Path, recorded_root: Path) -> str:
    """The SQL list of a view's files: each relative to `root` (where the files are while the catalog is built),
    resolved against ctmirror_root when read, else against `recorded_root` (where the folder will stay)."""
    base = root.resolve()
    relative = [Path(p).resolve().relative_to(base).as_posix() for p in paths]
    template = "\n".join(line for line in read_sql("catalog_views/queries.sql", "file_list").splitlines()
                         if not line.startswith("--"))  # an expression, spliced into a view's definition
    return (template.strip()
            .replace("{relative}", "[" + ", ".join(sql_literal(r) for r in relative) + "]")
            .replace("{root}", sql_literal(str(recorded_root.resolve()))))


# Rows per row group in the catalog's tables, a seventh of DuckDB's default: a method's lookups (a few texts'
# hits, a few cards) read the row groups holding their keys whole, so smaller groups read less, and full scans
# cost no more.
CATALOG_ROW_GROUP_ROWS = 16_384
CATALOG_STORAGE_VERSION = "v1.2.0"
# The synonym files every warehouse reads (sql/data/): abbreviations and spellings; the lay and other names of
# common MeSH disease headings; drugs' brand names and development codes with their generic names; the common
# names of drug classes with their MeSH pharmacological-action headings (found among the intervention ancestors).
BUILT_IN_SYNONYMS = ("synonyms.csv", "mesh_entry_terms.csv", "drug_names.csv", "drug_classes.csv")
# What the catalog is attached as while it is built: what DuckDB names it when a reader opens catalog.duckdb.
CATALOG_ALIAS = "catalog"

# The index's files numbered 00_ (every study's versions and when each is shown) build first, in order; then the
# search index (files up to SEARCH_INDEX_LAST) builds in order, each file reading the ones before, and every later
# file reads only the state's tables and the 00_ ones, so they build side by side with it.
VERSIONS_LAST = "00_"
SEARCH_INDEX_LAST = "06_"
# The tables whose every version's rows the version-aware index reads, as views all_<table>.
VERSIONED_INDEX_INPUTS = ("studies", "conditions", "interventions", "collaborators", "outcomes", "study_references",
                          "search_terms", "places", "study_details", "condition_links", "locations")


def _build_index(con: duckdb.DuckDBPyConnection, root: Path, version_files: list[Path], *,
                 strict_epochs: bool, on_index: Callable[[str, int, int], None] | None = None,
                 database: str = CATALOG_ALIAS, thesaurus: list[Path] | tuple[Path, ...] = ()) -> None:
    """The index files, on a cursor per core: a state's tables are a row group or two each, which DuckDB reads
    on one thread, so building tables side by side is what keeps every core busy. version_files: the files of
    study_versions, which hold every version's record (study_version notes which, relative to root). database:
    where the tables are made (and their inputs read): the catalog, or a patch's studies (_patch_index).
    thesaurus: imported synonym files (ingest/thesaurus.py) read beside the built-in ones (BUILT_IN_SYNONYMS)."""
    synonyms = [*(str(sql_root() / "data" / name) for name in BUILT_IN_SYNONYMS),
                *(str(Path(f).resolve()) for f in thesaurus)]
    index_params = {"synonyms": synonyms, "strict_epochs": strict_epochs,
                    "version_files": [str(Path(f).resolve()) for f in version_files],
                    "build_root": str(root.resolve())}

    names = sql_files("index")
    total, started, lock = len(names), [0], threading.Lock()  # index files begun, across the lanes
    ranges: list[dict[str, object]] = []  # of studies, once study_number is built (publish/index_ranges.sql)

    def execute(cursor: duckdb.DuckDBPyConnection, statement: str, params: dict) -> None:
        params = {k: v for k, v in {**index_params, **params}.items() if f"${k}" in statement}
        cursor.execute(statement, params or None)

    def run(names: list[str]) -> None:
        cursor = _in_catalog(quiet(con.cursor()), database)
        # variables are per cursor
        cursor.execute(read_sql("session/settings.sql", "set_root"), {"root": str(root.resolve())})
        try:
            for name in names:
                if on_index is not None:
                    with lock:
                        started[0] += 1
                        on_index(Path(name).stem.split("_", 1)[1], started[0], total)
                before, each_range, after = index_file_parts(read_sql(name))
                execute(cursor, before, {})
                for bounds in ranges if each_range else ():
                    for statement in statements(each_range):
                        execute(cursor, statement, bounds)
                if after:
                    execute(cursor, after, {})
        finally:
            cursor.close()

    versions = [n for n in names if Path(n).name <= VERSIONS_LAST + "~"]
    run(versions)
    found = _in_catalog(con, database).execute(read_sql("publish/index_ranges.sql"),
                                               {"per_range": studies_per_index_range() or 2**31 - 1})
    ranges.extend(dict(zip(("study_from", "study_to", "nct_from", "nct_to"), row)) for row in found.fetchall())
    search = [n for n in names if n not in versions and Path(n).name <= SEARCH_INDEX_LAST + "~"]
    others = [[n] for n in names if n not in versions and n not in search]
    lanes = ThreadPoolExecutor(max_workers=writer_lanes(), thread_name_prefix="ctmirror-index")
    with side_by_side(con), lanes as pool:
        for job in [pool.submit(run, search), *(pool.submit(run, names) for names in others)]:
            job.result()


def statements(text: str) -> list[str]:
    """A SQL file's statements, one by one: DuckDB binds parameters in one statement only."""
    return [statement for statement in text.split(";\n") if statement.strip()]


# An index file's statements run once, except those between these lines, which run once per range of studies
# with $study_from, $study_to (the first study_no of the range and the last), $nct_from and $nct_to (their NCT
# IDs) bound: a table built so is built in pieces whose memory the budget bounds, with the same rows in the same
# order as built whole. Without a budget there is one range.
EACH_RANGE = "-- for each range of studies:"
AFTER_RANGES = "-- after the ranges:"


def index_file_parts(text: str) -> tuple[str, str, str]:
    """An index file's statements: those run once before the ranges, per range, and once after."""
    before, _, rest = text.partition(EACH_RANGE + "\n")
    each_range, _, after = rest.partition(AFTER_RANGES + "\n")
    return before, each_range, after


def _in_catalog(con: duckdb.DuckDBPyConnection, database: str = CATALOG_ALIAS) -> duckdb.DuckDBPyConnection:
    """The connection (or cursor) with the catalog being built (or another of its databases) as its default
    database: a cursor starts in the in-memory one."""
    con.execute(f"USE {database}")  # one of our two aliases
    return con


def _document_every_version(con: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
    """Each all_<table> view documented as its table is (COMMENT ON takes no parameters: the names are ours, the
    comments our own text from sql/catalog/comments.sql, quoted by sql_literal)."""
    for table in tables:
        con.execute(f"COMMENT ON VIEW all_{table} IS "
                    + sql_literal(f"Every version's rows of {table} (the state's segments), same columns."))
        documented = {column: comment for column, _, comment in con.execute(
            read_sql("catalog/queries/status.sql", "documented_columns"), {"view": table}).fetchall()}
        for column, _, _ in con.execute(read_sql("catalog/queries/status.sql", "documented_columns"),
                                        {"view": f"all_{table}"}).fetchall():
            con.execute(f'COMMENT ON COLUMN all_{table}."{column}" IS ' + sql_literal(documented.get(column) or ""))


def _view_sql(template: str, view: str, files: str) -> str:
    """A view definition from its template (catalog_views/queries.sql's over_files): DuckDB binds no parameters in
    DDL, so the view's name (one of our table names) and its file list (file_list_sql) are filled in."""
    return template.replace("{view}", view).replace("{files}", files)


# The SQL a catalog's index is built by: a state's catalog is patched only by the code that built it. Not sql/serve/
# nor sql/calls/: a reader's queries, run as they are when it runs them.
NOT_IN_A_CATALOG = ("serve", "calls")


def index_fingerprint(thesaurus: list[Path] | tuple[Path, ...] = ()) -> str:
    """What the SQL that builds a catalog is now (a digest of its files), with the imported thesaurus it reads."""
    return sql_digest(NOT_IN_A_CATALOG, seed=thesaurus_digest(list(thesaurus)))


@dataclass(frozen=True)
class CatalogPatch:
    """Where a publish that changed few studies starts from: the previous state's catalog, built by this code over
    the same generation of segments, and the studies (NCT IDs) whose index rows it replaces. new_files: per input
    of NEW_VERSION_INPUTS, its files in the segments the previous state did not read. since_whole: the studies
    patched since the catalog was last built whole, these included (ingest.publish.catalog_patch)."""
    previous: Path
    changed: list[str]
    new_files: dict[str, list[Path]]
    since_whole: int = 0


# What the database a patch builds its studies' rows in is attached as (ATTACH ':memory:').
PATCH_ALIAS = "patch"
# How a patch brings each index table up to date from its studies' rows (_patch_index): tables of a version's
# rows (replaced by version_no), of a study's (by study_no), the search index's texts (new texts numbered after
# the last), tables rebuilt whole by their index file (aggregates over every version), and tables no study changes.
PATCHED_BY_VERSION = ("study_version", "search_word", "version_epoch", "trial_text", "trial_card", "trial_drug",
                      "trial_drug_key", "stopped_card", "stopped_word", "place_posting", "study_identifier",
                      "outcome_text")
# Tables of a version's rows that depend on that version's record alone: a patch keeps the rows of the versions the
# previous catalog knew and builds the new versions' alone, from NEW_VERSION_INPUTS, the inputs only these read
# (reading every version's locations and details again was most of a night's patch).
PATCHED_BY_NEW_VERSION = ("trial_detail", "eligibility_text", "study_country", "study_facility")
NEW_VERSION_INPUTS = ("study_details", "locations")
PATCHED_BY_STUDY = ("study_number",)
PATCHED_TEXTS = ("search_text", "search_token", "field_token", "search_hit", "stopped_hit", "place_norm")
REBUILT_BY_PATCH = {"condition_link": "index/05_condition_link.sql",
                    "intervention_link": "index/05_intervention_link.sql", "nct_alias": "index/12_nct_alias.sql"}
UNCHANGED_BY_PATCH = ("search_area", "condition_mask_score", "intervention_mask_score", "term_mask_score", "synonym",
                      "synonym_set")
# The inputs the index's files read most, whose changed studies' rows a patch copies once rather than have every
# file that reads them scan all their rows again.
COPIED_FOR_PATCH = ("studies", "current_version", *(f"all_{t}" for t in VERSIONED_INDEX_INPUTS))


def _patch_index(con: duckdb.DuckDBPyConnection, root: Path, version_files: list[Path], patch: CatalogPatch, *,
                 on_index: Callable[[str, int, int], None] | None = None,
                 thesaurus: list[Path] | tuple[Path, ...] = ()) -> None:
    """The previous catalog's index (copied to this state's), brought up to date: the index files build the
    changed studies' rows in a database of their own, over views of the catalog's inputs holding those studies
    alone; then each table's rows of those studies are replaced by them (see PATCHED_BY_VERSION ...), and the keys
    that order as names do are renumbered where a new name moved them. The same rows as a whole build, but for
    new texts' numbers (text_id orders as the texts only up to the last full build). The tables of
    PATCHED_BY_NEW_VERSION keep the rows of the versions the previous catalog knew, renumbered where the patch
    renumbered them, and build the new versions' alone."""
    con.execute(f"ATTACH ':memory:' AS {PATCH_ALIAS}")
    try:
        con.execute(read_sql("publish/patch/changed_study.sql"), {"nct_ids": patch.changed})
        con.execute(read_sql("publish/patch/known_version.sql"))
        inputs = [view for (view,) in con.execute(read_sql("publish/patch/inputs.sql")).fetchall()]
        copied = [v for v in inputs if v in COPIED_FOR_PATCH]
        for view in inputs:
            if view not in copied:
                changed_rows = read_sql("catalog_views/queries.sql", "changed_rows")
                con.execute(changed_rows.replace("{view}", view))  # our own names
        new_only = {f"all_{table}": [str(f) for f in patch.new_files.get(table, [])] for table in NEW_VERSION_INPUTS}

        def copy(view: str) -> None:
            cursor = quiet(con.cursor())
            try:
                if view in new_only:  # our own names
                    create, fill = statements(read_sql("publish/patch/new_version_rows.sql").replace("{view}", view))
                    cursor.execute(create)
                    if new_only[view]:
                        cursor.execute(fill, {"files": new_only[view]})
                else:
                    cursor.execute(read_sql("publish/patch/queries.sql", "changed_rows_copy").replace("{view}", view))
            finally:
                cursor.close()

        with side_by_side(con), ThreadPoolExecutor(max_workers=writer_lanes()) as pool:
            list(pool.map(copy, copied))
        _in_catalog(con, PATCH_ALIAS)
        for name in sql_files("schema"):
            con.execute(read_sql(name))
        _build_index(con, root, version_files, strict_epochs=True, on_index=on_index, database=PATCH_ALIAS,
                     thesaurus=thesaurus)
        built = {t for (t,) in con.execute(read_sql("publish/patch/tables.sql"), {"database": PATCH_ALIAS}).fetchall()
                 if t not in copied}
        known = {*PATCHED_BY_VERSION, *PATCHED_BY_NEW_VERSION, *PATCHED_BY_STUDY, *PATCHED_TEXTS, *REBUILT_BY_PATCH,
                 *UNCHANGED_BY_PATCH}
        if built != known:
            raise WarehouseError(f"the patch of a catalog does not know the index's tables {sorted(built ^ known)}",
                                 hint="run `ctmirror republish` (a whole build); then report this as a bug")
        con.execute(read_sql("publish/patch/renumbered_version.sql"))
        renumbered = con.execute(read_sql("publish/patch/queries.sql", "renumbered_count")).fetchone()[0]
        _in_catalog(con)
        for table in PATCHED_BY_VERSION:  # each file's statements at once (none binds a parameter)
            con.execute(read_sql("publish/patch/queries.sql", "by_version").replace("{table}", table))  # our own names
        for table in PATCHED_BY_NEW_VERSION:
            drop, add = statements(read_sql("publish/patch/by_new_version.sql").replace("{table}", table))
            con.execute(drop)
            if renumbered:  # rare: scanning the table for none cost a night half a second
                con.execute(read_sql("publish/patch/renumber_kept.sql").replace("{table}", table))
            con.execute(add)
        for table in PATCHED_BY_STUDY:
            con.execute(read_sql("publish/patch/queries.sql", "by_study").replace("{table}", table))
        con.execute(read_sql("publish/patch/texts.sql"))
        con.execute(read_sql("publish/patch/name_keys.sql"))
        for table, index_file in REBUILT_BY_PATCH.items():
            con.execute(f"DROP TABLE {table}")  # one of our own table names
            con.execute(read_sql(index_file))
    finally:
        _in_catalog(con)
        con.execute(f"DETACH {PATCH_ALIAS}")


def build_catalog(path: Path, root: Path, tables: dict[str, list[Path]],
                  current_rows: dict[str, list[Path]] | None = None,
                  con: duckdb.DuckDBPyConnection | None = None, *, recorded_root: Path | None = None,
                  versions: dict[str, list[Path]] | None = None,
                  on_index: Callable[[str, int, int], None] | None = None, patch: CatalogPatch | None = None,
                  thesaurus: list[Path] | tuple[Path, ...] = ()) -> None:
    """root: the folder every file lies under (a warehouse, or a snapshot's folder) while the catalog is built;
    recorded_root: where that folder will be read from, if it is renamed into place after (default: root).
    tables: view name → the Parquet files it reads. current_rows: view name → segment files holding every
    version's rows, of which the view shows the current versions' (those of `studies`). versions: table → the
    segment files of every version's rows (views all_<table>), from which the index answers at any cutoff; None
    for a frozen snapshot, whose tables are its only versions and whose index answers as of its cutoff alone.
    con: a writer's connection to build on (see ingest.publish), left as it was found; by default a new one.
    patch: start from the previous state's catalog, which the caller has copied to `path` (ingest.publish copies
    it while doing other work), and replace the index rows of the studies it names alone. thesaurus: imported
    synonym files (ingest/thesaurus.py)."""
    if con is None:
        with closing(quiet(duckdb.connect(config={**writer_memory(), **process_threads()}))) as own:
            return build_catalog(path, root, tables, current_rows, own, recorded_root=recorded_root,
                                 versions=versions, patch=patch, thesaurus=thesaurus)
    recorded_root = recorded_root or root
    if patch is None:
        path.unlink(missing_ok=True)
    path.with_name(path.name + ".wal").unlink(missing_ok=True)  # a failed patch's, never to be replayed here
    con.execute(read_sql("session/settings.sql", "catalog_writer"))  # a database setting: the index's cursors share it
    con.execute(read_sql("session/settings.sql", "set_root"), {"root": str(root.resolve())})
    # The row group size is an option of ATTACH only, and a file keeps it only while attached so. The storage
    # version is the oldest whose files store a column zstd-compressed (trial_detail's criteria): DuckDB 1.2.
    con.execute(f"ATTACH {sql_literal(str(path))} AS {CATALOG_ALIAS} "
                f"(ROW_GROUP_SIZE {CATALOG_ROW_GROUP_ROWS}, STORAGE_VERSION '{CATALOG_STORAGE_VERSION}')")
    try:
        _in_catalog(con)
        for name in sql_files("schema"):
            con.execute(read_sql(name))
        over_files = read_sql("catalog_views/queries.sql", "over_files")
        for view, files in sorted(tables.items()):
            con.execute(_view_sql(over_files, view, file_list_sql(files, root, recorded_root)))
        if patch is None:
            con.execute(read_sql("publish/queries.sql", "current_version_table"))
        else:  # the previous catalog's, its changed studies' rows replaced (600,000 rows read and sorted: 1.3 s)
            for statement in statements(read_sql("publish/patch/current_version.sql")):
                con.execute(statement, {"nct_ids": patch.changed})
        for view, files in sorted((current_rows or {}).items()):
            con.execute(_view_sql(read_sql("catalog_views/current_rows.sql"), view,
                                  file_list_sql(files, root, recorded_root)))
        every_version = versions or {t: tables[t] for t in VERSIONED_INDEX_INPUTS}
        for table, files in sorted(every_version.items()):
            con.execute(_view_sql(over_files, f"all_{table}", file_list_sql(files, root, recorded_root)))
        # The search index and trial cards are native tables: point lookups on them take milliseconds
        # where the same lookups over Parquet would read whole columns.
        if patch is None:
            _build_index(con, root, tables["study_versions"], strict_epochs=versions is not None, on_index=on_index,
                         thesaurus=thesaurus)
        else:
            _patch_index(con, root, tables["study_versions"], patch, on_index=on_index, thesaurus=thesaurus)
        for folder in ("catalog", "methods", "stats"):  # the statistics use the methods' matcher
            for name in sql_files(folder):
                con.execute(macro_sql(name))
        _document_every_version(con, sorted(every_version))
        tables_digest, macros_digest = catalog_digests()
        con.execute(read_sql("publish/queries.sql", "catalog_format"),
                    {"tables_digest": tables_digest, "macros_digest": macros_digest})
        con.execute(f"CHECKPOINT {CATALOG_ALIAS}")
    finally:
        con.execute(read_sql("session/settings.sql", "catalog_writer_done"))
        con.execute(read_sql("session/settings.sql", "reset_root"))
        con.execute(f"DETACH {CATALOG_ALIAS}")
