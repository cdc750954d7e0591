"""A fake of the ClinicalTrials.gov v2 API serving real HTTP on 127.0.0.1, for harvester tests and benchmarks.

It holds study records in memory and answers, like the real API:
- GET /api/v2/version                  {"apiVersion", "dataTimestamp"}
- GET /api/v2/studies                  pageSize (≤ 1000), pageToken, countTotal, filter.advanced with
                                       AREA[LastUpdatePostDate]RANGE[from,MAX], filter.ids; pages in nct_id order;
                                       a token is valid only for the same parameters; a full last page carries a
                                       token that leads to an empty page
- GET /api/v2/studies/{id}             the record; 301 to the new ID for an alias; 404 when unknown
- GET /api/int/studies/{id}/history    the study's versions, and /history/{n} one version (the undocumented
                                       endpoints the website uses)

Faults are queued per test with `fail(kind, ...)` and consumed by the next matching requests: 429 (with or
without Retry-After), 500, 503, a connection dropped mid-body, a truncated JSON body, a response slower than
the client's timeout, expired tokens, the data changing between pages, and an answer of another shape.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import json
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

_RANGE = re.compile(r"^AREA\[LastUpdatePostDate\]RANGE\[([^,\]]+),\s*([^\]]+)\]$")


def last_update(record: dict) -> str:
    return (record.get("protocolSection", {}).get("statusModule", {})
            .get("lastUpdatePostDateStruct", {}).get("date", ""))


def encode_record(record: dict) -> bytes:
    """A record as the API sends it: compact JSON, UTF-8 unescaped."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass
class Fault:
    kind: str  # 429, 500, 503, drop, truncate, slow, expire_tokens, change_data, reshape
    route: str = "studies"  # studies, study, version, history
    retry_after: str | None = None
    seconds: float = 0.0
    after_pages: int = 0  # for change_data / expire_tokens: once this many pages were served
    mutate: object = None  # for change_data: a callable(FakeRegistry)


@dataclass
class FakeRegistry:
    records: dict[str, dict]
    aliases: dict[str, str] = field(default_factory=dict)  # old id -> new id
    history: dict[str, list[dict]] = field(default_factory=dict)  # id -> versions, oldest first
    data_timestamp: str = "2026-11-25T09:00:00"
    max_page_size: int = 1000
    faults: deque = field(default_factory=deque)
    requests: list[str] = field(default_factory=list)
    pages_served: int = 0
    token_epoch: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    _encoded: dict[str, bytes] = field(default_factory=dict)
    # Sorted once per change, not per page: sorting 50,000 IDs for each page cost the benchmark's server a
    # second of the two cores it shares with the harvester it measures.
    _sorted_ids: list[str] | None = None

    def put(self, record: dict, encoded: bytes | None = None) -> None:
        """A record, with its bytes as `encode_record` gives them when the caller has them already."""
        nct_id = record["protocolSection"]["identificationModule"]["nctId"]
        if nct_id not in self.records:
            self._sorted_ids = None
        self.records[nct_id] = record
        if encoded is None:
            self._encoded.pop(nct_id, None)
        else:
            self._encoded[nct_id] = encoded

    def remove(self, nct_id: str) -> None:
        if nct_id in self.records:
            self._sorted_ids = None
        self.records.pop(nct_id, None)
        self._encoded.pop(nct_id, None)

    def sorted_ids(self) -> list[str]:
        if self._sorted_ids is None:
            self._sorted_ids = sorted(self.records)
        return self._sorted_ids

    def encoded(self, nct_id: str) -> bytes:
        data = self._encoded.get(nct_id)
        if data is None:
            data = self._encoded[nct_id] = encode_record(self.records[nct_id])
        return data

    def fail(self, kind: str, **options) -> None:
        self.faults.append(Fault(kind=kind, **options))

    def take_fault(self, route: str) -> Fault | None:
        with self.lock:
            for fault in list(self.faults):
                if fault.route != route:
                    continue
                if fault.kind in ("change_data", "expire_tokens") and self.pages_served < fault.after_pages:
                    continue
                self.faults.remove(fault)
                return fault
        return None


