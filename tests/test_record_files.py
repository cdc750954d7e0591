"""Segments' record files (ctmirror/core/record_files.py): one zstd frame per stored record, in the rows' order of
study_versions.parquet, for the server's single-record reads; and the server's lookups that use them."""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import threading
import time
import zipfile
from datetime import date
from pathlib import Path

import httpx
import pyarrow
import pyarrow.parquet
import pytest
import uvicorn
from conftest import nct, write_ndjson
from uvicorn.protocols.http.h11_impl import H11Protocol

from ctmirror import Mirror
from ctmirror.core import record_files
from ctmirror.core.errors import WarehouseError
from ctmirror.core.record_files import DICTIONARY, OFFSETS, RECORDS, RawMember, RecordFiles
from ctmirror.core.warehouse import Warehouse
from ctmirror.server import v2
from ctmirror.server.no_delay import NoDelayH11Protocol
from ctmirror.server.v2 import study_lookup
from ingest.loader import load_paths, rebuild, republish
from ingest.snapshot import build_snapshot

pytestmark = pytest.mark.slow  # builds warehouses of its own

BULK_ZIP = Path(__file__).parent / "data" / "bulk" / "ctg-studies-erectile-dysfunction.json.zip"


def stored(m: Mirror) -> list[tuple[str, str, int, int]]:
    """Every version the state holds: (NCT ID, record file, record row, the record's size in study_versions)."""
    rows = m.rows("SELECT v.nct_id, v.record_file, v.record_row, s.record_bytes FROM study_version AS v "
                  "JOIN study_versions AS s USING (nct_id, content_hash) ORDER BY v.version_no")
    return [(r["nct_id"], r["record_file"], r["record_row"], r["record_bytes"]) for r in rows]


def holds_records(segment) -> bool:
    return "raw" in pyarrow.parquet.read_schema(segment.table_file("study_versions")).names


