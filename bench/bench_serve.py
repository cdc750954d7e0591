"""`ctmirror serve` under load: a real server process on a loopback port, N concurrent clients (threads, one
keep-alive connection each, http.client: a client lean enough that the two cores it shares with the server are
mostly the server's), on bench/out/wh-<studies> (built by bench_methods.py or bench_cutoffs.py).

    python bench/bench_serve.py [--studies 500000] [--clients 8] [--requests 400] [--readers N] [--workers 2]
                                [--cold]

Reports requests/s and p50/p99 ms for: single studies by uniformly random NCT ID (/api/v2/studies/{id}); the
contract's search (query.cond + query.intr, countTotal, a page of 10) by how many studies the condition matches;
landscape and whitespace calls (/ctmirror/v1/...), each with a random cutoff; then single studies again from a
server pinned to a cutoff (--as-of), as a backtest runs one.
"""

from __future__ import annotations

import argparse
import http.client
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import call_material  # noqa: E402
from ctmirror import Mirror  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load(url: str, requests: list[tuple[str, dict]], clients: int) -> tuple[float, list[float], list[int]]:
    """Runs the requests on `clients` threads; (seconds, latencies in ms, status codes)."""
    latencies: list[float] = []
    statuses: list[int] = []
    lock = threading.Lock()
    queue = list(enumerate(requests))

    address = urllib.parse.urlsplit(url)

    def worker() -> None:
        client = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    _, (path, params) = queue.pop()
                started = time.perf_counter()
                client.request("GET", path + ("?" + urllib.parse.urlencode(params) if params else ""))
                response = client.getresponse()
                response.read()
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    latencies.append(elapsed)
                    statuses.append(response.status)
        finally:
            client.close()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, latencies, statuses


def report(label: str, seconds: float, latencies: list[float], statuses: list[int]) -> None:
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    bad = sum(1 for s in statuses if s >= 400)
    print(f"{label:<44}{len(latencies) / seconds:>10,.0f}{statistics.median(latencies):>9.1f}{p99:>9.1f}"
          f"{len(latencies):>7}{bad:>6}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--readers", type=int, default=None, help="default: the server's (cores / workers)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cold", action="store_true", help="no warm-up searches before the measured ones")
    args = parser.parse_args()
    root = ROOT / "bench" / "out" / f"wh-{args.studies}"
    rng = random.Random(31)
    with Mirror(root) as m:
        ids, conditions, drugs = call_material(m)
        picked = rng.sample(conditions, min(len(conditions), 150))
        breadth = {c: m.search(condition=c, page_size=1).pagination.total_count for c in picked}
    print(f"{args.studies:,} studies, {args.clients} concurrent clients, {args.workers} worker processes of "
          f"{args.readers or 'the default number of'} readers")
    print(f"{'requests':<44}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'n':>7}{'4xx+':>6}")
    singles = lambda n: [("/api/v2/studies/" + rng.choice(ids), {}) for _ in range(n)]  # noqa: E731
    with serving(root, args) as url:
        load(url, singles(100), args.clients)  # warm up: each worker reads the state's NCT IDs once
        report("/api/v2/studies/{id}, random IDs", *load(url, singles(args.requests * 10), args.clients))
        # a server that has run a while: each reader has prepared the common search shapes (one to four words of a
        # condition, with and without a drug) once; --cold measures the searches without this
        if not args.cold:
            load(url, [("/api/v2/studies", {"query.cond": rng.choice(picked), "countTotal": "true", "pageSize": 10,
                                            **({"query.intr": rng.choice(drugs)} if n % 2 else {})})
                       for n in range(args.requests)], args.clients)
        for limit, label in ((1_000, "<= 1,000"), (10_000, "<= 10,000"), (None, "more")):
            chosen = [c for c, n in breadth.items() if (limit is None or n <= limit) and
                      (label != "<= 10,000" or n > 1_000) and (label != "more" or n > 10_000)]
            if not chosen:
                continue
            requests = [("/api/v2/studies", {"query.cond": rng.choice(chosen), "query.intr": rng.choice(drugs),
                                             "countTotal": "true", "pageSize": 10}) for _ in range(args.requests)]
            report(f"search cond+intr, condition matches {label}", *load(url, requests, args.clients))
            requests = [("/api/v2/studies", {"query.cond": rng.choice(chosen), "pageSize": 10, "countTotal": "true"})
                        for _ in range(args.requests)]
            report(f"search cond alone, matches {label}", *load(url, requests, args.clients))
        cutoff = lambda: (date(1995, 1, 1) + timedelta(days=rng.randrange(11_600))).isoformat()  # noqa: E731
        report("/ctmirror/v1/get_landscape, random cutoffs",
               *load(url, [("/ctmirror/v1/get_landscape", {"condition": rng.choice(picked), "date_before": cutoff()})
                           for _ in range(args.requests)], args.clients))
        report("/ctmirror/v1/detect_whitespace, random cutoffs",
               *load(url, [("/ctmirror/v1/detect_whitespace", {"drug": rng.choice(drugs),
                                                                "condition": rng.choice(picked),
                                                                "date_before": cutoff()})
                           for _ in range(args.requests)], args.clients))
    # a backtest's server: every answer as of one date, so each single study is read and then reshaped
    with serving(root, args, "--as-of", "2019-06-01") as url:
        load(url, singles(100), args.clients)
        report("/api/v2/studies/{id}, server --as-of 2019-06-01", *load(url, singles(args.requests * 2),
                                                                       args.clients))


@contextmanager
def serving(root: Path, args: argparse.Namespace, *options: str) -> Iterator[str]:
    """`ctmirror serve` on a free loopback port, once it answers: its URL."""
    port = free_port()
    readers = ["--readers", str(args.readers)] if args.readers else []
    server = subprocess.Popen([sys.executable, "-m", "ctmirror.cli", "-q", "-w", str(root), "serve", "--port",
                               str(port), *readers, "--workers", str(args.workers), *options])
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                httpx.get(f"{url}/api/v2/version", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
