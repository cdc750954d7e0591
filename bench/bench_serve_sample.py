"""`ctmirror serve` on a small warehouse, for comparing two versions of the code quickly: single studies and
searches from 4 client threads on loopback (httpx, which asks for gzip), req/s and p50 / p99 ms.

    python bench/bench_serve_sample.py CODE_FOLDER PORT [WAREHOUSE] [--identity]

--identity asks for uncompressed answers (Accept-Encoding: identity), for comparing with code that had no gzip.

CODE_FOLDER is a checkout of ctmirror (the code run is that folder's: `git worktree add /tmp/old REV` for an older
one); WAREHOUSE defaults to ./warehouse (`ctmirror load --sample`). Run two versions alternately.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import threading
import time

import httpx

CONDITIONS = ["asthma", "breast cancer", "diabetes", "covid-19", "obesity", "depression", "hypertension", "pain"]


def main() -> None:
    identity = "--identity" in sys.argv
    arguments = [a for a in sys.argv[1:] if a != "--identity"]
    code, port = arguments[0], int(arguments[1])
    warehouse = os.path.abspath(arguments[2] if len(arguments) > 2 else "warehouse")
    server = subprocess.Popen([sys.executable, "-m", "ctmirror.cli", "-q", "-w", warehouse, "serve", "--port",
                               str(port)], cwd=code, env={**os.environ, "PYTHONPATH": code},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                httpx.get(base + "/api/v2/version")
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        page = httpx.get(base + "/api/v2/studies", params={"pageSize": 1000, "fields": "NCTId"}).json()
        ids = [s["protocolSection"]["identificationModule"]["nctId"] for s in page["studies"]]
        for kind, calls in (("single studies", 500), ("searches", 100)):
            times: list[float] = []
            clients = [threading.Thread(target=_client, args=(base, kind, calls, ids, times, seed, identity))
                       for seed in range(4)]
            started = time.perf_counter()
            for client in clients:
                client.start()
            for client in clients:
                client.join()
            wall = time.perf_counter() - started
            times.sort()
            label = f"{code} (identity)" if identity else code
            print(f"{label}: {kind}: {len(times) / wall:,.0f} req/s, p50 {statistics.median(times) * 1e3:.1f} ms, "
                  f"p99 {times[int(len(times) * 0.99)] * 1e3:.1f} ms")
    finally:
        server.terminate()
        server.wait()


def _client(base: str, kind: str, calls: int, ids: list[str], times: list[float], seed: int,
            identity: bool) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=base, headers={"Accept-Encoding": "identity"} if identity else None) as client:
        for _ in range(calls):
            started = time.perf_counter()
            if kind == "single studies":
                answer = client.get(f"/api/v2/studies/{rng.choice(ids)}")
            else:
                answer = client.get("/api/v2/studies", params={"query.cond": rng.choice(CONDITIONS), "pageSize": 10})
            answer.raise_for_status()
            times.append(time.perf_counter() - started)


if __name__ == "__main__":
    main()
