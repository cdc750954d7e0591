"""One Mirror shared by threads: every answer is the one the same call gets alone."""

from __future__ import annotations

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
