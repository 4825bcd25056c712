"""What no scheduler can beat in the simulator: clairvoyant lower bounds on the JCT.

Two bounds, each holding for every scheduler's run of :func:`schedopt.sim.simulate` whose
true speeds are the instance's (the simulator's default truth: no ``error_*``, no
``interference``, no placement solver, whose communication model can change a PS job's
speed). Both use the least the job's work can take on the cluster:

*Alone.* A job arriving at a_j is first planned at the tick r_j = ⌈a_j / Δ⌉·Δ (the
simulator's grid), loses the restart overhead ρ at its first start, then runs its Q_j
steps at best at its least step time over the types and its counts
(``allocation.objectives.best_training_s``: t*_j, no capacity). So, in seconds,

    JCT_j >= r_j − a_j + ρ + t*_j,                                  (per job)

*Pooled capacity.* Whatever the types, at no instant does the cluster hold more than
C_r of resource r. Job j occupies at least w_jr = min over its types and counts of
d_r(c)·(Q_j·step(c) + ρ) units·seconds of it (d_r(c) its configuration's use of r). Seen
as one machine of rate C_r, every run is a preemptive schedule of jobs of length w_jr/C_r
released at r_j, so Σ_j C_j is at least what shortest-remaining-processing-time achieves
there (optimal for 1|r_j, pmtn|Σ C_j; processor sharing included). More: SRPT leaves the
fewest jobs in the system at every instant (Schrage 1968), so its k-th completion is the
earliest any run's k-th completion can be; and the run's k-th completion is also at least the
k-th smallest of the per-job bounds a_j + JCT_j. The average-JCT bound sums, completion by
completion, the larger of the two: at least the mean of either bound alone.

They make a goal such as "10 % below another policy's average JCT" checkable: when the
bound is within 10 % of that policy's average, no scheduler meets it.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from schedopt.allocation.objectives import best_training_s, job_step_times
from schedopt.instance import Instance, Job


def _first_ticks_s(workload: Instance, interval_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(arrival a_j, first tick r_j) per job, seconds, shapes (J,)."""
    arrival_s = np.array([float(j.arrival) for j in workload.jobs], dtype=float)
    return arrival_s, np.ceil(arrival_s / interval_s) * interval_s


def jct_lower_bounds_s(workload: Instance, *, interval_s: float, restart_overhead_s: float = 60.0) -> np.ndarray:
    """Per job of ``workload`` (shape (J,), seconds): r_j − a_j + ρ + t*_j, the JCT no
    scheduler's run beats; ``inf`` for a job that can run nowhere."""
    arrival_s, tick_s = _first_ticks_s(workload, interval_s)
    alone_s = np.array([best_training_s(workload, j) for j in workload.jobs], dtype=float)
    return tick_s - arrival_s + restart_overhead_s + alone_s


def _least_occupancy(workload: Instance, job: Job, restart_overhead_s: float) -> np.ndarray:
    """(R,): min over the job's types and counts of d_r(c)·(Q_j·step(c) + ρ), units·seconds (inf: cannot run)."""
    out = np.full(len(workload.resources), math.inf)
    if job.remaining_steps is None:
        return out
    c0, c1, step = job_step_times(workload, job)  # (n,), (n,), (types, n)
    demand = workload.role_demand(job)  # (roles, R)
    use = c0[:, None] * demand[0][None, :] + (c1[:, None] * demand[1][None, :] if len(demand) == 2 else 0.0)
    for on in step:
        ok = np.isfinite(on)
        if ok.any():
            busy_s = float(job.remaining_steps) * on[ok] + restart_overhead_s
            out = np.minimum(out, (use[ok] * busy_s[:, None]).min(axis=0))
    return out


def _srpt_completions(release: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The completion times of shortest-remaining-processing-time on one machine (preemptive,
    release dates), in the order they happen, shape (n,). SRPT leaves the fewest jobs in the
    system at every instant (Schrage 1968), so its k-th completion is the earliest any schedule's
    k-th completion can be."""
    order = np.argsort(release, kind="stable")
    heap: list[tuple[float, int]] = []
    done: list[float] = []
    t, i, n = 0.0, 0, len(order)
    while i < n or heap:
        if not heap:
            t = max(t, float(release[order[i]]))
        while i < n and release[order[i]] <= t:
            heapq.heappush(heap, (float(length[order[i]]), int(order[i])))
            i += 1
        left, j = heapq.heappop(heap)
        nxt = float(release[order[i]]) if i < n else math.inf
        if t + left <= nxt:
            t += left
            done.append(t)
        else:  # runs until the next release, then competes again
            heapq.heappush(heap, (left - (nxt - t), j))
            t = nxt
    return np.array(done, dtype=float)


def avg_jct_lower_bound_s(workload: Instance, *, interval_s: float, restart_overhead_s: float = 60.0) -> float:
    """A lower bound on any run's ``avg_jct_s`` when every job that can run finishes (seconds): the
    mean per-job bound (:func:`jct_lower_bounds_s`) and, per resource, the pooled capacity's SRPT
    bound (module docstring), joined completion by completion: the k-th earliest completion of any
    run is at least both the k-th earliest of the per-job bounds a_j + JCT_j and the k-th SRPT
    completion, so Σ_k max of the two (at least either sum) bounds Σ_j C_j. NaN when no job can run."""
    alone = jct_lower_bounds_s(workload, interval_s=interval_s, restart_overhead_s=restart_overhead_s)
    runs = np.isfinite(alone)
    if not runs.any():
        return float("nan")
    best = float(alone[runs].mean())
    arrival_s, tick_s = _first_ticks_s(workload, interval_s)
    earliest = np.sort(arrival_s[runs] + alone[runs])  # each job's completion bound, k-th earliest first
    occupancy = np.array([_least_occupancy(workload, j, restart_overhead_s) for j in workload.jobs]).reshape(
        len(workload.jobs), len(workload.resources))[runs]
    capacity = workload.capacity_total
    for r in range(len(workload.resources)):
        if capacity[r] <= 0 or not np.all(np.isfinite(occupancy[:, r])) or not np.any(occupancy[:, r] > 0):
            continue
        srpt = _srpt_completions(tick_s[runs], occupancy[:, r] / capacity[r])
        total = float(np.maximum(srpt, earliest).sum())
        best = max(best, (total - float(arrival_s[runs].sum())) / int(runs.sum()))
    return best
