"""Turns a received file into candidate study records: the record's JSON bytes, and a locator saying where
it was. Nothing here parses a study: validation does that once, at C speed (ingest/validate.py).

Accepted shapes, detected from the bytes (not the file name):
- NDJSON, one v2 study object per line (a line may also hold a whole page response);
- a v2 page response `{"studies": [...], "nextPageToken": ..., "totalCount": ...}`, also wrapped as
  `{"_source": ..., "response": <page>}` the way recorded pages are kept;
- a single study as `/api/v2/studies/{nctId}` returns it (pretty-printed or not), or a JSON list of studies;
- a `.zip` of such files (the bulk `json.zip` holds one study file each);
- an AACT dump: a `.zip` of `|`-delimited table files (ingest/aact.py puts each study's record back together);
- any of these gzip- or zstd-compressed.

Nothing here raises on bad data: a candidate that cannot be a record carries a `problem` and the text it had,
so the loader can quarantine it.
"""

from __future__ import annotations

import gzip
import importlib
import io
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Optional

import msgspec
import zstandard

from ctmirror.core.raw_store import Receipt, compression_of

_BOM = b"\xef\xbb\xbf"
_PAGE_START = re.compile(rb'^\s*\{\s*"(studies|nextPageToken|totalCount)"\s*:')
_STUDY_WRAPPER = re.compile(rb'^\s*\{\s*"study"\s*:')


class Page(msgspec.Struct):
    """A v2 page response with its studies left as raw JSON slices (split without being parsed)."""

    studies: list[msgspec.Raw]
    nextPageToken: Optional[str] = None  # noqa: N815 - the API's name
    totalCount: Optional[int] = None  # noqa: N815


_PAGE = msgspec.json.Decoder(Page)
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])


@dataclass(slots=True)
class Candidate:
    """One would-be study record."""

    locator: str
    data: bytes | None = None  # the record's JSON, on one line
    problem: str | None = None  # known bad before validation (empty file, not UTF-8, ...)
    raw_text: str | None = None  # what was there, for quarantine, when `data` is None
    nct_id: str | None = None  # the study it was, when known without parsing (an AACT row names it)
    # where `data` lies, byte for byte, in a zip kept as received: (local header offset, compressed size, size,
    # CRC-32, compression method) of the member, so the warehouse reads the record from raw/ rather than keep it twice
    member: tuple[int, int, int, int, int] | None = None

    def text_for_quarantine(self) -> str:
        if self.raw_text is not None:
            return self.raw_text
        return (self.data or b"").decode("utf-8", "backslashreplace")


def open_decompressed(path: Path) -> BinaryIO:
    """The file's content as a buffered stream, whether stored plain, gzip or zstd."""
    raw = open(path, "rb")
    kind = compression_of(raw.read(4))
    raw.seek(0)
    if kind == "gzip":
        return io.BufferedReader(gzip.GzipFile(fileobj=raw), buffer_size=1 << 20)  # type: ignore[arg-type]
    if kind == "zstd":
        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader, buffer_size=1 << 20)  # type: ignore[arg-type]
    return raw


# How the raw objects of a source are read back into records, by the source their receipt records (rebuild and a
# resumed run replay raw/ with these). Every source not listed stores v2 study JSON, which iter_candidates reads in
# each of its forms; a new source is a reader module and one line here ("module:function", imported on use).
RAW_READERS = {"aact": "ingest.aact:dump_candidates"}


def candidates_of(receipt: Receipt, path: Path) -> Iterator[Candidate]:
    """The candidate records of a stored raw object, read as its source writes them."""
    reader = RAW_READERS.get(receipt.source)
    if reader is None:
        return iter_candidates(path)
    module, _, function = reader.partition(":")
    return getattr(importlib.import_module(module), function)(path)


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


def parse_page(body: bytes) -> tuple[dict, list[Candidate]]:
    """A v2 page response split once: its other keys and its studies as candidates (raw slices).
    ValueError when it is not a whole, well-formed page (a cut-short body, say)."""
    try:
        page = _PAGE.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise ValueError(f"not a whole v2 page response: {exc}") from exc
    meta = {"nextPageToken": page.nextPageToken, "totalCount": page.totalCount, "studies": None}
    return meta, [_raw_candidate(bytes(raw), f"studies[{i}]") for i, raw in enumerate(page.studies)]


