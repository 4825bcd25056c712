"""One clock for a time-limited solve, shared by the exact drivers (allocation,
placement, partition): when it started, how much is left, whether a phase that
costs a known number of seconds still fits."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


#: the deadline contract: a call returns within T + max(OVERRUN_FLOOR_S, OVERRUN_SHARE · T)
OVERRUN_FLOOR_S, OVERRUN_SHARE = 0.3, 0.15
#: proof searches after a solve (allocation's branch certificates, placement's pattern-branch) are
#: budgeted in node LPs, not seconds (branching.node_lp_budget, relaxation.branch_nodes): the same
#: instance gets the same certificate on any machine; only a caller's time limit stops them sooner


@dataclass
class Deadline:
    """``limit_s`` seconds (None: no limit) from ``started`` (``time.perf_counter()``)."""

    limit_s: float | None
    started: float = field(default_factory=time.perf_counter)
    reserved_s: float = 0.0  # kept back by reserve(): the limit the caller gave is limit_s + reserved_s

    @property
    def at(self) -> float | None:
        """The perf_counter time the limit falls at (None: never)."""
        return None if self.limit_s is None else self.started + self.limit_s

    def spent(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.started

    def remaining(self) -> float | None:
        """Seconds left (may be <= 0), None without a limit."""
        return None if self.limit_s is None else self.limit_s - self.spent()

    def left(self, floor: float = 1e-3) -> float | None:
        """Seconds left for a backend call, at least ``floor``; None without a limit."""
        rem = self.remaining()
        return None if rem is None else max(floor, rem)

    def reserve(self, seconds: float) -> None:
        """Keep ``seconds`` at the end for work after the last phase (assembling and
        checking the plan): the phases see a limit that much earlier (never below 0)."""
        if self.limit_s is not None:
            kept = min(self.limit_s, max(0.0, seconds))
            self.limit_s -= kept
            self.reserved_s += kept

    def expired(self) -> bool:
        rem = self.remaining()
        return rem is not None and rem <= 0

    def affords(self, seconds: float) -> bool:
        """Whether a phase expected to take ``seconds`` fits in the time left."""
        rem = self.remaining()
        return rem is None or rem >= seconds

    def affords_within_tolerance(self, seconds: float, share: float = 0.5) -> bool:
        """Whether a phase expected to take ``seconds`` fits when the call may end ``share``
        of the documented tolerance past the limit, max(0.3 s, 15 %) of it (DESIGN.md's
        deadline contract): for the one phase a plan must not go without, its certified bound."""
        rem = self.remaining()
        if rem is None:
            return True
        tolerance = max(OVERRUN_FLOOR_S, OVERRUN_SHARE * (self.limit_s + self.reserved_s))
        return rem + share * tolerance >= seconds


#: the clock of a call without a time limit (a search given no clock runs to its own end)
NO_LIMIT = Deadline(None, 0.0)


def check_time_limit(time_limit: object, who: str) -> None:
    """``time_limit``: None (no limit) or a finite number of seconds >= 0. Zero
    asks for the best plan available now: the heuristic incumbent (a host passes
    what is left of its round, which may be nothing)."""
    import math

    from schedopt.errors import InputError

    if time_limit is None:
        return
    if not (isinstance(time_limit, (int, float)) and not isinstance(time_limit, bool) and math.isfinite(time_limit)
            and time_limit >= 0):
        raise InputError(who, f"time_limit: expected a number of seconds >= 0, got {time_limit!r}")
