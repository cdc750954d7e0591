"""Each segment's study records, one zstd frame each, for reading one record without decompressing its neighbours.

A segment's study_versions.parquet holds its records (study_versions.raw) until the first publish that reads it,
which writes them here and then drops them from the Parquet file, where a row group of 2,048 records is one
compressed block (reading one record cost tens of milliseconds). Publish writes (ingest/publish.py):

    segments/gNNNN/records.dict         a zstd dictionary trained once per generation on its first records (frames
                                        written before it existed name none)
    segments/gNNNN/NNNNNN/records.zst   row i of study_versions.parquet as one frame, compressed with it
    segments/gNNNN/NNNNNN/records.offsets
                                        n + 1 little-endian uint64: where each frame starts, and the end

so a record is one pread and one small decompression (about 10 microseconds). With the dictionary, a frame per
record compresses as well as Parquet's row groups. The offsets file is written last, by rename: a segment without
it has no record file yet (publish writes it; a snapshot's records are in its own, tables/records.zst).

A record received as a whole member of a zip (the bulk json.zip, kept as received in raw/) is not stored again:
its frame is a zstd skippable frame (RawMember) naming the zip in raw/ and where the member lies in it, and is
read from raw/ itself (two preads, the member's local header then its data, and one inflate), so a bootstrap's
records are on disk once.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import zstandard

from ctmirror.core.errors import WarehouseError

RECORDS = "records.zst"
OFFSETS = "records.offsets"
DICTIONARY = "records.dict"
DICTIONARY_BYTES = 112 << 10
DICTIONARY_SAMPLES = 500
LEVEL = 3
_OFFSET = struct.Struct("<Q")


REBUILD_HINT = "run `ctmirror rebuild`: it renormalises every record from raw/"
RAW_LOST_HINT = ("restore raw/ from a backup, or receive the bulk file again (`ctmirror sync --from-bulk`) and run "
                 "`ctmirror rebuild`")


def lost_record_file(where: str) -> WarehouseError:
    """The error of a segment (`where`) whose record file is gone after its records left study_versions."""
    return WarehouseError(f"{where} has lost its record file ({RECORDS})", hint=REBUILD_HINT)


# A zstd skippable frame (magic 0x184D2A50..5F, then its length): records.zst stays a stream of zstd frames.
_SKIPPABLE = struct.Struct("<II")
RAW_MEMBER_MAGIC = 0x184D2A5E
_MEMBER = struct.Struct("<QQQIH")  # local header offset, compressed size, size, CRC-32, compression method
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, then the name's and the extra field's lengths
ZIP_STORED, ZIP_DEFLATED = 0, 8


@dataclass(frozen=True, slots=True)
class RawMember:
    """A record that is, byte for byte, a member of a zip kept in raw/: `blob` (relative to the warehouse root)
    and the member as the zip's central directory gives it."""

    blob: str
    header_offset: int
    compressed_size: int
    size: int
    crc: int
    method: int

    def frame(self) -> bytes:
        data = _MEMBER.pack(self.header_offset, self.compressed_size, self.size, self.crc, self.method)
        data += self.blob.encode("utf-8")
        return _SKIPPABLE.pack(RAW_MEMBER_MAGIC, len(data)) + data

    @classmethod
    def of_frame(cls, frame: bytes) -> RawMember | None:
        if len(frame) < _SKIPPABLE.size or _SKIPPABLE.unpack_from(frame)[0] != RAW_MEMBER_MAGIC:
            return None
        fields = _MEMBER.unpack_from(frame, _SKIPPABLE.size)
        return cls(frame[_SKIPPABLE.size + _MEMBER.size:].decode("utf-8"), *fields)


def train_dictionary(samples: list[bytes]) -> bytes:
    """A dictionary for a generation's records, from a few hundred of them; b"" when too few to train on."""
    if len(samples) < 50:
        return b""
    try:
        return zstandard.train_dictionary(DICTIONARY_BYTES, samples, level=LEVEL).as_bytes()
    except zstandard.ZstdError:  # samples too small or too alike to learn from: frames without a dictionary
        return b""


def write_record_file(folder: Path, records: Iterable[bytes | memoryview | RawMember], dictionary: bytes) -> int:
    """records.zst and records.offsets in `folder`, from the records in file order (a RawMember: a reference to
    raw/ in its place); the number written. Both are written under temporary names and made durable, the offsets
    renamed into place last."""
    trained = zstandard.ZstdCompressionDict(dictionary) if dictionary else None
    compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=trained, write_content_size=True)
    offsets = [0]
    records_tmp, offsets_tmp = folder / f".tmp-{RECORDS}", folder / f".tmp-{OFFSETS}"
    with open(records_tmp, "wb") as out:
        for record in records:
            frame = record.frame() if isinstance(record, RawMember) else compressor.compress(record)
            out.write(frame)
            offsets.append(offsets[-1] + len(frame))
        out.flush()
        os.fsync(out.fileno())
    with open(offsets_tmp, "wb") as out:
        out.write(struct.pack(f"<{len(offsets)}Q", *offsets))
        out.flush()
        os.fsync(out.fileno())
    os.replace(records_tmp, folder / RECORDS)
    os.replace(offsets_tmp, folder / OFFSETS)
    return len(offsets) - 1