def _zip_candidates(path: Path) -> Iterator[Candidate]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        yield Candidate("file", problem=f"not a readable zip archive: {exc}", raw_text="")
        return
    with archive:
        members = sorted((m for m in archive.infolist() if not m.is_dir()), key=lambda m: m.filename)
        if any(Path(m.filename).name == "studies.txt" for m in members):  # an AACT dump, not JSON files
            from ingest.aact import dump_candidates

            yield from dump_candidates(path)
            return
        if not members:
            yield Candidate("file", problem="empty zip archive: no records", raw_text="")
        for member in members:
            try:
                data = archive.read(member)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                yield Candidate(f"member {member.filename}", problem=f"unreadable zip member: {exc}", raw_text="")
                continue
            # A bulk member is one study document: no line-by-line probing, one candidate.
            candidates = list(_document_candidates(data, f"member {member.filename}"))
            if (len(candidates) == 1 and candidates[0].data == data
                    and member.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)):
                candidates[0].member = (member.header_offset, member.compress_size, member.file_size, member.CRC,
                                        member.compress_type)
            yield from candidates


def _stream_candidates(stream: BinaryIO) -> Iterator[Candidate]:
    head = stream.peek(256)[:256] if hasattr(stream, "peek") else b""
    if _PAGE_START.match(head.removeprefix(_BOM)):
        yield from _document_candidates(stream.read(), "document")
        return
    first = stream.readline()
    while first and not first.strip():
        first = stream.readline()
    if not first:
        yield Candidate("document", problem="empty file: no records", raw_text="")
        return
    if _is_json_value(first):
        # One complete JSON value on the first line: NDJSON (a one-line document is the same case).
        yield from _ndjson_candidates(first, stream)
        return
    rest = stream.read()
    if _looks_like_ndjson(rest):
        yield from _ndjson_candidates(first, io.BytesIO(rest))
        return
    yield from _document_candidates(first + rest, "document")


def _document_candidates(data: bytes, locator: str) -> Iterator[Candidate]:
    """One JSON document: a study, a list of studies, a page, or a recorded page."""
    data = data.removeprefix(_BOM).strip()
    if not data:
        yield Candidate(locator, problem="empty file: no records", raw_text="")
        return
    prefix = "" if locator == "document" else f"{locator} "
    if _PAGE_START.match(data):
        try:
            _meta, candidates = parse_page(data)
        except ValueError:
            problem = _page_problem(data)
            if problem:
                yield Candidate(locator, problem=problem, raw_text=data.decode("utf-8", "backslashreplace"))
                return
            # otherwise not a page after all: validating the whole document says what is wrong
        else:
            for candidate in candidates:
                candidate.locator = prefix + candidate.locator
                yield candidate
            return
    if data.startswith(b"["):
        try:
            items = _RAW_LIST.decode(data)
        except (msgspec.DecodeError, RecursionError):  # too deep: validation quarantines it as one record
            pass
        else:
            for index, raw in enumerate(items):
                yield _raw_candidate(bytes(raw), f"{prefix}[{index}]")
            return
    if b'"_source"' in data[:200] and b'"response"' in data:
        yield from _recorded_page(data, locator)
        return
    if _STUDY_WRAPPER.match(data):  # a past version, as the history endpoint gives it
        try:
            study = json.loads(data).get("study")
        except (ValueError, AttributeError, RecursionError):
            study = None
        if isinstance(study, dict):
            yield _raw_candidate(json.dumps(study, ensure_ascii=False).encode(), locator)
            return
    yield _raw_candidate(data, locator)


def _page_problem(data: bytes) -> str | None:
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if isinstance(document, dict) and "studies" in document and not isinstance(document["studies"], list):
        return f"page response: 'studies' is {type(document['studies']).__name__}, expected a list"
    return None


def _recorded_page(data: bytes, locator: str) -> Iterator[Candidate]:
    """`{"_source": ..., "response": <page or study>}`, the way recorded API answers are kept."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        yield _raw_candidate(data, locator)
        return
    response = document.get("response") if isinstance(document, dict) else None
    if response is None:
        yield _raw_candidate(data, locator)
        return
    yield from _document_candidates(json.dumps(response, ensure_ascii=False).encode(), locator)


def _raw_candidate(data: bytes, locator: str) -> Candidate:
    # Pretty-printed JSON has raw newlines only between tokens (inside strings they are escaped).
    if b"\n" in data or b"\r" in data:
        data = data.replace(b"\r", b" ").replace(b"\n", b" ")
    return Candidate(locator, data=data)


def _looks_like_ndjson(rest: bytes) -> bool:
    return any(_is_json_value(line) for line in rest.splitlines()[:20])


def _ndjson_candidates(first: bytes, stream: BinaryIO) -> Iterator[Candidate]:
    line_no = 1
    yield from _line_candidates(first, line_no)
    for line in stream:
        line_no += 1
        if line.strip():
            yield from _line_candidates(line, line_no)


def _line_candidates(line: bytes, line_no: int) -> Iterator[Candidate]:
    yield from _document_candidates(line, f"line {line_no}")


def _is_json_value(line: bytes) -> bool:
    try:
        msgspec.json.decode(line.removeprefix(_BOM))
        return True
    except RecursionError:  # a value, nested too deep to be a record: validation quarantines it
        return True
    except msgspec.DecodeError:
        return False
