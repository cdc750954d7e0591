"""How AACT's tables map back onto v2 study records, read from CTTI's own mapping (v2 JSON paths → AACT tables
and columns, `sql/data/aact/aact-v2_lib_aact_mapping.json`) and the v2 field tree (`v2_field_types.json`).

The mapping was written to go from JSON to AACT; this module inverts it. Its JSON form lost Ruby's distinction
between a path (a symbol) and a constant (a string): a value that names a field of the entry's root is a path,
anything else is a constant that tells which root an AACT row came from (sponsors' `lead_or_collaborator`,
design_outcomes' `outcome_type`, browse_*'s `mesh_type`), so it becomes a filter when reading back.

Not invertible, and so left out: results (ctmirror keeps results only as `hasResults`), columns computed by a
Ruby proc (`{}` in the JSON: phases, masking flags, std ages, contact types), lowercased copies, and a root that
a second entry derives from the first (countries from locations). The few computed fields ctmirror reads come
back through `sql/aact/derived.sql` instead (`DERIVED_LEAVES` and the link tables below).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache

from ctmirror.core.sqlfiles import sql_root

Path_ = tuple[str, ...]

# JSON types of v2 leaves, as DuckDB reads the AACT column holding them.
_READ_TYPES = {"boolean": "BOOLEAN", "integer": "BIGINT", "long": "BIGINT", "number": "DOUBLE"}


@dataclass
class Member:
    """One JSON member filled from one AACT column."""

    path: Path_  # relative to the entry's root (inside each element, for a list)
    column: str
    read_type: str  # the DuckDB type the column is read as
    absent_as: str | None = None  # a placeholder AACT writes for "not given" ("N/A" for ages)
    kind: str | None = None  # "enum" or "date": spelled the v2 way even when an older dump spelled it for display


@dataclass
class Entry:
    """One AACT table feeding one place of the record: an object, a list of objects, or a list of strings."""

    table: str
    root: Path_
    is_list: bool
    members: list[Member] = field(default_factory=list)
    scalar_column: str | None = None  # a list of strings (conditions, keywords, other names)
    filters: dict[str, object] = field(default_factory=dict)  # constant columns telling this root's rows apart
    parent_keys: tuple[str, ...] = ()  # the names a child's column holding its parent row's id may have
    children: list[Entry] = field(default_factory=list)

    def read_types(self) -> dict[str, str]:
        types = {m.column: m.read_type for m in self.members}
        if self.scalar_column:
            types[self.scalar_column] = "VARCHAR"
        for column, value in self.filters.items():
            types[column] = "BOOLEAN" if isinstance(value, bool) else "VARCHAR"
        for key in self.parent_keys:
            types[key] = "BIGINT"
        return types


# Computed by AACT (a Ruby proc, or calculated_values), rebuilt by the macros of sql/aact/derived.sql.
DERIVED_LEAVES: dict[Path_, tuple[str, str, dict[str, str]]] = {
    ("protocolSection", "identificationModule", "nctId"): ("studies", "nct_id", {}),
    ("protocolSection", "designModule", "phases"): ("studies", "aact_phases(phase)", {"phase": "VARCHAR"}),
    ("protocolSection", "eligibilityModule", "stdAges"): (
        "eligibilities", "aact_std_ages(child, adult, older_adult)",
        {"child": "BOOLEAN", "adult": "BOOLEAN", "older_adult": "BOOLEAN"}),
    ("hasResults",): ("calculated_values", "were_results_reported", {"were_results_reported": "BOOLEAN"}),
    ("protocolSection", "designModule", "designInfo", "maskingInfo", "whoMasked"): (
        "designs", "aact_who_masked(subject_masked, caregiver_masked, investigator_masked, outcomes_assessor_masked)",
        {"subject_masked": "BOOLEAN", "caregiver_masked": "BOOLEAN", "investigator_masked": "BOOLEAN",
         "outcomes_assessor_masked": "BOOLEAN"}),
}
# Lists inside list elements that AACT keeps as link rows: (element root, member) → the link table's view
# in sql/aact/links.sql, keyed by the element's AACT id.
LINKED_MEMBERS: dict[tuple[Path_, str], str] = {
    (("protocolSection", "armsInterventionsModule", "interventions"), "armGroupLabels"): "aact_intervention_arm_labels",
    (("protocolSection", "armsInterventionsModule", "armGroups"), "interventionNames"): "aact_arm_intervention_names",
}
LINK_TABLE_COLUMNS = {
    "design_group_interventions": {"design_group_id": "BIGINT", "intervention_id": "BIGINT"},
}


@cache
def field_types() -> dict:
    return json.loads((sql_root() / "data" / "aact" / "v2_field_types.json").read_text(encoding="utf-8"))


@cache
def mapping() -> list[dict]:
    return json.loads((sql_root() / "data" / "aact" / "aact-v2_lib_aact_mapping.json").read_text(encoding="utf-8"))


def field_type(path: Path_) -> str | None:
    """The v2 type of a field ("text", "integer", "Location[]", ...), None when there is no such field. A
    path through a leaf that the field tree does not open (geoPoint's lat/lon) is a number."""
    nodes = field_types()
    node = None
    for depth, name in enumerate(path):
        if nodes is None or name not in nodes:
            if node is not None and node["type"] == "GeoPoint" and depth == len(path) - 1:
                return "number"
            return None
        node = nodes[name]
        nodes = node.get("children")
    return node["type"] if node else None


_NOT_ENUMS = {"GeoPoint", "DateTimeMinutes", "NormalizedTime"}
_DATES = {"PartialDate", "NormalizedDate"}


def value_kind(v2_type: str | None) -> str | None:
    """"date" for the registry's dates, "enum" for its enumerations (their types are capitalised names)."""
    if v2_type in _DATES:
        return "date"
    if v2_type and v2_type[0].isupper() and not v2_type.endswith("[]") and v2_type not in _NOT_ENUMS:
        return "enum"
    return None


def read_type(path: Path_) -> str:
    kind = field_type(path) or "text"
    return _READ_TYPES.get(kind, "VARCHAR")


class MappingError(ValueError):
    """CTTI's mapping names a v2 path the field tree does not have (the two files disagree)."""


@cache
def plan() -> tuple[Entry, ...]:
    """The entries that rebuild v2 records, in mapping order; for a list, the first entry for it wins."""
    entries: list[Entry] = []
    claimed: set[Path_] = set()
    for spec in mapping():
        entry = _entry(spec, parent_root=(), parent_table=None, constants=constant_columns())
        if entry is None or (entry.is_list and entry.root in claimed):
            continue  # a list a second entry derives from the first's (countries from locations)
        claimed.add(entry.root)
        entries.append(entry)
    return tuple(entries)


@cache
def constant_columns() -> frozenset[tuple[str, str]]:
    """(table, column) pairs whose string value differs between the entries feeding one table: constants that
    name the entry (a path would be the same field name for every root it applies to)."""
    values: dict[tuple[str, str], set] = {}

    def walk(spec: dict) -> None:
        for column in spec["columns"]:
            if isinstance(column.get("value"), (str, bool)):
                values.setdefault((spec["table"], column["name"]), set()).add(column["value"])
        for child in spec.get("children") or ():
            walk(child)

    for spec in mapping():
        walk(spec)
    return frozenset(key for key, seen in values.items() if len(seen) > 1)


def _entry(spec: dict, *, parent_root: Path_, parent_table: str | None,
           constants: frozenset[tuple[str, str]]) -> Entry | None:
    root = parent_root + tuple(spec.get("root") or ())
    if root[:1] == ("resultsSection",) or "filter" in spec or "flatten" in spec:
        return None
    root_type = field_type(root) if root else "Study"
    if root_type is None:
        raise MappingError(f"aact mapping: table {spec['table']!r} has root {'.'.join(root)!r}, not a v2 field")
    entry = Entry(table=spec["table"], root=root, is_list=root_type.endswith("[]"))
    if parent_table is not None:
        # AACT names the link after the parent's table (intervention_id), or after its last word
        # (retractions.reference_id for study_references)
        singular = _singular(parent_table)
        entry.parent_keys = tuple(dict.fromkeys((singular + "_id", singular.split("_")[-1] + "_id")))
    seen: set[Path_] = set()
    columns = spec["columns"]
    # A column converted (to a date, say) yields to one holding the same field unconverted (the partial date).
    plain_paths = {_as_path(c["value"]) for c in columns if "convert_to" not in c and _is_path(c["value"])}
    for column in columns:
        value = column.get("value")
        name = column["name"]
        if column.get("convert_to") not in (None, "date", "date_first_of_month"):
            continue  # downcased copies, and values a Ruby proc computes
        if value is None and entry.is_list and "convert_to" not in column:
            entry.scalar_column = name
            continue
        if (spec["table"], name) in constants:
            entry.filters[name] = value
            continue
        if not _is_path(value):
            continue  # {} or a reference to another table: computed
        relative = _as_path(value)
        absolute = root + relative
        if field_type(absolute) is None:
            if isinstance(value, str):
                continue  # a field this root does not have in v2 (orgStudyIdInfo's domain): AACT leaves it empty
            raise MappingError(f"aact mapping: {spec['table']}.{name} maps to {'.'.join(absolute)!r}, "
                               "not a v2 field")
        if absolute[:1] == ("resultsSection",) or relative in seen:
            continue
        if "convert_to" in column and relative in plain_paths:
            continue
        seen.add(relative)
        entry.members.append(Member(relative, name, read_type(absolute), column.get("default"),
                                    value_kind(field_type(absolute))))
    for child_spec in spec.get("children") or ():
        child = _entry(child_spec, parent_root=root, parent_table=spec["table"], constants=constants)
        if child is not None and (child.members or child.scalar_column):
            child.root = child.root[len(root):]  # children sit inside each element of their parent
            entry.children.append(child)
    return entry


def _is_path(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _as_path(value: object) -> Path_:
    return (value,) if isinstance(value, str) else tuple(value)  # type: ignore[arg-type]


def _singular(table: str) -> str:
    if table.endswith("ies"):
        return table[:-3] + "y"
    return table.removesuffix("s")


def tables_read() -> dict[str, dict[str, str]]:
    """Every AACT table the reassembly reads, with the columns it needs and their types (id and nct_id too)."""
    needed: dict[str, dict[str, str]] = {}

    def add(table: str, types: dict[str, str]) -> None:
        columns = needed.setdefault(table, {"nct_id": "VARCHAR"})
        if table != "studies":  # AACT's studies table has no id: nct_id is its key
            columns["id"] = "BIGINT"
        columns.update(types)

    def walk(entry: Entry) -> None:
        add(entry.table, entry.read_types())
        for child in entry.children:
            walk(child)

    for entry in plan():
        walk(entry)
    for table, _expression, types in DERIVED_LEAVES.values():
        add(table, types)
    for table, types in LINK_TABLE_COLUMNS.items():
        add(table, types)
    return needed


@cache
def parent_keys() -> dict[str, tuple[str, ...]]:
    """Child table → the names its parent-id column may have."""
    keys: dict[str, tuple[str, ...]] = {}

    def walk(entry: Entry) -> None:
        for child in entry.children:
            keys[child.table] = child.parent_keys
            walk(child)

    for entry in plan():
        walk(entry)
    return keys


def structure_paths(structure: dict, base: Path_ = ()) -> set[Path_]:
    """Every field of `study_structure()` (the fields ctmirror extracts), lists included."""
    paths: set[Path_] = set()
    for name, kind in structure.items():
        path = base + (name,)
        paths.add(path)
        inner = kind[0] if isinstance(kind, list) else kind
        if isinstance(inner, dict):
            paths |= structure_paths(inner, path)
    return paths


def required_tables(structure: dict) -> set[str]:
    """Tables without which a record would lose something ctmirror reads: a dump missing one is refused."""
    wanted = structure_paths(structure)
    required = {"studies", *LINK_TABLE_COLUMNS, *(t for t, _e, _c in DERIVED_LEAVES.values())}

    def walk(entry: Entry, base: Path_) -> None:
        root = base + entry.root
        paths = [root + m.path for m in entry.members] + ([root] if entry.scalar_column else [])
        if any(p in wanted for p in paths):
            required.add(entry.table)
        for child in entry.children:
            walk(child, root)

    for entry in plan():
        walk(entry, ())
    return required
