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
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
from collections.abc import Iterable
from pathlib import Path

import zstandard

RECORDS = "records.zst"
OFFSETS = "records.offsets"
DICTIONARY = "records.dict"
DICTIONARY_BYTES = 112 << 10
DICTIONARY_SAMPLES = 500
LEVEL = 3
_OFFSET = struct.Struct("<Q")


def train_dictionary(samples: list[bytes]) -> bytes:
    """A dictionary for a generation's records, from a few hundred of them; b"" when too few to train on."""
    if len(samples) < 50:
        return b""
    try:
        return zstandard.train_dictionary(DICTIONARY_BYTES, samples, level=LEVEL).as_bytes()
    except zstandard.ZstdError:  # samples too small or too alike to learn from: frames without a dictionary
        return b""


def write_record_file(folder: Path, records: Iterable[bytes], dictionary: bytes) -> int:
    """records.zst and records.offsets in `folder`, from the records in file order; the number written. Both are
    written under temporary names and made durable, the offsets renamed into place last."""
    trained = zstandard.ZstdCompressionDict(dictionary) if dictionary else None
    compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=trained, write_content_size=True)
    offsets = [0]
    records_tmp, offsets_tmp = folder / f".tmp-{RECORDS}", folder / f".tmp-{OFFSETS}"
    with open(records_tmp, "wb") as out:
        for record in records:
            frame = compressor.compress(record)
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
    def __init__(self, folder: Path) -> None:
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
        # frames written before the generation had a dictionary say so (dictionary ID 0)
        dict_data = self.dict_data if zstandard.get_frame_parameters(frame).dict_id else None
        cache = decompressors.__dict__.setdefault("by_dictionary", {})
        decompressor = cache.get(id(dict_data))
        if decompressor is None:  # a decompressor is not safe to share between threads: one per thread
            decompressor = cache[id(dict_data)] = zstandard.ZstdDecompressor(dict_data=dict_data)
        return decompressor.decompress(frame)


class RecordFiles:
    """Reads single records from segments' record files; shared by every thread of a process (files are opened
    once each; segments never change once written)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._open: dict[str, _OpenRecordFile | None] = {}
        self._lock = threading.Lock()
        self._decompressors = threading.local()

    def _file(self, segment_folder: str) -> _OpenRecordFile | None:
        found = self._open.get(segment_folder, False)
        if found is not False:
            return found
        with self._lock:
            if segment_folder not in self._open:
                folder = self.root / segment_folder
                self._open[segment_folder] = _OpenRecordFile(folder) if has_record_file(folder) else None
            return self._open[segment_folder]

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
