"""What no scheduler can beat in the simulator: a clairvoyant lower bound on each job's JCT.

A job arriving at a_j is first planned at the tick ⌈a_j / Δ⌉·Δ (the simulator's grid,
:mod:`schedopt.sim.simulator`), loses the restart overhead at its first start, and
then runs its Q_j steps at best at its least step time over the cluster's types and
its counts (``allocation.objectives.best_training_s``: the job alone, no capacity).
So, in seconds,

    JCT_j >= ⌈a_j / Δ⌉·Δ − a_j + restart_overhead_s + t*_j,

whatever the scheduler. The bound holds for runs whose true speeds are the
instance's (the simulator's default truth: no ``error_*``, no ``interference``, no
placement solver, whose communication model can change a PS job's speed). It is
what makes a goal such as "10 % below another policy's average JCT" checkable: when
the bound's average is within 10 % of that policy's, the goal is out of reach.
"""

from __future__ import annotations

import numpy as np

from schedopt.allocation.objectives import best_training_s
from schedopt.instance import Instance


def jct_lower_bounds_s(workload: Instance, *, interval_s: float, restart_overhead_s: float = 60.0) -> np.ndarray:
    """Per job of ``workload`` (shape (J,), seconds): the JCT no scheduler can beat in
    :func:`schedopt.sim.simulate` with this interval and restart overhead; ``inf`` for a
    job that can run nowhere."""
    arrival_s = np.array([float(j.arrival) for j in workload.jobs], dtype=float)
    first_tick_s = np.ceil(arrival_s / interval_s) * interval_s
    alone_s = np.array([best_training_s(workload, j) for j in workload.jobs], dtype=float)
    return first_tick_s - arrival_s + restart_overhead_s + alone_s


def avg_jct_lower_bound_s(workload: Instance, *, interval_s: float, restart_overhead_s: float = 60.0) -> float:
    """The mean of :func:`jct_lower_bounds_s` over the jobs that can run (seconds): a lower
    bound on any run's ``avg_jct_s`` when every job finishes."""
    lb = jct_lower_bounds_s(workload, interval_s=interval_s, restart_overhead_s=restart_overhead_s)
    lb = lb[np.isfinite(lb)]
    return float(lb.mean()) if len(lb) else float("nan")
