"""Writes v2 study records as an AACT flat-file dump, the way CTTI's loader would: CTTI's mapping
(`sql/data/aact/aact-v2_lib_aact_mapping.json`) run forwards, table columns in the order of AACT's DDL
(`tests/data/aact/aact_columns.json`, from CTTI's `aact_db_ctgov_v2.sql`), files formatted as PostgreSQL's
`COPY ... CSV DELIMITER '|' HEADER` writes them.

The test sample `tests/data/aact/20261101_ctgov_sample.zip` is this module's output for real records;
`python tests/aact_writer.py OUT.zip RECORDS.ndjson[.zst] [--ids FILE]` makes it again.
Results tables are not written (ctmirror reads only `hasResults`, from calculated_values).
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Iterable
from datetime import date
from pathlib import Path

from ingest.aact_plan import constant_columns, mapping

COLUMNS: dict[str, list[list[str]]] = json.loads(
    (Path(__file__).parent / "data" / "aact" / "aact_columns.json").read_text(encoding="utf-8"))
_STATIC_COLUMNS = {  # computed by AACT itself rather than mapped: the ones this writer fills
    "calculated_values": ["were_results_reported", "number_of_facilities", "has_single_facility"],
    "design_group_interventions": ["design_group_id", "intervention_id"],
}
_MASKED = {"subject_masked": "PARTICIPANT", "caregiver_masked": "CARE_PROVIDER",
           "investigator_masked": "INVESTIGATOR", "outcomes_assessor_masked": "OUTCOMES_ASSESSOR"}


def _get(node: object, path: Iterable[str]) -> object:
    for name in path:
        if not isinstance(node, dict):
            return None
        node = node.get(name)
    return node


def _partial_to_date(value: object) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    parts = value.split("-")
    year, month, day = (int(p) for p in (parts + ["1", "1"])[:3])
    return date(year, month, day).isoformat()


class Writer:
    def __init__(self) -> None:
        self.rows: dict[str, list[dict]] = {}
        self.next_id: dict[str, int] = {}

    def add(self, record: dict) -> None:
        nct_id = record["protocolSection"]["identificationModule"]["nctId"]
        ids: dict[tuple[str, str], int] = {}  # (table, key) → id, for the link tables
        for spec in mapping():
            if (spec.get("root") or [None])[0] == "resultsSection" or spec["table"].startswith("result"):
                continue
            self._entry(spec, record, nct_id, ids, parent=None)
        self._links(record, nct_id, ids)
        self._calculated(record, nct_id)

    def _row(self, table: str, nct_id: str, values: dict) -> dict:
        row = {"nct_id": nct_id, **values}
        if any(c == "id" for c, _t in COLUMNS.get(table, [])):
            self.next_id[table] = self.next_id.get(table, 0) + 1
            row["id"] = self.next_id[table]
        self.rows.setdefault(table, []).append(row)
        return row

    def _entry(self, spec: dict, node: object, nct_id: str, ids: dict, parent: tuple[str, int] | None) -> None:
        root = spec.get("root")
        target = _get(node, root) if root else node
        if target is None or "filter" in spec or "flatten" in spec:
            return
        elements = target if isinstance(target, list) else [target]
        seen = set()
        for element in elements:
            values = {}
            for column in spec["columns"]:
                values[column["name"]] = self._value(spec["table"], column, element)
            if spec.get("unique"):
                key = json.dumps(values, sort_keys=True, default=str)
                if key in seen or all(v is None for k, v in values.items() if k != "removed"):
                    continue
                seen.add(key)
            if parent is not None:
                values[parent[0]] = parent[1]
            row = self._row(spec["table"], nct_id, values)
            if spec["table"] == "design_groups":
                ids[("design_groups", element.get("label"))] = row["id"]
            if spec["table"] == "interventions":
                ids[("interventions", len([k for k in ids if k[0] == "interventions"]))] = row["id"]
            for child in spec.get("children") or ():
                if child["table"] == "design_group_interventions":
                    continue  # written by _links, which needs every design group's id first
                singular = spec["table"][:-3] + "y" if spec["table"].endswith("ies") else spec["table"][:-1]
                names = {c for c, _t in COLUMNS.get(child["table"], [])}
                key = next((k for k in (singular + "_id", singular.split("_")[-1] + "_id") if k in names),
                           singular + "_id")
                self._entry(child, element, nct_id, ids, parent=(key, row["id"]))

    def _value(self, table: str, column: dict, element: object) -> object:
        value, convert = column.get("value"), column.get("convert_to")
        name = column["name"]
        if value == {} or convert == {}:
            return self._computed(name, element)
        if isinstance(value, bool):
            return value
        if value is None:
            found = element
        elif isinstance(value, str) and not (isinstance(element, dict) and value in element):
            found = value if (table, name) in constant_columns() else None
        else:
            found = _get(element, [value] if isinstance(value, str) else value)
        if found is None and "default" in column:
            return column["default"]
        if convert == "downcase" and isinstance(found, str):
            return found.lower()
        if convert in ("date", "date_first_of_month"):
            return _partial_to_date(found)
        return found

    def _computed(self, name: str, element: object) -> object:
        if not isinstance(element, dict):
            return None
        if name == "phase":
            phases = _get(element, ["protocolSection", "designModule", "phases"])
            return "/".join(phases) if phases else None
        if name in ("number_of_arms", "number_of_groups"):
            arms = _get(element, ["protocolSection", "armsInterventionsModule", "armGroups"]) or []
            study_type = _get(element, ["protocolSection", "designModule", "studyType"])
            wanted = "INTERVENTIONAL" if name == "number_of_arms" else "OBSERVATIONAL"
            return len(arms) if study_type == wanted and arms else None
        ages = element.get("stdAges") if "eligibilityCriteria" in element or "stdAges" in element else None
        if name in ("adult", "child", "older_adult") and ages is not None:
            return {"adult": "ADULT", "child": "CHILD", "older_adult": "OLDER_ADULT"}[name] in ages
        if name in _MASKED:
            who = _get(element, ["maskingInfo", "whoMasked"])
            return None if who is None else _MASKED[name] in who
        return None

    def _links(self, record: dict, nct_id: str, ids: dict) -> None:
        interventions = _get(record, ["protocolSection", "armsInterventionsModule", "interventions"]) or []
        for index, intervention in enumerate(interventions):
            for label in intervention.get("armGroupLabels") or []:
                group = ids.get(("design_groups", label))
                if group is not None:
                    self._row("design_group_interventions", nct_id,
                              {"design_group_id": group, "intervention_id": ids[("interventions", index)]})

    def _calculated(self, record: dict, nct_id: str) -> None:
        locations = _get(record, ["protocolSection", "contactsLocationsModule", "locations"]) or []
        self._row("calculated_values", nct_id, {
            "were_results_reported": bool(record.get("hasResults")),
            "number_of_facilities": len(locations) or None,
            "has_single_facility": len(locations) == 1,
        })

    def files(self) -> dict[str, bytes]:
        out = {}
        for table in sorted(set(COLUMNS) | set(self.rows)):  # a dump has every table's file, if only its header
            rows = self.rows.get(table, [])
            columns = [c for c, _t in COLUMNS.get(table, [])]
            for row in rows:  # mapped columns CTTI's DDL predates (facilities' latitude, say) go last
                columns.extend(c for c in row if c not in columns)
            text = io.StringIO()
            text.write("|".join(columns) + "\n")
            for row in rows:
                text.write("|".join(_field(row.get(c)) for c in columns) + "\n")
            out[f"{table}.txt"] = text.getvalue().encode("utf-8")
        return out


def _field(value: object) -> str:
    """One field as PostgreSQL's CSV COPY writes it: NULL unquoted and empty, booleans t/f, a text that is
    empty or holds the delimiter, a quote or a line break quoted with quotes doubled."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (list, dict)):
        value = json.dumps(value)
    text = str(value)
    if text == "" or any(ch in text for ch in '|"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_zip(records: Iterable[dict], out: Path) -> None:
    writer = Writer()
    for record in records:
        writer.add(record)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in writer.files().items():
            info = zipfile.ZipInfo(name, date_time=(2026, 11, 1, 0, 0, 0))  # fixed: the same records, the same bytes
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)


def read_records(path: Path) -> list[dict]:
    from ingest.sources import open_decompressed

    with open_decompressed(path) as stream:
        return [json.loads(line) for line in stream if line.strip()]


if __name__ == "__main__":
    out, source = Path(sys.argv[1]), Path(sys.argv[2])
    records = read_records(source)
    if "--ids" in sys.argv:
        wanted = set(Path(sys.argv[sys.argv.index("--ids") + 1]).read_text().split())
        records = [r for r in records if r["protocolSection"]["identificationModule"]["nctId"] in wanted]
    write_zip(records, out)