def test_each_versions_row_of_its_record_file_is_its_record_kept_once(sample_warehouse, records_by_id):
    files = RecordFiles(sample_warehouse)
    with Mirror(sample_warehouse) as m:
        versions = stored(m)
        assert "raw" not in {r["column_name"] for r in m.rows(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'study_versions'")}
    assert len(versions) == 2279 and len({row for _, _, row, _ in versions}) == 2279
    assert all(json.loads(files.read(file, row)) == records_by_id[nct_id] for nct_id, file, row, _ in versions)
    assert all(size == len(files.read(file, row)) for _, file, row, size in versions)
    segments = Warehouse(sample_warehouse).segments()
    assert segments and not any(holds_records(s) for s in segments)  # the record file's copy is the only one
    assert (sample_warehouse / "segments" / Warehouse(sample_warehouse).generation / DICTIONARY).exists()


def test_the_current_states_lookup_finds_what_the_query_finds(sample_warehouse):
    """Every study and alias of the sample, by CurrentStudies' binary search and by sql/serve/study_by_id.sql."""
    with Mirror(sample_warehouse) as m:
        ids = [r["nct_id"] for r in m.rows("SELECT nct_id FROM studies")]
        aliases = [r["alias_nct_id"] for r in m.rows("SELECT alias_nct_id FROM nct_alias")]
        assert aliases
        for nct_id in ids + aliases:
            found, text = v2.study_text(m, nct_id, {}, None)
            assert (found, json.loads(text)) == v2.study_by_query(m, nct_id, {}, None)


def test_a_page_of_stored_records_is_the_page_of_parsed_ones(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        for params in ({"query.cond": "asthma", "countTotal": "true", "pageSize": "3"}, {"query.intr": "no such drug"},
                       {"query.cond": "diabetes", "pageSize": "1000"}):
            stored, _ = v2.studies(m, params, None, as_stored=True)
            parsed, _ = v2.studies(m, params, None)
            assert json.loads(v2.page_json(stored)) == parsed
            assert all(isinstance(s, bytes) for s in stored["studies"])


def single_studies(m: Mirror, nct_ids: list[str]) -> dict[str, bytes]:
    return {nct_id: v2.study_text(m, nct_id, {}, None)[1] for nct_id in nct_ids}


def test_record_files_are_written_then_the_records_dropped_from_study_versions(tmp_path, records):
    """The first segment (30 records, too few to train on) is written without a dictionary, the second with one;
    both read back, and their study_versions keep no copy. A segment written before that (its records in
    study_versions, no record_bytes) has them dropped by the next publish, rows and order as they were; one whose
    record file is lost says to rebuild, which writes it again."""
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:30])])
    assert not (wh.segments_dir / DICTIONARY).exists()
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", records[30:400])])
    assert (wh.segments_dir / DICTIONARY).exists() and len(wh.segments()) == 2
    assert not any(holds_records(s) for s in wh.segments())
    expected = {nct(r): r for r in records[:400]}
    with Mirror(wh.root) as m:
        versions = stored(m)
        ids = [nct_id for nct_id, *_ in versions]
        assert {i: json.loads(a) for i, a in single_studies(m, ids).items()} == expected
        page, _ = v2.studies(m, {"query.cond": "cancer", "pageSize": "50"}, None)
    assert {i: json.loads(RecordFiles(wh.root).read(f, row)) for i, f, row, _ in versions} == expected

    first = wh.segments()[0]  # as an older ctmirror left it: the records kept, no sizes
    rows = pyarrow.parquet.read_table(first.table_file("study_versions"))
    texts = [RecordFiles(wh.root).read(f, row).decode() for _, f, row, _ in sorted(
        (v for v in versions if v[1].startswith(str(first.path.relative_to(wh.root)))), key=lambda v: v[2])]
    older = rows.drop_columns(["record_bytes"]).append_column("raw", pyarrow.array(texts))
    pyarrow.parquet.write_table(older, first.table_file("study_versions"))
    assert holds_records(first)
    republish(wh)
    assert not holds_records(first)
    assert pyarrow.parquet.read_table(first.table_file("study_versions")).equals(rows)
    with Mirror(wh.root) as m:
        assert stored(m) == versions

    for segment in wh.segments():
        (segment.path / RECORDS).unlink()
        (segment.path / OFFSETS).unlink()
    study_lookup._CURRENT.clear()
    record_files._SHARED.clear()  # a new process's view: the files it had open are gone
    with Mirror(wh.root) as m, pytest.raises(v2.V2Error, match="ctmirror rebuild"):
        single_studies(m, ids[:1])
    with pytest.raises(WarehouseError, match="lost its record file") as lost:
        republish(wh)
    assert "ctmirror rebuild" in str(lost.value.hint)
    rebuild(wh)
    study_lookup._CURRENT.clear()
    with Mirror(wh.root) as m:
        assert {i: json.loads(a) for i, a in single_studies(m, ids).items()} == expected
        assert v2.studies(m, {"query.cond": "cancer", "pageSize": "50"}, None)[0]["studies"] == page["studies"]
    assert not any(holds_records(s) for s in wh.segments())


def nagle_off_on_accepted_connections(protocol: type) -> bool:
    """Serves on a listening socket made as uvicorn makes one for its worker processes (socket.socket(family): its
    proto is 0, so asyncio leaves Nagle on for the connections it accepts), then asks each open connection."""
    async def app(scope, receive, send):
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", http=protocol, lifespan="off")
    server = uvicorn.Server(config)
    sock = socket.socket(socket.AF_INET)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.01)
        with httpx.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}") as client:
            assert client.get("/").status_code == 200
            connections = list(server.server_state.connections)
            assert connections
            return all(c.transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                       for c in connections)
    finally:
        server.should_exit = True
        thread.join(10)


def test_worker_processes_connections_send_without_waiting_for_acks():
    assert not nagle_off_on_accepted_connections(H11Protocol)  # what made every request wait 40 ms
    assert nagle_off_on_accepted_connections(NoDelayH11Protocol)


def test_a_copied_warehouse_reads_its_own_record_files(sample_warehouse, tmp_path, records_by_id):
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(sample_warehouse, first, symlinks=True)
    shutil.copytree(first, second, symlinks=True)
    shutil.rmtree(first)  # the copy must not read the files it was copied from
    with Mirror(second) as m:
        versions = stored(m)[:50]
        assert all(json.loads(RecordFiles(second).read(file, row)) == records_by_id[nct_id]
                   for nct_id, file, row, _ in versions)


