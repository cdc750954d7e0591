"""CPU time per thread of this process, grouped by the Python thread's name, for benchmarks that ask where the
time goes. Linux only: it samples /proc/self/task, since DuckDB's own threads are invisible to Python and a
thread's counters vanish when it ends (hence sampling rather than reading once at the end)."""

from __future__ import annotations

import os
import re
import threading
from collections import defaultdict

_TICK = os.sysconf("SC_CLK_TCK")
_POOL_SUFFIX = re.compile(r"_\d+$")  # ThreadPoolExecutor numbers its threads: ctmirror-table_0, _1, ...


def _task_times(tid: str) -> tuple[float, float] | None:
    try:
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) / _TICK, int(fields[12]) / _TICK  # utime, stime (fields 14 and 15 of stat)


class ThreadCpu:
    """Use as a context manager around the work; `by_role()` then gives role → (user s, system s), where a role is
    a Python thread's name without its pool number, and "duckdb" every thread Python did not start."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self._last: dict[str, tuple[float, float]] = {}
        self._role: dict[str, str] = {}
        self._totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._run, name="thread-cpu-sampler", daemon=True)

    def __enter__(self) -> ThreadCpu:
        self._sample()  # what threads used before the block is not counted
        self._totals.clear()
        self._sampler.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sampler.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        for thread in threading.enumerate():
            if thread.native_id is not None:
                self._role.setdefault(str(thread.native_id), _POOL_SUFFIX.sub("", thread.name))
        for tid in os.listdir("/proc/self/task"):
            now = _task_times(tid)
            if now is None:
                continue
            before = self._last.get(tid, (0.0, 0.0))
            total = self._totals[self._role.get(tid, "duckdb")]
            total[0] += now[0] - before[0]
            total[1] += now[1] - before[1]
            self._last[tid] = now

    def by_role(self) -> dict[str, tuple[float, float]]:
        return {role: (user, system) for role, (user, system) in self._totals.items()
                if role != self._sampler.name}


def print_thread_cpu(cpu: ThreadCpu) -> None:
    roles = sorted(cpu.by_role().items(), key=lambda item: -sum(item[1]))
    user = sum(u for _, (u, _) in roles)
    system = sum(s for _, (_, s) in roles)
    print(f"{'CPU':18} {user + system:.1f} s ({user:.1f} user, {system:.1f} system), by thread:")
    for role, (u, s) in roles:
        print(f"  {role:16} {u + s:6.1f} s")
