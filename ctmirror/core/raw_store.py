"""warehouse/raw/: everything ever received, exactly as received, append-only.

Blobs are content-addressed (`objects/ab/abcdef...`), stored as received when they came compressed (gzip,
zstd, zip) and zstd-compressed otherwise, so decompressing gives back the received bytes. Each receipt
(a file loaded, a page harvested) is one line of `manifest.ndjson`: where it came from, when, its sha256.
Receiving the same bytes twice stores one blob and two receipts. The manifest line is written only after
the blob is durable, so a crash leaves at worst an unreferenced blob, never a receipt without data.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import zstandard

from ctmirror.core.warehouse import append_lines

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Receipt:
    receipt_id: int
    sha256: str
    blob: str  # path relative to raw/
    origin: str  # the path or URL it came from
    source: str  # file, sample, api, bulk, history, aact
    received_at: str  # ISO 8601, UTC, microseconds
    size: int  # bytes as received
    context: dict | None = None


GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP_MAGIC = b"PK\x05\x06"


def compression_of(head: bytes) -> str | None:
    """How a file's first bytes say it is compressed: gzip, zstd, zip, or None."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    if head.startswith((ZIP_MAGIC, EMPTY_ZIP_MAGIC)):
        return "zip"
    return None


def _copy_blob(src, out, *, compress: bool) -> None:
    """src into out, zstd-compressed unless it already is, then made durable."""
    if compress:
        # Level 1 on two threads: raw/ is written once and read back only by rebuild; speed matters more than size.
        with zstandard.ZstdCompressor(level=1, threads=2).stream_writer(out, closefd=False) as writer:
            shutil.copyfileobj(src, writer, _CHUNK)
    else:
        shutil.copyfileobj(src, out, _CHUNK)
    out.flush()
    os.fsync(out.fileno())


class _Hashing:
    """A file read through, with every chunk also fed to a digest."""

    def __init__(self, src, digest) -> None:
        self.src = src
        self.digest = digest

    def read(self, size: int = -1) -> bytes:
        chunk = self.src.read(size)
        self.digest.update(chunk)
        return chunk


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class RawStore:
    def __init__(self, warehouse: Path) -> None:
        self.root = warehouse / "raw"
        self.manifest = self.root / "manifest.ndjson"
        # Read once per store, then counted: a folder of 600k bulk files must not re-read the manifest 600k times.
        # Safe because only the one writer (Warehouse.writing) appends.
        self._last_id: int | None = None

    def receive_file(self, path: Path, *, source: str, origin: str | None = None,
                     context: dict | None = None, received_at: str | None = None,
                     pending: dict[tuple[str, str], Receipt] | None = None) -> Receipt:
        """Stores a file and appends its receipt. pending: receipts not yet normalised, by (sha256, source): the
        same bytes from the same source again (a load retried after a failure) reuse that receipt instead of
        being recorded, and normalised, twice."""
        with open(path, "rb") as f:
            compressed = compression_of(f.read(4)) is not None
        # One read: the blob is written under a temporary name while the digest that names it is computed.
        digest = hashlib.sha256()
        staging = self.root / "objects"
        staging.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=staging, prefix=".tmp-")
        try:
            with open(path, "rb") as src, os.fdopen(fd, "wb") as out:
                _copy_blob(_Hashing(src, digest), out, compress=not compressed)
            sha = digest.hexdigest()
            blob = self._blob_name(sha, compressed)
            target = self.root / blob
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp_name, target)
                fsync_dir(target.parent)
        finally:
            Path(tmp_name).unlink(missing_ok=True)
        if pending and (sha, source) in pending:
            return pending[(sha, source)]
        return self._append(sha, blob, origin or str(path.resolve()), source, path.stat().st_size,
                            context, received_at)

    def receive_bytes(self, data: bytes, *, source: str, origin: str, context: dict | None = None,
                      received_at: str | None = None) -> Receipt:
        compressed = compression_of(data[:4]) is not None
        sha = hashlib.sha256(data).hexdigest()
        blob = self._blob_name(sha, compressed)
        target = self.root / blob
        if not target.exists():
            import io

            self._write_blob(target, io.BytesIO(data), compress=not compressed)
        return self._append(sha, blob, origin, source, len(data), context, received_at)

    def receipts(self) -> list[Receipt]:
        """All receipts in the order received. A torn last line (a crash mid-append) is skipped."""
        if not self.manifest.exists():
            return []
        receipts = []
        with open(self.manifest, encoding="utf-8") as f:
            for line in f:
                try:
                    receipts.append(Receipt(**json.loads(line)))
                except (json.JSONDecodeError, TypeError):
                    continue
        return receipts

    def path_of(self, receipt: Receipt) -> Path:
        return self.root / receipt.blob

    @staticmethod
    def _blob_name(sha: str, compressed: bool) -> str:
        return f"objects/{sha[:2]}/{sha}" + ("" if compressed else ".zst")

    def _write_blob(self, target: Path, src, *, compress: bool) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                _copy_blob(src, out, compress=compress)
            os.replace(tmp_name, target)
            fsync_dir(target.parent)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise

    def _append(self, sha: str, blob: str, origin: str, source: str, size: int,
                context: dict | None, received_at: str | None) -> Receipt:
        self.root.mkdir(parents=True, exist_ok=True)
        if self._last_id is None:
            existing = self.receipts()
            self._last_id = existing[-1].receipt_id if existing else 0
        receipt = Receipt(
            receipt_id=self._last_id + 1,
            sha256=sha, blob=blob, origin=origin, source=source,
            received_at=received_at or utc_now(), size=size, context=context,
        )
        append_lines(self.manifest, [json.dumps(asdict(receipt), ensure_ascii=False)])
        self._last_id = receipt.receipt_id
        return receipt