class FakeApiServer:
    """`with FakeApiServer(registry) as server:` serves on `server.base_url` until the block ends."""

    def __init__(self, registry: FakeRegistry) -> None:
        self.registry = registry
        handler = type("Handler", (_Handler,), {"registry": registry})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> FakeApiServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    registry: FakeRegistry
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.registry.requests.append(self.path)
        path = url.path.rstrip("/")
        if path == "/api/v2/version":
            return self._route("version", lambda: self._json(200, {"apiVersion": "2.0.5",
                                                                     "dataTimestamp": self.registry.data_timestamp}))
        if path == "/api/v2/studies":
            return self._route("studies", lambda: self._studies(query))
        if match := re.fullmatch(r"/api/v2/studies/(NCT\d{8})", path):
            return self._route("study", lambda: self._study(match.group(1)))
        if match := re.fullmatch(r"/api/int/studies/(NCT\d{8})/history(?:/(\d+))?", path):
            return self._route("history", lambda: self._history(match.group(1), match.group(2)))
        self._json(404, {"message": f"no route {path}"})

    # ---- faults ---------------------------------------------------------------------------------------
    def _route(self, route: str, answer) -> None:
        fault = self.registry.take_fault(route)
        if fault is None:
            return answer()
        if fault.kind in ("429", "500", "503"):
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            return self._json(int(fault.kind), {"message": f"injected {fault.kind}"}, headers)
        if fault.kind == "slow":
            time.sleep(fault.seconds)
            return answer()
        if fault.kind == "expire_tokens":
            self.registry.token_epoch += 1
            return answer()
        if fault.kind == "reshape":  # a well-formed answer that is not a page: the API changed
            return self._json(200, {"trials": [], "totalCount": 0})
        if fault.kind == "change_data":
            fault.mutate(self.registry)  # type: ignore[operator]
            return answer()
        self._broken = fault.kind  # drop / truncate: applied to the body of this answer
        answer()

    # ---- answers --------------------------------------------------------------------------------------
    def _studies(self, query: dict[str, str]) -> None:
        registry = self.registry
        try:
            size = min(int(query.get("pageSize", "10")), registry.max_page_size)
        except ValueError:
            return self._json(400, {"message": "pageSize must be an integer"})
        ids = registry.sorted_ids()
        if "filter.ids" in query:
            wanted = set(re.split(r"[,|\s]+", query["filter.ids"].strip()))
            ids = [i for i in ids if i in wanted]
        if "filter.advanced" in query:
            match = _RANGE.match(query["filter.advanced"].strip())
            if not match:
                return self._json(400, {"message": f"unsupported filter.advanced {query['filter.advanced']!r}"})
            low, high = match.group(1).strip(), match.group(2).strip()
            ids = [i for i in ids if (low == "MIN" or last_update(registry.records[i]) >= low)
                   and (high == "MAX" or last_update(registry.records[i]) <= high)]
        fingerprint = hashlib.sha256(json.dumps({k: v for k, v in sorted(query.items()) if k != "pageToken"}
                                                ).encode()).hexdigest()[:12]
        start = 0
        if "pageToken" in query:
            try:
                token = json.loads(base64.urlsafe_b64decode(query["pageToken"] + "=="))
            except ValueError:
                return self._json(400, {"message": "invalid pageToken"})
            if token["q"] != fingerprint:
                return self._json(400, {"message": "pageToken does not match the query parameters"})
            if token["e"] != registry.token_epoch:
                return self._json(400, {"message": "pageToken expired"})
            start = token["after"]
            start = bisect.bisect_right(ids, start)
        chosen = ids[start:start + size]
        # Joined once: each concatenation of a 15 MB page was a copy of it, on the cores the benchmark measures.
        parts = [b'{"studies":[', b",".join(registry.encoded(i) for i in chosen), b"]"]
        if chosen and len(chosen) == size:  # a full page carries a token, even the last one
            token = {"q": fingerprint, "after": chosen[-1], "e": registry.token_epoch}
            parts += [b',"nextPageToken":"', base64.urlsafe_b64encode(json.dumps(token).encode()).rstrip(b"="), b'"']
        if query.get("countTotal") == "true" and "pageToken" not in query:
            parts += [b',"totalCount":', str(len(ids)).encode()]
        registry.pages_served += 1
        self._send(200, b"".join([*parts, b"}"]))

    def _study(self, nct_id: str) -> None:
        if nct_id in self.registry.aliases:
            new_id = self.registry.aliases[nct_id]
            return self._send(301, b"", {"Location": f"/api/v2/studies/{new_id}"})
        if nct_id not in self.registry.records:
            return self._json(404, {"message": f"study {nct_id} not found"})
        self._send(200, self.registry.encoded(nct_id))

    def _history(self, nct_id: str, version: str | None) -> None:
        versions = self.registry.history.get(nct_id)
        if versions is None:
            return self._json(404, {"message": f"no history for {nct_id}"})
        if version is None:
            return self._json(200, {"nctId": nct_id, "history": {"changes": [
                {"version": n, "date": last_update(v), "status": "", "moduleLabels": []}
                for n, v in enumerate(versions)]}})
        number = int(version)
        if number >= len(versions):
            return self._json(404, {"message": f"no version {number} of {nct_id}"})
        self._json(200, {"study": versions[number]})

    def _json(self, status: int, payload: object, headers: dict | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), headers)

    def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
        broken = getattr(self, "_broken", None)
        self._broken = None
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if broken == "truncate":
            body = body[: max(1, len(body) // 2)]  # a well-formed HTTP answer whose JSON is cut short
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if broken == "drop":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(body)
