"""The server belongs to its user: Host, Origin, content type, body size and the SQL endpoint's memory, over
real HTTP on loopback."""

from __future__ import annotations

import base64
import json
import resource
import socket
import threading
import time

import pytest
from test_serve import LoopbackServer

from ctmirror.read import cursors
from ctmirror.server.app import MAX_BODY, Settings


@pytest.fixture(scope="module")
def guarded(sample_warehouse):
    with LoopbackServer(Settings(sample_warehouse, sql=True, sql_memory_limit="300MB", sql_timeout=1.5, readers=1,
                                 allow_hosts=("mirror.lan",))) as client:
        yield client


MCP_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def test_a_host_the_server_was_not_told_of_is_refused_on_every_surface(guarded):
    for path in ("/api/v2/version", "/ctmirror/v1/get_trial?nct_id=NCT00711542", "/"):
        refused = guarded.get(path, headers={"host": "attacker.example"})
        assert refused.status_code == 421 and "--allow-host" in refused.json()["error"]["message"]
    rebinding = guarded.post("/mcp", json=MCP_INITIALIZE, headers={**MCP_HEADERS, "host": "attacker.example"})
    assert rebinding.status_code == 421
    for host in ("127.0.0.1", "localhost", "mirror.lan", "MIRROR.LAN:8000"):
        assert guarded.get("/api/v2/version", headers={"host": host}).status_code == 200, host
    assert guarded.post("/mcp", json=MCP_INITIALIZE, headers=MCP_HEADERS).status_code == 200


def test_a_page_of_another_origin_cannot_post(guarded):
    foreign = {"origin": "http://attacker.example", "content-type": "application/json"}
    assert guarded.post("/ctmirror/v1/get_landscape", content=b'{"condition": "NASH"}',
                        headers=foreign).status_code == 403
    assert guarded.post("/mcp", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **foreign}).status_code == 403
    own = {"origin": f"http://127.0.0.1:{guarded.base_url.port}", "content-type": "application/json"}
    assert guarded.post("/ctmirror/v1/get_landscape", content=b'{"condition": "NASH"}',
                        headers=own).status_code == 200
    # a page may read what any page may (a GET), but not post
    assert guarded.get("/api/v2/version", headers={"origin": "http://attacker.example"}).status_code == 200


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                          None])
def test_json_posts_need_a_json_content_type(guarded, content_type):
    headers = {"content-type": content_type} if content_type else {}
    response = guarded.post("/ctmirror/v1/get_landscape", content=b'{"condition": "NASH"}', headers=headers)
    assert response.status_code == 415 and "application/json" in response.json()["error"]["message"]
    assert guarded.post("/ctmirror/v1/get_landscape", content=b'{"condition": "NASH"}',
                        headers={"content-type": "application/json; charset=utf-8"}).status_code == 200


