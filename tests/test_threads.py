"""One Mirror shared by threads: every answer is the one the same call gets alone; DuckDB's threads as
CTMIRROR_THREADS says."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from ctmirror import Mirror
from ctmirror.read import readonly
from ctmirror.server.agent_tools import stdio_pool
from ctmirror.server.pool import MirrorPool

CALLS = [
    ("get_landscape", {"condition": "erectile dysfunction"}),
    ("get_landscape", {"condition": "NASH"}),
    ("get_landscape", {"condition": "prostate cancer", "date_before": "2015-01-01"}),
    ("search_trials", {"drug": "tadalafil", "condition": "erectile dysfunction"}),
    ("search_trials", {"drug": "tadalafil", "condition": "prostate cancer", "date_before": "2012-06-30"}),
    ("detect_whitespace", {"drug": "tadalafil", "condition": "NASH"}),
    ("get_terminated", {"query": "prostate cancer"}),
    ("search", {"condition": "asthma", "page_size": 5}),
]


def dumped(answer: object) -> object:
    if isinstance(answer, list):
        return [dumped(a) for a in answer]
    return answer.model_dump(mode="json") if hasattr(answer, "model_dump") else answer


@pytest.mark.slow  # eight threads of calls
def test_eight_threads_on_one_mirror_get_the_answers_each_call_gets_alone(sample_warehouse):
    with Mirror(sample_warehouse) as alone:
        expected = [dumped(alone.call(name, **kwargs)) for name, kwargs in CALLS]
    assert all(expected[:4]) and expected[0] != expected[1]  # real, distinct answers to mix up
    rounds = [(i % len(CALLS)) for i in range(8 * 6)]
    with Mirror(sample_warehouse) as shared, ThreadPoolExecutor(max_workers=8) as pool:
        def run(i: int) -> object:
            name, kwargs = CALLS[i]
            if i == 0:  # batches and SQL share the connection too
                [answer] = shared.batch([(name, kwargs)])
                shared.sql("SELECT count(*) FROM studies")
                return dumped(answer)
            return dumped(shared.call(name, **kwargs))
        answers = list(pool.map(run, rounds))
    for i, answer in zip(rounds, answers):
        assert answer == expected[i], CALLS[i]


THREADS_OF_A_READER_AND_A_WRITER = """
import sys
from pathlib import Path
from ctmirror import Mirror
from ctmirror.core.duck import new_connection
with Mirror(Path(sys.argv[1])) as m:
    reader = m.con.execute("SELECT current_setting('threads')").fetchone()[0]
writer = new_connection().execute("SELECT current_setting('threads')").fetchone()[0]
print(reader, writer)
"""


@pytest.mark.parametrize("given", ["3", "0", "two"])
def test_ctmirror_threads_sets_every_connections_threads(sample_warehouse, given):
    """CTMIRROR_THREADS=N: a reader's and a writer's DuckDB run N threads; anything but a whole number from 1 is
    refused, naming the variable."""
    done = subprocess.run([sys.executable, "-c", THREADS_OF_A_READER_AND_A_WRITER, str(sample_warehouse)],
                          env={**os.environ, "CTMIRROR_THREADS": given}, capture_output=True, text=True)
    if given == "3":
        assert done.returncode == 0 and done.stdout == "3 3\n", done.stderr
    else:
        assert done.returncode != 0 and f"CTMIRROR_THREADS must be a whole number of threads, 1 or more, not " \
            f"{given!r}" in done.stderr


def test_the_stdio_servers_calls_run_on_every_core_and_the_http_servers_on_one_each(sample_warehouse, monkeypatch):
    """`ctmirror mcp` has one client waiting for each answer: its readers' DuckDB runs a call on all the threads
    the process may use (here two, as CTMIRROR_THREADS=2 would say); `ctmirror serve`'s readers answer requests
    side by side, one thread each."""
    monkeypatch.setattr(readonly, "process_threads", lambda: {"threads": 2})

    def threads(pool: MirrorPool) -> int:
        try:
            with pool.mirror() as mirror:
                return int(mirror.rows("SELECT current_setting('threads') AS n")[0]["n"])
        finally:
            pool.close()

    assert threads(stdio_pool(sample_warehouse)) == 2
    assert threads(MirrorPool(sample_warehouse)) == 1
