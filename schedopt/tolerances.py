"""The library's numerical tolerances, in one place (issue 49 §3).

Every capacity comparison (solvers deciding what fits, the checker deciding what
is feasible, certificates' replays) uses :func:`capacity_limit`, so a plan a
solver calls feasible is one the checker accepts and a bound the checker replays
covers it. Every "is this better?" goes through :func:`improves` / :func:`worse`,
every LP count through :func:`floor_count`. No other module writes a tolerance
as a literal (``tests/test_layout.py`` greps for them).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# ---- what fits ---------------------------------------------------------------------------
#: relative slack on a capacity C: a load up to C + FIT_TOL·max(1, C) fits
FIT_TOL = 1e-9
#: a scaled quantity within this of an integer is that integer (CP-SAT scaling, packing patterns)
INTEGRAL_TOL = 1e-9

# ---- what the checker accepts -------------------------------------------------------------
#: relative tolerance when the checker compares a reported number with its recomputation
REL_TOL = 1e-6
#: "optimal" means a gap of at most this (relative), for every problem
OPTIMAL_GAP = 1e-4
#: a relaxation's bound past a feasible plan's value by at most this (relative) is rounding;
#: further, it is a bug and no bound is stated
BOUND_NOISE = 1e-7
#: an exact plan within this relative gap of the LP bound states the LP bound (which its
#: certificate proves) rather than the backend's tighter one (which only the backend vouches for,
#: kept in ``metrics.backend_bound``): ten times below OPTIMAL_GAP, two orders above the backends'
#: own MIP_REL_GAP (dl2's 1,000-job optima sit 1-3e-6 above their LP bound)
REPLAYABLE_GAP = 1e-5
#: a ``pattern-threshold`` replay counts a shape whose computed cost is below τ·(1 + THRESHOLD_TOL)
#: as below τ (a superset of those truly below); a solver proving "max T_j >= c" for a shape cost c
#: states τ = c·(1 − 2·THRESHOLD_TOL), so that shape stays out
THRESHOLD_TOL = 1e-9

# ---- better, counts, LP values ------------------------------------------------------------
#: a value improves on ``old`` only when lower by more than IMPROVE_TOL·max(1, |old|): sums of
#: times that differ by rounding are ties (local searches, repairs, incumbents, reduced costs)
IMPROVE_TOL = 1e-9
#: an LP's count (admitted jobs, containers) is rounded down after adding this: 4.9999997 is 5
COUNT_TOL = 1e-6
#: an LP variable counts as 0 at or below LP_ZERO and as 1 at or above 1 - LP_ZERO
LP_ZERO = 1e-6
#: float rounding: divisions by max(TINY, x), ratios to 1 within TINY, zero within TINY
TINY = 1e-12

# ---- targets of solves and searches ----------------------------------------------------------
#: the exact backends' default relative gap (``rel_gap`` of the MILP solvers); an incumbent this
#: close to the LP bound is returned as optimal without the stage-2 model
MIP_REL_GAP = 1e-7
#: the Lagrangian dual's default convergence (relative gap between its bound and the master's)
DUAL_REL_TOL = 1e-4
#: ... and when the exact driver needs the dual's prices for reduced-cost fixing
DUAL_FIXING_REL_TOL = 1e-9
#: the rounding at θ·λ stops bisecting when θ's interval is this narrow (relative)
BISECTION_TOL = 1e-6
#: a neighbourhood's exact repair stops at this relative gap
REPAIR_REL_GAP = 1e-5
#: a plan the dual proves this close (relative) needs no repair (issue 38's 0.01 %)
REPAIR_SKIP_GAP = 1e-4
#: the typed greedy's candidate search ends at a plan the LP's (or the size classes') bound certifies
#: within this (relative): a further candidate could win at most that much, and each costs 20-60 ms at
#: 100-200 typed jobs (the same 0.01 %)
SEARCH_STOP_GAP = REPAIR_SKIP_GAP
#: a typed heuristic's plan the LP's prices certify within this (relative) gets no further search:
#: neither relocating moves nor the knapsack bound (issue 50's "within 1 %")
SETTLED_GAP = 1e-2
#: a branch search targets the incumbent's value less this relative margin (within OPTIMAL_GAP)
BRANCH_TARGET_MARGIN = 1e-6
#: a heuristic plan's certified gap above which it searches a branch certificate
#: (``allocation/plans.plan_bounds``, ``branch_budget_s``); below it the LP's bound is kept
BRANCH_ABOVE_GAP = 1e-4
#: Dorm: a class round stops at this relative gap (the packing loses far more)
DORM_ROUND_GAP = 1e-4
#: Dorm's column generation: a column enters when its reduced cost is below -PRICE_TOL
PRICE_TOL = 1e-7
#: placement's exact models: the absolute gap of a stage whose objective is a count
COUNT_ABS_GAP = 1e-9

# ---- elsewhere ----------------------------------------------------------------------------------
#: the simulator's zero: a share, or a remaining step count, at most this is none
SIM_ZERO = 1e-9
#: the loss-curve fits keep their positive parameters at least this (convergence.py)
CURVE_PARAM_FLOOR = 1e-9


def capacity_limit(cap: Any) -> Any:
    """The most load that fits a capacity ``cap`` (scalar or array): C + FIT_TOL·max(1, C)."""
    return cap + FIT_TOL * np.maximum(1.0, cap)


def improves(new: float, old: float) -> bool:
    """Whether ``new`` is lower than ``old`` by more than rounding (IMPROVE_TOL·max(1, |old|))."""
    return new < old - IMPROVE_TOL * max(1.0, abs(old))


def worse(new: float, ref: float) -> bool:
    """Whether ``new`` is higher than ``ref`` by more than rounding (IMPROVE_TOL·max(1, |ref|))."""
    return new > ref + IMPROVE_TOL * max(1.0, abs(ref))


def with_ties(x: Any) -> Any:
    """``x`` raised by rounding (IMPROVE_TOL·max(1, |x|)): a threshold that keeps the values tied with it."""
    return x + IMPROVE_TOL * np.maximum(1.0, np.abs(x))


def floor_count(x: Any) -> Any:
    """An LP's count rounded down (COUNT_TOL added first); an int for a scalar, int64 for an array."""
    if np.ndim(x) == 0:
        return int(math.floor(float(x) + COUNT_TOL))
    return np.floor(np.asarray(x) + COUNT_TOL).astype(np.int64)