def test_an_oversized_body_is_refused_before_it_is_read(guarded):
    declared = guarded.post("/ctmirror/v1/sql", content=b"x" * (MAX_BODY + 1),
                            headers={"content-type": "application/json"})
    assert declared.status_code == 413
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with socket.create_connection(("127.0.0.1", guarded.base_url.port)) as raw:
        raw.sendall(b"POST /ctmirror/v1/sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * (1 << 20)
        sent = 0
        try:
            for _ in range(256):  # up to 256 MB, in chunks of 1 MB: the answer comes after about one
                raw.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                sent += 1
        except OSError:
            pass  # the server answered and closed the connection while more was being sent
        raw.settimeout(10)
        status_line = raw.recv(200).split(b"\r\n")[0]
    assert status_line.split()[1] == b"413", status_line
    assert sent < 256
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # the server runs in this process
    assert grown < 64 * 1024, f"{grown} KiB"


def test_the_sql_endpoint_is_bounded_by_its_memory_limit_and_its_row_limit(guarded):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wide = guarded.post("/ctmirror/v1/sql", json={"query": "SELECT repeat('x', 1000000) AS x FROM range(3000)",
                                                  "limit": 1})
    assert wide.status_code == 200 and len(wide.json()["rows"]) == 1 and wide.json()["truncated"]
    too_big = guarded.post("/ctmirror/v1/sql", json={"query": "SELECT list(repeat('x', 1000000)) FROM range(3000)"})
    assert too_big.status_code == 400 and "memory limit" in too_big.json()["error"]["message"]
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 600 * 1024, f"{grown} KiB"
    # the methods are answered while the SQL reader is busy: they have readers of their own
    slow: list = []
    busy = threading.Thread(target=lambda: slow.append(guarded.post(
        "/ctmirror/v1/sql", json={"query": "SELECT count(*) FROM range(1000000000000)"})))
    busy.start()
    time.sleep(0.5)
    answered = guarded.get("/ctmirror/v1/get_landscape", params={"condition": "NASH"})
    still_running = busy.is_alive()
    busy.join()
    assert answered.status_code == 200 and still_running
    assert slow[0].status_code == 400 and "stopped" in slow[0].text


def test_errors_name_no_absolute_path(guarded, sample_warehouse):
    """A page token naming a state that is not kept: the error says so without the server's folders."""
    payload = {"v": cursors.VERSION, "s": "999999", "o": 10, "f": "x", "h": "0" * 32}
    token = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    for path in ("/api/v2/studies?query.cond=cancer&pageToken=" + token, "/api/v2/studies/NCT99999999",
                 "/ctmirror/v1/get_trial?nct_id=NCT99999999"):
        answer = guarded.get(path)
        assert answer.status_code in (400, 404) and str(sample_warehouse.parent) not in answer.text, answer.text
    assert "not kept in the warehouse" in guarded.get("/api/v2/studies?query.cond=cancer&pageToken=" + token).text


def test_a_body_nested_too_deep_is_a_400_not_a_500(guarded):
    for path in ("/ctmirror/v1/get_landscape", "/ctmirror/v1/sql"):
        answer = guarded.post(path, content=b"[" * 100_000, headers={"content-type": "application/json"})
        assert answer.status_code == 400, (path, answer.status_code)


def test_a_range_of_years_covers_both_whole_years(guarded):
    def total(query: str) -> int:
        return guarded.get("/api/v2/studies", params={"query.term": query, "countTotal": "true",
                                                      "pageSize": 1}).json()["totalCount"]
    years = total("AREA[StartDate]RANGE[2019, 2020]")
    assert years == total("AREA[StartDate]RANGE[2019-01-01, 2020-12-31]") > 0
    assert total("AREA[StartDate]RANGE[2019-01, 2019-12]") == total("AREA[StartDate]RANGE[2019-01-01, 2019-12-31]")


def test_the_index_page_says_what_is_served(guarded):
    page = guarded.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/api/v2/studies" in page.text and "/ctmirror/v1/openapi.json" in page.text and "/mcp" in page.text


def test_a_repeated_parameter_is_the_list_it_means_or_a_400(guarded):
    def total(params) -> int:
        answer = guarded.get("/api/v2/studies", params=params)
        assert answer.status_code == 200, answer.text
        return answer.json()["totalCount"]
    both = [("filter.overallStatus", "RECRUITING"), ("filter.overallStatus", "COMPLETED"), ("countTotal", "true")]
    assert total(both) == total({"filter.overallStatus": "RECRUITING,COMPLETED", "countTotal": "true"}) > \
        total({"filter.overallStatus": "COMPLETED", "countTotal": "true"})
    twice = guarded.get("/api/v2/studies", params=[("query.cond", "asthma"), ("query.cond", "copd")])
    assert twice.status_code == 400 and "query.cond is given 2 times" in twice.text


def test_post_filters_narrow_the_filters_rather_than_replace_them(guarded):
    def total(**params) -> int:
        answer = guarded.get("/api/v2/studies", params={**params, "countTotal": "true"})
        assert answer.status_code == 200, answer.text
        return answer.json()["totalCount"]
    recruiting = total(**{"filter.overallStatus": "RECRUITING"})
    completed = total(**{"filter.overallStatus": "COMPLETED"})
    assert recruiting and completed
    assert total(**{"postFilter.overallStatus": "COMPLETED"}) == completed
    assert total(**{"filter.overallStatus": "RECRUITING,COMPLETED",
                    "postFilter.overallStatus": "COMPLETED"}) == completed
    assert total(**{"filter.overallStatus": "RECRUITING", "postFilter.overallStatus": "COMPLETED"}) == 0
    assert total(**{"filter.ids": "NCT00711542,NCT03225586", "postFilter.ids": "NCT03225586"}) == 1
    asthma = total(**{"query.cond": "asthma"})
    both = total(**{"filter.advanced": "AREA[Condition]asthma", "postFilter.advanced": "AREA[OverallStatus]COMPLETED"})
    assert 0 < both < asthma
    assert both == total(**{"filter.advanced": "AREA[Condition]asthma AND AREA[OverallStatus]COMPLETED"})
    geo = "distance(42.36,-71.06,50mi)"
    assert total(**{"filter.geo": geo, "postFilter.geo": geo}) == total(**{"filter.geo": geo})
    other = guarded.get("/api/v2/studies", params={"filter.geo": geo, "postFilter.geo": "distance(0,0,5km)"})
    assert other.status_code == 400 and "postFilter.geo" in other.text


def test_gzip_when_asked_and_a_well_formed_unknown_id_is_a_404(guarded):
    zipped = guarded.get("/api/v2/studies", params={"pageSize": 50}, headers={"accept-encoding": "gzip"})
    assert zipped.status_code == 200 and zipped.headers["content-encoding"] == "gzip" and len(zipped.json()["studies"])
    plain = guarded.get("/api/v2/studies", params={"pageSize": 50}, headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.json() == zipped.json()
    unknown = guarded.get("/api/v2/studies/NCT00000000")
    assert unknown.status_code == 404, unknown.text


def test_the_patient_query_and_geo_decay_are_taken_as_the_spec_describes(guarded):
    def total(params) -> int:
        answer = guarded.get("/api/v2/studies", params={**params, "countTotal": "true"})
        assert answer.status_code == 200, answer.text
        return answer.json()["totalCount"]
    assert total({"query.patient": "asthma"}) == total({"query.term": "asthma"}) > 0
    near = {"filter.geo": "distance(39.0035707,-77.1013313,500mi)"}
    assert total({**near, "geoDecay": "func:linear,scale:100km,offset:10km,decay:0.1"}) == total(near)
    assert guarded.get("/api/v2/studies", params={**near, "geoDecay": "steep"}).status_code == 400


def test_field_values_for_all_fields_by_type_and_has_results_as_a_boolean(guarded):
    booleans = guarded.get("/api/v2/stats/field/values", params={"types": "BOOLEAN"}).json()
    assert len(booleans) > 20 and all(f["type"] == "BOOLEAN" and "topValues" not in f for f in booleans)
    [results] = [f for f in booleans if f["piece"] == "HasResults"]
    assert results["trueCount"] > 0 and results["falseCount"] > 0
    enums = guarded.get("/api/v2/stats/field/values", params={"types": "ENUM|BOOLEAN"}).json()
    assert {f["type"] for f in enums} == {"ENUM", "BOOLEAN"}
    assert {"OverallStatus", "Phase"} <= {f["piece"] for f in enums}
    by_path = guarded.get("/api/v2/stats/field/values",
                          params={"fields": "protocolSection.statusModule.overallStatus"}).json()
    assert by_path == [f for f in enums if f["piece"] == "OverallStatus"]
    assert guarded.get("/api/v2/stats/field/values", params={"types": "COLOUR"}).status_code == 400
