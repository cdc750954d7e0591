"""GET /api/v2/studies/{nctId}: one study, by NCT ID or alias, as stored or as of a cutoff; on the current state
looked up without DuckDB (CurrentStudies)."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from array import array
from bisect import bisect_left
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ctmirror.core.record_files import record_files_of
from ctmirror.core.sqlfiles import read_sql
from ctmirror.server.csv_columns import Column, columns_for, csv_text
from ctmirror.server.records import UnknownField, decode_record, field_paths, legacy_markup
from ctmirror.server.v2.errors import V2Error
from ctmirror.server.v2.request import NCT_ID, listed, wants_legacy_markup
from ctmirror.server.v2.search import shape
from ctmirror.server.v2.stored import PAGE_COLUMNS, stored_records

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror


class CurrentStudies:
    """Where each study's record is in the current state, for the single-study lookups that are most of a
    server's requests: NCT numbers in order beside the file and row of the version shown, and the aliases, read
    once per state; a lookup is a binary search (microseconds, where study_by_id.sql costs milliseconds)."""

    def __init__(self, mirror: Mirror) -> None:
        table = mirror.con.execute(read_sql("serve/current_records.sql")).to_arrow_table()
        files = table.column("record_file").combine_chunks().dictionary_encode()  # a few hundred files
        self.files = files.dictionary.to_pylist()
        self.file_nos = _int_array(files.indices)
        self.numbers, self.rows = (_int_array(table.column(name)) for name in ("nct_number", "record_row"))
        self.aliases = dict(mirror.con.execute(read_sql("serve/queries.sql", "aliases")).fetchall())
        self.record_files = record_files_of(mirror.resolved_root)

    def find(self, nct_id: str) -> tuple[str, str, int] | None:
        """(canonical NCT ID, record file, record row) of an NCT ID or alias in canonical form; None: no study."""
        nct_id = self.aliases.get(nct_id, nct_id)
        number = int(nct_id[3:])
        at = bisect_left(self.numbers, number)
        if at == len(self.numbers) or self.numbers[at] != number:
            return None
        return nct_id, self.files[self.file_nos[at]], self.rows[at]


def _int_array(column: Any) -> array:
    """An Arrow column of 32-bit integers as a Python array, copied as bytes: a list of half a million numbers took
    40 ms to make, and bisect on a numpy array makes a numpy scalar of every element it reads."""
    found = array("i")
    found.frombytes(np.ascontiguousarray(column.to_numpy(), dtype=np.int32).tobytes())
    return found


_CURRENT: dict[tuple[Path, str], CurrentStudies] = {}
_CURRENT_LOCK = threading.Lock()


def current_studies(mirror: Mirror) -> CurrentStudies:
    """The CurrentStudies of the state a Mirror reads, shared by a process's Mirrors of it (the last two states
    asked for are kept: a server moving to a new state still finishes requests on the old one)."""
    key = (mirror.resolved_root, mirror.state_id)
    with _CURRENT_LOCK:
        found = _CURRENT.get(key)
        if found is None:
            found = _CURRENT[key] = CurrentStudies(mirror)
            while len(_CURRENT) > 2:
                del _CURRENT[next(iter(_CURRENT))]
        return found


def canonical_nct_id(nct_id: str) -> str:
    found = NCT_ID.match(nct_id)
    if not found:
        raise V2Error(f"{nct_id!r} is not an NCT ID (NCT followed by up to 8 digits)")
    return f"NCT{int(found.group(1)):08d}"


def _study_params(params: dict[str, str]) -> tuple[list[tuple[str, ...]] | None, bool]:
    """(the fields a single-study request projects to (None: the whole record), whether it asks for legacy
    markup), or a V2Error."""
    unknown = sorted(set(params) - {"fields", "format", "markupFormat"})
    if unknown:
        raise V2Error(f"unknown parameter {unknown[0]!r}")
    if params.get("format", "json") != "json":
        raise V2Error("format: this is the JSON record's lookup (see study_format)")
    legacy = wants_legacy_markup(params)
    if not params.get("fields"):
        return None, legacy
    try:
        return field_paths(listed(params["fields"]) or []), legacy
    except UnknownField as exc:
        raise V2Error(f"fields: {str(exc)!r} is not a field of the study record") from None


# A single study's formats (the spec's fetchStudy): json; csv, the search's columns for one study, header first;
# json.zip, the JSON record (markup as markdown) as NCT….json in a zip archive. fhir.json and ris are not served.
STUDY_FORMATS = ("json", "csv", "json.zip")


def study_format(params: dict[str, str]) -> tuple[str, dict[str, str], list[Column] | None]:
    """(format, the parameters of the JSON record it is made from, the CSV columns (csv only)) of a single-study
    request, or a V2Error naming what is not served."""
    fmt = params.get("format", "json")
    if fmt not in STUDY_FORMATS:
        raise V2Error(f"format: a single study is served as {', '.join(STUDY_FORMATS)}, not {fmt!r} "
                      "(fhir.json and ris are not served by ctmirror)")
    json_params = {k: v for k, v in params.items() if k != "format"}
    if fmt == "json":
        return fmt, json_params, None
    if fmt == "json.zip":  # markup as markdown, whatever markupFormat says
        return fmt, {k: v for k, v in json_params.items() if k != "markupFormat"}, None
    try:
        columns = columns_for(listed(params.get("fields")))
    except UnknownField as exc:
        raise V2Error(f"fields: {str(exc)!r} is not a CSV column (see /api/v2/studies/metadata)") from None
    return fmt, {}, columns


def study_in_format(fmt: str, nct_id: str, body: bytes, columns: list[Column] | None) -> tuple[bytes, str, str]:
    """(body, media type, file name or '') of a single study's JSON record (`body`) in a format of study_format."""
    if fmt == "csv":
        text = csv_text([json.loads(body)], columns or [], header=True)
        return text.encode("utf-8"), "text/csv", ""
    if fmt == "json.zip":
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
            zipped.writestr(f"{nct_id}.json", body)
        return archive.getvalue(), "application/zip", f"{nct_id}.json.zip"
    return body, "application/json", ""


