"""Segments' record files (ctmirror/core/record_files.py): one zstd frame per stored record, in the rows' order of
study_versions.parquet, for the server's single-record reads; and the server's lookups that use them."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time

import httpx
import uvicorn
from conftest import write_ndjson
from uvicorn.protocols.http.h11_impl import H11Protocol

from ctmirror import Mirror
from ctmirror.core.record_files import DICTIONARY, OFFSETS, RECORDS, RecordFiles
from ctmirror.core.warehouse import Warehouse
from ctmirror.server import v2
from ctmirror.server.no_delay import NoDelayH11Protocol
from ingest.loader import load_paths, republish


def stored(m: Mirror) -> list[tuple[str, str, int, bytes]]:
    """Every version the state holds: (NCT ID, record file, record row, the record as study_versions keeps it)."""
    rows = m.rows("SELECT v.nct_id, v.record_file, v.record_row, s.raw FROM study_version AS v "
                  "JOIN study_versions AS s USING (nct_id, content_hash) ORDER BY v.version_no")
    return [(r["nct_id"], r["record_file"], r["record_row"], r["raw"].encode("utf-8")) for r in rows]


def test_each_versions_row_of_its_record_file_is_its_stored_record(sample_warehouse):
    files = RecordFiles(sample_warehouse)
    with Mirror(sample_warehouse) as m:
        versions = stored(m)
    assert len(versions) == 2279 and len({row for _, _, row, _ in versions}) == 2279
    assert all(files.read(file, row) == raw for _, file, row, raw in versions)
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


def test_record_files_are_written_for_segments_without_them_and_answers_do_not_change(tmp_path, records):
    """The first segment (30 records, too few to train on) is written without a dictionary, the second with one;
    both read back. Removed, they are the Parquet fallback's answers, and the next publish writes them again (the
    first now with the dictionary)."""
    wh = Warehouse(tmp_path / "w")
    load_paths(wh, [write_ndjson(tmp_path / "a.ndjson", records[:30])])
    assert not (wh.segments_dir / DICTIONARY).exists()
    load_paths(wh, [write_ndjson(tmp_path / "b.ndjson", records[30:400])])
    assert (wh.segments_dir / DICTIONARY).exists() and len(wh.segments()) == 2
    with Mirror(wh.root) as m:
        versions = stored(m)
        ids = [nct_id for nct_id, *_ in versions]
        expected = {nct_id: json.loads(raw) for nct_id, _, _, raw in versions}
        answers = single_studies(m, ids)
        page, _ = v2.studies(m, {"query.cond": "cancer", "pageSize": "50"}, None)
    files = RecordFiles(wh.root)
    assert all(files.read(file, row) == raw for _, file, row, raw in versions)
    assert {i: json.loads(a) for i, a in answers.items()} == expected
    written = {segment.segment_id: (segment.path / RECORDS).read_bytes() for segment in wh.segments()}
    for segment in wh.segments():
        (segment.path / RECORDS).unlink()
        (segment.path / OFFSETS).unlink()
    with Mirror(wh.root) as m:  # a new process's view: no record files, the Parquet files answer
        v2._CURRENT.clear()
        without = single_studies(m, ids)
        assert {i: json.loads(a) for i, a in without.items()} == expected
        assert v2.studies(m, {"query.cond": "cancer", "pageSize": "50"}, None)[0] == page
    republish(wh)
    assert all(RecordFiles(wh.root).read(file, row) == raw for _, file, row, raw in versions)
    again = {segment.segment_id: (segment.path / RECORDS).read_bytes() for segment in wh.segments()}
    assert again["000002"] == written["000002"]  # the same frames, with the same dictionary
    assert len(again["000001"]) < len(written["000001"])  # now with the dictionary the first segment had not


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


def test_a_copied_warehouse_reads_its_own_record_files(sample_warehouse, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(sample_warehouse, first, symlinks=True)
    shutil.copytree(first, second, symlinks=True)
    shutil.rmtree(first)  # the copy must not read the files it was copied from
    with Mirror(second) as m:
        versions = stored(m)[:50]
        assert all(RecordFiles(second).read(file, row) == raw for _, file, row, raw in versions)
