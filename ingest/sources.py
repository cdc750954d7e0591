"""Turns a received file into candidate study records, each with a locator saying where it was.

Accepted shapes, detected from the bytes (not the file name):
- NDJSON, one v2 study object per line (a line may also hold a whole page response);
- a v2 page response `{"studies": [...], "nextPageToken": ..., "totalCount": ...}`, also wrapped as
  `{"_source": ..., "response": <page>}` the way recorded pages are kept;
- a single study as `/api/v2/studies/{nctId}` returns it, or a JSON list of studies;
- a `.zip` of such files (the bulk `json.zip` holds one study file each);
- any of these gzip- or zstd-compressed.

Nothing here raises on bad data: a candidate that cannot be a record carries a `problem` and the text it
had, so the loader can quarantine it.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard

_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"


@dataclass(slots=True)
class Candidate:
    """One would-be study record."""

    locator: str
    study: dict | None = None
    text: str | None = None  # JSON text of the study, one line
    problem: str | None = None
    raw_text: str | None = None  # what was there, for quarantine


def compression_of(head: bytes) -> str | None:
    if head.startswith(_GZIP_MAGIC):
        return "gzip"
    if head.startswith(_ZSTD_MAGIC):
        return "zstd"
    if head.startswith((_ZIP_MAGIC, _EMPTY_ZIP_MAGIC)):
        return "zip"
    return None


def open_decompressed(path: Path) -> BinaryIO:
    """The file's content as a stream, whether stored plain, gzip or zstd."""
    raw = open(path, "rb")
    kind = compression_of(raw.read(4))
    raw.seek(0)
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if kind == "zstd":
        # The zstd reader has no readline; buffering gives it one.
        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader, buffer_size=1 << 20)  # type: ignore[arg-type]
    return raw


def iter_candidates(path: Path) -> Iterator[Candidate]:
    """Every candidate record in a stored or received file, in a stable order."""
    with open(path, "rb") as probe:
        kind = compression_of(probe.read(4))
    if kind == "zip":
        yield from _zip_candidates(path)
        return
    try:
        with open_decompressed(path) as stream:
            yield from _stream_candidates(stream)
    except (OSError, EOFError, zstandard.ZstdError) as exc:
        yield Candidate("file", problem=f"cannot decompress: {type(exc).__name__}: {exc}", raw_text="")


def _zip_candidates(path: Path) -> Iterator[Candidate]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        yield Candidate("file", problem=f"not a readable zip archive: {exc}", raw_text="")
        return
    with archive:
        members = sorted(m for m in archive.namelist() if not m.endswith("/"))
        if not members:
            yield Candidate("file", problem="empty zip archive: no records", raw_text="")
        for member in members:
            try:
                data = archive.read(member)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                yield Candidate(f"member {member}", problem=f"unreadable zip member: {exc}", raw_text="")
                continue
            for candidate in _stream_candidates(io.BytesIO(data)):
                candidate.locator = f"member {member}" + ("" if candidate.locator == "document" else f" {candidate.locator}")
                yield candidate


def _stream_candidates(stream: BinaryIO) -> Iterator[Candidate]:
    first = stream.readline()
    while first and not first.strip():
        first = stream.readline()
    if not first:
        yield Candidate("document", problem="empty file: no records", raw_text="")
        return
    first_value = _try_json(first)
    if isinstance(first_value, (dict, list)):
        # One complete JSON value on the first line: NDJSON (a one-line single document is the same case).
        yield from _ndjson_candidates(first, first_value, stream)
        return
    rest = stream.read()
    whole = first + rest
    try:
        text = whole.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if _looks_like_ndjson(rest):
            yield from _ndjson_candidates(first, None, io.BytesIO(rest))
        else:
            yield Candidate("document", problem=f"not UTF-8: invalid byte at offset {exc.start}",
                            raw_text=whole.decode("utf-8", "backslashreplace"))
        return
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        if _looks_like_ndjson(rest):
            yield from _ndjson_candidates(first, None, io.BytesIO(rest))
        else:
            yield Candidate("document", problem=f"not valid JSON: {exc}", raw_text=text)
        return
    # Pretty-printed JSON has newlines only between tokens (inside strings they are escaped).
    one_line = " ".join(text.split("\n")).replace("\r", " ")
    yield from _document_candidates(document, "document", one_line)


def _looks_like_ndjson(rest: bytes) -> bool:
    for line in rest.splitlines()[:20]:
        if isinstance(_try_json(line), dict):
            return True
    return False


def _ndjson_candidates(first: bytes, first_value: object, stream: BinaryIO) -> Iterator[Candidate]:
    line_no = 1
    yield from _line_candidates(first, line_no, first_value)
    for line in stream:
        line_no += 1
        if line.strip():
            yield from _line_candidates(line, line_no, None)


def _line_candidates(line: bytes, line_no: int, parsed: object) -> Iterator[Candidate]:
    locator = f"line {line_no}"
    try:
        text = line.decode("utf-8-sig").strip()
    except UnicodeDecodeError as exc:
        yield Candidate(locator, problem=f"not UTF-8: invalid byte at offset {exc.start} of the line",
                        raw_text=line.decode("utf-8", "backslashreplace").strip())
        return
    if parsed is None:
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            reason = "truncated JSON" if "Unterminated" in exc.msg or "Expecting" in exc.msg else "not valid JSON"
            yield Candidate(locator, problem=f"{reason}: {exc}", raw_text=text)
            return
    yield from _document_candidates(parsed, locator, text)


def _document_candidates(document: object, locator: str, text: str) -> Iterator[Candidate]:
    """A parsed JSON document: a study, a list of studies, a page, or a recorded page."""
    if isinstance(document, dict) and "response" in document and "_source" in document:
        document = document["response"]
        text = None  # type: ignore[assignment]
    if isinstance(document, dict) and "studies" in document and "protocolSection" not in document:
        studies = document["studies"]
        if not isinstance(studies, list):
            yield Candidate(locator, problem=f"page response: 'studies' is {type(studies).__name__}, expected a list",
                            raw_text=json.dumps(document))
            return
        prefix = "" if locator == "document" else f"{locator} "
        for index, study in enumerate(studies):
            yield _study_candidate(study, f"{prefix}studies[{index}]", None)
        return
    if isinstance(document, list):
        prefix = "" if locator == "document" else f"{locator} "
        for index, study in enumerate(document):
            yield _study_candidate(study, f"{prefix}[{index}]", None)
        return
    yield _study_candidate(document, locator, text)


def _study_candidate(study: object, locator: str, text: str | None) -> Candidate:
    if text is None:
        text = json.dumps(study)
    return Candidate(locator, study=study if isinstance(study, dict) else None, text=text,
                     raw_text=text, problem=None if isinstance(study, dict) else
                     f"expected a study object, got {type(study).__name__}")


def _try_json(line: bytes) -> object:
    try:
        return json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