def study_text(mirror: Mirror, nct_id: str, params: dict[str, str], as_of: date | None,
               shown_as: dict[str, Any] | None = None) -> tuple[str, bytes]:
    """(canonical NCT ID, JSON body) of GET /api/v2/studies/{nctId}: the current state's whole record is served as
    stored, found without a query; a record at a cutoff or projected is shaped from it. shown_as: see study()."""
    found = _current_text(mirror, nct_id, params, as_of)
    if found is not None:
        return found
    canonical, record = study_by_query(mirror, nct_id, params, as_of, shown_as)
    return canonical, json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def study(mirror: Mirror, nct_id: str, params: dict[str, str], as_of: date | None,
          shown_as: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """(canonical NCT ID, record) of GET /api/v2/studies/{nctId}; V2Error 404 when there is none at the cutoff.
    shown_as: given as_of_exact and withheld (see study_by_query)."""
    found = _current_text(mirror, nct_id, params, as_of)
    if found is not None:
        if shown_as is not None:
            shown_as.update(as_of_exact=True, withheld=[])
        return found[0], decode_record(found[1])
    return study_by_query(mirror, nct_id, params, as_of, shown_as)


def _current_text(mirror: Mirror, nct_id: str, params: dict[str, str], as_of: date | None) -> tuple[str, bytes] | None:
    """The whole stored record of a study on the current state, by CurrentStudies and the record files; None where
    that does not answer (a cutoff, `fields`, markupFormat=legacy, a segment without a record file)."""
    paths, legacy = _study_params(params)
    if as_of is not None or paths or legacy:
        return None
    return _stored_text(current_studies(mirror), nct_id)


def _stored_text(studies: CurrentStudies, nct_id: str) -> tuple[str, bytes] | None:
    """(canonical NCT ID, stored record) of a study on the state `studies` looks up, from its record file; None
    where its segment has none; a V2Error 404 where there is no such study."""
    wanted = canonical_nct_id(nct_id)
    found = studies.find(wanted)
    if found is None:
        raise V2Error(f"Study not found: {wanted}", status=404)
    text = studies.record_files.read(found[1], found[2])
    return None if text is None else (found[0], text)


def loaded_current_text(root: Path, state_id: str, nct_id: str, params: dict[str, str]) -> tuple[str, bytes] | None:
    """_current_text without a Mirror, where this process has the state's CurrentStudies already: a server's
    single-study request then waits for no reader (a reader may be busy with a search for tens of milliseconds).
    None where that does not answer."""
    paths, legacy = _study_params(params)
    if paths or legacy:
        return None
    with _CURRENT_LOCK:
        studies = _CURRENT.get((Path(root).resolve(), state_id))
    return None if studies is None else _stored_text(studies, nct_id)


def study_by_query(mirror: Mirror, nct_id: str, params: dict[str, str], as_of: date | None,
                   shown_as: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """study() through sql/serve/study_by_id.sql: the row a cutoff shows, its record shaped as of it; `shown_as`
    is given whether it is exact and what was withheld (`as_of_exact`, `withheld`) and, for a reconstruction, the
    last-update date of the version it was made from (`reconstructed_from`)."""
    paths, legacy = _study_params(params)
    wanted = canonical_nct_id(nct_id)
    rows = mirror.con.execute(read_sql("serve/study_by_id.sql"), {"nct_id": wanted, "as_of": as_of}).fetchall()
    if not rows:
        raise V2Error(f"Study not found: {wanted}" + (f" (as of {as_of})" if as_of else ""), status=404)
    shown = dict(zip((*PAGE_COLUMNS, "reconstructed_from"), rows[0]))
    withheld: list[list[str]] = []
    record = stored_records(mirror, [shown], as_of, withheld)[0]
    if shown_as is not None:
        exact = bool(shown["as_of_exact"]) if as_of else True
        shown_as.update(as_of_exact=exact, withheld=withheld[0])
        if as_of and shown["reconstructed_from"] is not None:
            shown_as["reconstructed_from"] = shown["reconstructed_from"].isoformat()
    return shown["nct_id"], shape(legacy_markup(record) if legacy else record, paths)


