"""The library's numerical tolerances, in one place.

Every capacity comparison (solvers deciding what fits, the checker deciding what
is feasible, certificates' replays) uses :func:`capacity_limit`, so a plan a
solver calls feasible is one the checker accepts and a bound the checker replays
covers it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: relative slack on a capacity C: a load up to C + FIT_TOL·max(1, C) fits
FIT_TOL = 1e-9
#: relative tolerance when the checker compares a reported number with its recomputation
REL_TOL = 1e-6
#: a relaxation's bound past a feasible plan's value by at most this (relative) is rounding;
#: further, it is a bug and no bound is stated
BOUND_NOISE = 1e-7
#: an exact plan within this relative gap of the LP bound states the LP bound (which its
#: certificate proves) rather than the backend's tighter one (which only the backend vouches for)
REPLAYABLE_GAP = 1e-6


def capacity_limit(cap: Any) -> Any:
    """The most load that fits a capacity ``cap`` (scalar or array): C + FIT_TOL·max(1, C)."""
    return cap + FIT_TOL * np.maximum(1.0, cap)
