"""The fast suite's cost: runs `pytest -m "not slow"` and prints its wall time and the CPU time it took (its own
process and every process it started), the figure the one-minute goal is about.

    python bench/fast_suite_cpu.py [extra pytest arguments]
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time


def main() -> int:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-m", "not slow", "-q", "-p", "no:cacheprovider",
                           *sys.argv[1:]])
    wall = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"fast suite: {wall:.1f} s wall, {usage.ru_utime + usage.ru_stime:.1f} s CPU "
          f"({usage.ru_utime:.1f} user, {usage.ru_stime:.1f} system); pytest exit {done.returncode}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
