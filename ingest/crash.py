"""Named points where a test can have the process killed (SIGKILL), to prove a run resumes from anywhere.

Set CTMIRROR_CRASH_AT=<point>:<n> to die the n-th time <point> is reached. Unset (always, outside the
crash tests), a point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

_reached: Counter[str] = Counter()


def crash_point(name: str) -> None:
    spec = os.environ.get("CTMIRROR_CRASH_AT")
    if not spec:
        return
    point, _, nth = spec.partition(":")
    if point != name:
        return
    _reached[name] += 1
    if _reached[name] == int(nth or "1"):
        os.kill(os.getpid(), signal.SIGKILL)