def has_record_file(folder: Path) -> bool:
    return (folder / OFFSETS).exists()


class _OpenRecordFile:
    def __init__(self, folder: Path, raw_members: _RawMembers) -> None:
        self.raw_members = raw_members
        with open(folder / OFFSETS, "rb") as f:
            self.offsets = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(f.fileno()).st_size else b""
        self.count = len(self.offsets) // 8 - 1
        self.fd = os.open(folder / RECORDS, os.O_RDONLY)
        dictionary = folder.parent / DICTIONARY
        self.dict_data = zstandard.ZstdCompressionDict(dictionary.read_bytes()) if dictionary.exists() else None

    def read(self, row: int, decompressors: threading.local) -> bytes:
        if not 0 <= row < self.count:
            raise IndexError(f"record {row} of a record file of {self.count}")
        start, end = _OFFSET.unpack_from(self.offsets, row * 8)[0], _OFFSET.unpack_from(self.offsets, row * 8 + 8)[0]
        frame = os.pread(self.fd, end - start, start)
        member = RawMember.of_frame(frame)
        if member is not None:
            return self.raw_members.read(member)
        # frames written before the generation had a dictionary say so (dictionary ID 0)
        dict_data = self.dict_data if zstandard.get_frame_parameters(frame).dict_id else None
        cache = decompressors.__dict__.setdefault("by_dictionary", {})
        decompressor = cache.get(id(dict_data))
        if decompressor is None:  # a decompressor is not safe to share between threads: one per thread
            decompressor = cache[id(dict_data)] = zstandard.ZstdDecompressor(dict_data=dict_data)
        return decompressor.decompress(frame)


class _RawMembers:
    """Reads records that are members of zips in raw/ (RawMember), each zip opened once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fds: dict[str, int] = {}
        self._lock = threading.Lock()

    def _fd(self, blob: str) -> int:
        fd = self._fds.get(blob)
        if fd is None:
            if not blob.startswith("raw/objects/") or ".." in Path(blob).parts:
                raise WarehouseError(f"a record file names {blob!r}, which is not in raw/objects", hint=REBUILD_HINT)
            path = self.root / blob
            with self._lock:
                fd = self._fds.get(blob)
                if fd is None:
                    try:
                        fd = self._fds[blob] = os.open(path, os.O_RDONLY)
                    except FileNotFoundError:
                        raise WarehouseError(f"{blob}, which holds records of the warehouse, is missing",
                                             hint=RAW_LOST_HINT) from None
        return fd

    def read(self, member: RawMember) -> bytes:
        fd = self._fd(member.blob)
        header = os.pread(fd, _LOCAL_HEADER.size, member.header_offset)
        signature, name_length, extra_length = _LOCAL_HEADER.unpack(header) if len(header) == _LOCAL_HEADER.size \
            else (b"", 0, 0)
        data = b""
        if signature == b"PK\x03\x04":
            start = member.header_offset + _LOCAL_HEADER.size + name_length + extra_length
            data = os.pread(fd, member.compressed_size, start)
            try:
                data = zlib.decompress(data, -15) if member.method == ZIP_DEFLATED else data
            except zlib.error:
                data = b""
        if len(data) != member.size or zlib.crc32(data) != member.crc:
            raise WarehouseError(f"{member.blob} is damaged: its member at byte {member.header_offset} is not the "
                                 "record the warehouse read from it",
                                 hint=RAW_LOST_HINT)
        return data


class RecordFiles:
    """Reads single records from segments' record files; shared by every thread of a process (files are opened
    once each; segments never change once written)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._open: dict[str, _OpenRecordFile | None] = {}
        self._raw_members = _RawMembers(self.root)
        self._lock = threading.Lock()
        self._decompressors = threading.local()

    def _file(self, segment_folder: str) -> _OpenRecordFile | None:
        found = self._open.get(segment_folder, False)
        if found is not False:
            return found
        with self._lock:
            if segment_folder not in self._open:
                folder = self.root / segment_folder
                self._open[segment_folder] = (_OpenRecordFile(folder, self._raw_members) if has_record_file(folder)
                                                  else None)
            return self._open[segment_folder]

    def read_member(self, member: RawMember) -> bytes:
        """A record that is a zip member in raw/, as the record file would give it."""
        return self._raw_members.read(member)

    def read(self, record_file: str, row: int) -> bytes | None:
        """The record at `row` of a version file (study_version.record_file, relative to the root), as received
        (UTF-8 JSON); None where that file's segment has no record file (a snapshot's, or one not yet written)."""
        opened = self._file(os.path.dirname(record_file))
        return None if opened is None else opened.read(row, self._decompressors)


_SHARED: dict[Path, RecordFiles] = {}
_SHARED_LOCK = threading.Lock()


def record_files_of(root: Path) -> RecordFiles:
    """The process's RecordFiles of a warehouse (or snapshot folder): one set of open files for every reader."""
    root = Path(root).resolve()
    with _SHARED_LOCK:
        if root not in _SHARED:
            _SHARED[root] = RecordFiles(root)
        return _SHARED[root]