def frames_of(folder: Path) -> list[bytes]:
    """The frames of a record file, in row order."""
    data, offsets = (folder / RECORDS).read_bytes(), (folder / OFFSETS).read_bytes()
    ends = struct.unpack(f"<{len(offsets) // 8}Q", offsets)
    return [data[start:end] for start, end in zip(ends, ends[1:])]


def test_records_received_as_zip_members_are_read_from_raw(tmp_path):
    """A bulk zip's records are not stored again beside raw/: the record file names each member where it lies in
    the zip raw/ keeps, and the record reads back as the member, byte for byte (also through the server's lookup).
    A member that is not the record as it stands (pretty-printed) is compressed into the record file as before;
    a stored (uncompressed) member is referred to too. A snapshot holds every record itself, so it reads them
    with the warehouse gone; a damaged or lost zip in raw/ says what to do."""
    with zipfile.ZipFile(BULK_ZIP) as bulk:
        members = {info.filename: bulk.read(info) for info in bulk.infolist()}
    names = sorted(members)
    pretty, plain = names[0], names[1]
    received = tmp_path / "bulk.zip"
    with zipfile.ZipFile(received, "w") as archive:
        for name in names:
            data = json.dumps(json.loads(members[name]), indent=2).encode() if name == pretty else members[name]
            archive.writestr(name, data, compress_type=zipfile.ZIP_STORED if name == plain else zipfile.ZIP_DEFLATED)
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [received])
    (segment,) = wh.segments()
    references = [RawMember.of_frame(frame) for frame in frames_of(segment.path)]
    assert len(references) == len(names) and sum(r is None for r in references) == 1
    assert {r.method for r in references if r} == {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
    assert (segment.path / RECORDS).stat().st_size < 200 * len(names)  # the records themselves are not here
    with Mirror(wh.root) as m:
        versions = stored(m)
        texts = single_studies(m, [nct_id for nct_id, *_ in versions])
    by_id = {name.removesuffix(".json"): data for name, data in members.items()}
    assert len(texts) == len(names)
    assert all(text == by_id[nct_id] for nct_id, text in texts.items() if f"{nct_id}.json" != pretty)
    assert json.loads(texts[pretty.removesuffix(".json")]) == json.loads(by_id[pretty.removesuffix(".json")])
    assert all(size == len(texts[nct_id]) for nct_id, _, _, size in versions)

    snapshot = tmp_path / "snapshot"
    build_snapshot(wh, date(2100, 1, 1), snapshot)
    assert not any(RawMember.of_frame(frame) for frame in frames_of(snapshot / "tables"))
    os.rename(wh.root, tmp_path / "elsewhere")  # the snapshot must not read the warehouse's raw/
    assert {nct_id: json.loads(text) for nct_id, text in stored_records_of(snapshot).items()} == {
        nct_id: json.loads(text) for nct_id, text in texts.items()}

    root = tmp_path / "elsewhere"
    reference = next(r for r in references if r and r.method == zipfile.ZIP_DEFLATED)
    blob = root / reference.blob
    damaged = bytearray(blob.read_bytes())
    name_length, extra_length = struct.unpack_from("<HH", damaged, reference.header_offset + 26)
    damaged[reference.header_offset + 30 + name_length + extra_length + 20] ^= 0xFF
    os.chmod(blob, 0o644)
    blob.write_bytes(bytes(damaged))
    record_files._SHARED.clear()
    with pytest.raises(WarehouseError, match="is damaged") as read:
        for _nct_id, file, row, _ in versions:
            RecordFiles(root).read(file, row)
    assert "sync --from-bulk" in str(read.value.hint)
    blob.unlink()
    _, file, row, _ = next(v for v in versions if references[v[2]])
    with pytest.raises(WarehouseError, match="is missing"):
        RecordFiles(root).read(file, row)


def stored_records_of(root: Path) -> dict[str, bytes | None]:
    with Mirror(root) as m:
        rows = m.rows("SELECT nct_id, record_file, record_row FROM study_version")
    files = RecordFiles(root)
    return {r["nct_id"]: files.read(r["record_file"], r["record_row"]) for r in rows}
