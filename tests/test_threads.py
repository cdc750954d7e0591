"""One Mirror shared by threads: every answer is the one the same call gets alone; DuckDB's threads as
CTMIRROR_THREADS says."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from ctmirror import Mirror

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
