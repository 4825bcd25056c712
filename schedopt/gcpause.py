"""A short pause of Python's cyclic garbage collector around allocation-heavy phases.

The vectorised greedy and plan assembly allocate tens of thousands of small lists,
tuples and dicts at 10,000+ jobs. Each allocation counts towards the collector's
thresholds, and its full passes walk every tracked object of the process, the
instance's included: at 16,000 jobs they cost 0.6 s of a 1.7 s greedy; in a host's
loop of small calls (144 typed jobs, about 20 ms each) one lands inside every few calls
and costs 80 ms, so the typed greedy is paused from compiling to its plan. The exact
backends' Pyomo models are built paused too (an object per variable and per term: the
16,000-job typed allocation model 1.1 -> 0.2 s). These phases call no user code; what
cycles a Pyomo model holds are collected after the pause. The collector is paused for
their duration only (and only when it was enabled: a host that disabled it keeps it so).
Nested and concurrent pauses re-enable it once, when the last one ends.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic collector while the block runs (reference counting goes on)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            if _was_enabled:
                gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
