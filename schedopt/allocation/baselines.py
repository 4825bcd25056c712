"""Baseline allocation policies (Optimus §6, DL2 §6): ``drf``, ``tetris``,
``fifo``, ``srtf``. They return the same allocation Plan as the exact models,
with the LP bound (option ``bound``), so their gaps are certified too.

Every baseline grows a job along its *ladder*: PS:worker 1:1 as in the
Optimus evaluation, (k, k) for k = 1, 2, ... clamped to the roles' bounds
(one-role jobs: k tasks), keeping only configurations the job's speed allows
(a ``table`` speed with no 1:1 point climbs its measured points by task count).

- ``drf``: dominant resource fairness over jobs, work-conserving: repeatedly
  the job with the least weighted dominant share (max_r use_r / C_r / weight)
  takes its next ladder step, until no job's next step fits.
- ``tetris``: repeatedly the job with the highest packing score × remaining-time
  preference takes its next step: the score is the alignment of the step's
  demand with the free capacity (Σ_r d_r/C_r · free_r/C_r, Tetris's dot
  product), the preference is (shortest remaining time) / (this job's), both
  at the step's configuration. Work-conserving.
- ``fifo``: jobs in arrival order, each the largest ladder step that fits (its
  request is its maximum).
- ``srtf``: jobs by remaining time at their largest configuration, shortest
  first, each the largest ladder step that fits.

Each behaves as its own system by default, admission included (docs/fidelity.md):

- ``drf`` admits as progressive filling does: every job starts at share 0, so
  jobs take their first tasks in arrival order (ties by listing order, Mesos'
  sorter), each that still fits (``admission=arrival``).
- ``tetris`` admits by its own score (``admission=policy``): jobs with nothing
  yet are the furthest below their fair share, so Tetris's fairness knob serves
  them first, in the order of the packing score × remaining-time preference of
  their minimum configuration; then the running jobs grow by the same score.
- ``fifo`` admits in arrival order (``admission=arrival``); a job that does not
  fit is skipped, so head-of-line blocking is not modelled.
- ``srtf`` admits shortest remaining time first, at the largest configuration
  (``admission=shortest``).

On a cluster with accelerator types they stay blind to types, as the systems
are: each decides on the cluster as one type, then each job's tasks land on the
first type with room (``schedopt.allocation.typed.type_blind_plan``).

``admission=lp`` (the most jobs, by the admission LP, as schedopt's own
heuristics do), ``smallest`` (DESIGN.md's rule) and ``swap`` stay available as
options: improvements over the published systems, never their default.
"""

from __future__ import annotations

import heapq
import math
import time

from typing import Any

import numpy as np

from schedopt.allocation.model import AllocationModel
from schedopt.allocation.plans import heuristic_plan
from schedopt.allocation.typed import type_blind_plan
from schedopt.allocation.problem import (
    AllocationData,
    compile_allocation,
    fits,
    inverse_capacity,
    job_configurations,
    use_of,
)
from schedopt.allocation.admission import (DEFAULT_ADMISSION, admit, admit_in_order, check_admission,
                                          least_configurations)
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan
from schedopt.registry import register
from schedopt.tolerances import TINY, capacity_limit


def ladder(data: AllocationData, j: int, start: tuple[int, int]) -> list[tuple[int, int]]:
    """Job j's configurations in the order a 1:1 baseline grows it from ``start``
    (its admitted minimum): ``start``, then the 1:1 steps above it."""
    lo, hi = data.lo[j], data.hi[j]
    two = int(data.n_roles[j]) == 2
    out: list[tuple[int, int]] = [start]
    for k in range(1, int(max(hi[0], hi[1] if two else 0)) + 1):
        c = (int(min(max(k, lo[0]), hi[0])), int(min(max(k, lo[1]), hi[1])) if two else 0)
        if c[0] >= out[-1][0] and c[1] >= out[-1][1] and c != out[-1] and math.isfinite(data.time_s(j, *c)):
            out.append(c)
    if len(out) == 1 and data.jobs[j].speed.measured:  # no 1:1 point: climb the measured ones
        counts, _ = job_configurations(data, j)
        above = [tuple(int(x) for x in c) for c in counts if c[0] >= start[0] and c[1] >= start[1] and tuple(c) != start]
        above.sort(key=lambda c: (c[0] + c[1], c))
        for c in above:
            if c[0] >= out[-1][0] and c[1] >= out[-1][1]:
                out.append(c)  # type: ignore[arg-type]
    return out


class _Ladders:
    """The admitted jobs' ladders and the use of each step. ``admission``: a rule
    of :func:`~schedopt.allocation.admission.admit`, or ``order`` given (first fit
    in that order), or ``policy`` (nobody admitted yet: every job's ladder starts
    at its minimum and the policy's own order admits)."""

    def __init__(self, data: AllocationData, admission: str = DEFAULT_ADMISSION, order: list[int] | None = None):
        self.data = data
        if admission == "policy":
            admitted, start = [], least_configurations(data)
        elif order is not None:
            admitted, start = admit_in_order(data, order)
        else:
            admitted, start = admit(data, admission)
        self.admitted = admitted
        self.steps = [ladder(data, j, start[j]) if j in start else [] for j in range(data.J)]
        self.use = [np.array([use_of(data, j, c) for c in s]).reshape(len(s), data.R) for j, s in enumerate(self.steps)]
        self.limit = capacity_limit(data.cap)

    def largest_fitting(self, j: int, used: np.ndarray) -> int:
        """Index of j's largest step that fits next to ``used``; -1 if none."""
        ok = np.all(used + self.use[j] <= self.limit, axis=1)
        idx = np.flatnonzero(ok)
        return int(idx[-1]) if len(idx) else -1


def _plan(data: AllocationData, level: np.ndarray, lad: _Ladders, *, solver: str, started: float, seed: int | None,
          options: dict, bound: bool) -> Plan:
    config = {j: lad.steps[j][int(level[j])] for j in range(data.J) if level[j] >= 0}
    return heuristic_plan(AllocationModel.of_jobs(data), config, solver=solver, started=started, seed=seed, options=options,
                          metrics={"heuristic_seconds": time.perf_counter() - started}, bound=bound)


def _start(data: AllocationData, lad: _Ladders) -> tuple[np.ndarray, np.ndarray]:
    """Each job's step (0 = its admitted minimum, -1 = paused) and the use of them all."""
    level = np.full(data.J, -1)
    level[lad.admitted] = 0
    used = sum((lad.use[j][0] for j in lad.admitted), np.zeros(data.R))
    return level, used


#: DRF tie rules: equal dominant shares go to the earlier job (listing order, as Mesos'
#: sorter) or to the lower second-largest share (YARN's DominantResourceFairnessComparator)
DRF_TIE_BREAKS = ("arrival", "second-share")
#: when a job's next task does not fit: it stops growing and the others go on (the DRF
#: paper's progressive filling) or the whole filling stops (the DL2 repository's DRF)
DRF_STOPS = ("job", "first-failure")


def drf_allocate(data: AllocationData, lad: _Ladders, *, tie_break: str = "arrival", stop: str = "job") -> np.ndarray:
    """Weighted DRF progressive filling along the ladders; returns each job's step (-1 = paused)."""
    level, used = _start(data, lad)
    weight = np.array([max(float(job.weight), TINY) for job in data.jobs])
    inv_cap = inverse_capacity(data.cap)

    def key(j: int, step: int) -> tuple[float, float, float, int]:
        shares = np.sort(lad.use[j][step] * inv_cap)[::-1] / weight[j]
        second = float(shares[1]) if tie_break == "second-share" and len(shares) > 1 else 0.0
        return float(shares[0]), second, float(data.arrival[j]), j

    heap = [key(j, 0) for j in lad.admitted if len(lad.steps[j]) > 1]
    heapq.heapify(heap)
    while heap:
        j = heapq.heappop(heap)[-1]
        nxt = int(level[j]) + 1
        cur = lad.use[j][level[j]]
        if not fits(used - cur, lad.use[j][nxt], data.cap):
            if stop == "first-failure":
                break
            continue  # use only grows: this job can never take its next step
        used = used - cur + lad.use[j][nxt]
        level[j] = nxt
        if nxt + 1 < len(lad.steps[j]):
            heapq.heappush(heap, key(j, nxt))
    return level


def tetris_allocate(data: AllocationData, lad: _Ladders) -> np.ndarray:
    """Tetris-style: the best packing score × remaining-time preference moves first."""
    level, used = _start(data, lad)
    inv_cap = inverse_capacity(data.cap)
    # jobs not admitted yet whose minimum competes with the others' steps (admission=policy)
    waiting = {j for j in range(data.J) if level[j] < 0 and lad.steps[j]} if not lad.admitted else set()
    # per job: the next step's extra use (J, R) and time (J,); inactive jobs have nan
    extra = np.full((data.J, data.R), np.nan)
    t_next = np.full(data.J, np.inf)

    def refresh(j: int) -> None:
        nxt = int(level[j]) + 1
        if (level[j] < 0 and j not in waiting) or nxt >= len(lad.steps[j]):
            extra[j], t_next[j] = np.nan, np.inf
            return
        cur = lad.use[j][level[j]] if level[j] >= 0 else np.zeros(data.R)  # a waiting job's first step: its minimum
        extra[j] = lad.use[j][nxt] - cur
        t_next[j] = data.time_s(j, *lad.steps[j][nxt])

    for j in range(data.J):
        refresh(j)
    alive = np.isfinite(t_next)
    is_waiting = np.zeros(data.J, dtype=bool)
    is_waiting[list(waiting)] = True
    while alive.any():
        free = data.cap - used
        fit = alive & np.all(np.nan_to_num(extra, nan=np.inf) <= (lad.limit - used), axis=1)
        alive = fit  # use only grows: a step that does not fit now never will
        if not fit.any():
            break
        if (fit & is_waiting).any():  # fairness knob: jobs with nothing (furthest below their share) first
            fit = fit & is_waiting
        align = (np.nan_to_num(extra) * inv_cap * (free * inv_cap)).sum(axis=1)
        t_min = t_next[fit].min()
        pref = np.where(fit, t_min / np.maximum(t_next, TINY), 0.0) if t_min > 0 else fit.astype(float)
        score = np.where(fit, np.maximum(align, TINY) * pref, -np.inf)
        j = int(np.argmax(score))  # ties: lowest index
        used = used + extra[j]
        level[j] += 1
        is_waiting[j] = False
        waiting.discard(j)
        refresh(j)
        alive[j] = np.isfinite(t_next[j])
    return level


def ordered_allocate(data: AllocationData, lad: _Ladders, order: list[int]) -> np.ndarray:
    """In ``order``, each admitted job grows to its largest step that fits (the
    others keep at least their minimums)."""
    level, used = _start(data, lad)
    for j in order:
        if level[j] < 0:
            continue
        base = used - lad.use[j][0]
        k = lad.largest_fitting(j, base)
        level[j] = max(k, 0)
        used = base + lad.use[j][level[j]]
    return level


class _Baseline:
    #: the published system's own admission (its default), and rules only this baseline has
    own_admission: str = "arrival"
    extra_admissions: tuple[str, ...] = ()

    def __init__(self, *, bound: bool = True, admission: str | None = None):
        admission = self.own_admission if admission is None else admission
        check_admission(type(self).__name__.lower(), admission, self.extra_admissions)
        self.bound = bool(bound)
        self.admission = admission

    def allocate(self, data: AllocationData, lad: _Ladders) -> np.ndarray:
        raise NotImplementedError

    def admission_order(self, data: AllocationData) -> list[int] | None:
        """The queue order of this baseline's own admission rule (None: a shared rule)."""
        return None

    def options_used(self) -> dict[str, Any]:
        return {"bound": self.bound, "admission": self.admission}

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        if instance.typed:  # the published systems are blind to accelerator types (typed.py)
            return type_blind_plan(instance, lambda flat: self.solve(flat, seed=seed), solver=self.name,  # type: ignore[attr-defined]
                                   started=started, seed=seed, options=self.options_used(), bound=self.bound)
        data = compile_allocation(instance)
        lad = _Ladders(data, self.admission, self.admission_order(data))
        level = self.allocate(data, lad)
        return _plan(data, level, lad, solver=self.name, started=started, seed=seed,  # type: ignore[attr-defined]
                     options=self.options_used(), bound=self.bound)


@register("drf", problem="allocation", exact=False, backend="python", accelerator_types=True, quotas=True)
class Drf(_Baseline):
    """Weighted dominant resource fairness over jobs, work-conserving, PS:worker 1:1.

    Options for reproducing peers: ``tie_break`` ("arrival": equal dominant
    shares in listing order, as Mesos; "second-share": the lower second share
    first, as YARN) and ``stop`` ("job": a job whose next task does not fit
    stops, the others go on, as the DRF paper; "first-failure": the filling
    stops at the first task that does not fit, as the DL2 repository's DRF)."""

    def __init__(self, *, bound: bool = True, admission: str = "arrival", tie_break: str = "arrival", stop: str = "job"):
        super().__init__(bound=bound, admission=admission)
        for name, value, allowed in (("tie_break", tie_break, DRF_TIE_BREAKS), ("stop", stop, DRF_STOPS)):
            if value not in allowed:
                raise InputError("drf", f"{name}: expected one of {', '.join(allowed)}, got {value!r}")
        self.tie_break, self.stop = tie_break, stop

    def allocate(self, data: AllocationData, lad: _Ladders) -> np.ndarray:
        return drf_allocate(data, lad, tie_break=self.tie_break, stop=self.stop)

    def options_used(self) -> dict[str, Any]:
        return {**super().options_used(), "tie_break": self.tie_break, "stop": self.stop}


@register("tetris", problem="allocation", exact=False, backend="numpy", accelerator_types=True, quotas=True)
class Tetris(_Baseline):
    """Tetris: packing alignment × shortest-remaining-time preference, work-conserving, PS:worker 1:1."""

    own_admission = "policy"
    extra_admissions = ("policy",)

    def __init__(self, *, bound: bool = True, admission: str = "policy"):
        super().__init__(bound=bound, admission=admission)

    def allocate(self, data: AllocationData, lad: _Ladders) -> np.ndarray:
        return tetris_allocate(data, lad)


@register("fifo", problem="allocation", exact=False, backend="python", accelerator_types=True, quotas=True)
class Fifo(_Baseline):
    """First in, first out: each admitted job in arrival order grows to its largest fitting configuration."""

    def __init__(self, *, bound: bool = True, admission: str = "arrival"):
        super().__init__(bound=bound, admission=admission)

    def allocate(self, data: AllocationData, lad: _Ladders) -> np.ndarray:
        order = sorted(range(data.J), key=lambda j: (data.arrival[j], j))
        return ordered_allocate(data, lad, order)


@register("srtf", problem="allocation", exact=False, backend="python", accelerator_types=True, quotas=True)
class Srtf(_Baseline):
    """Shortest remaining time first (at each job's largest configuration) grows to its largest fitting configuration."""

    own_admission = "shortest"
    extra_admissions = ("shortest",)

    def __init__(self, *, bound: bool = True, admission: str = "shortest"):
        super().__init__(bound=bound, admission=admission)

    def admission_order(self, data: AllocationData) -> list[int] | None:
        if self.admission != "shortest":
            return None
        rt = [_largest_time(data, j) for j in range(data.J)]
        return sorted(range(data.J), key=lambda j: (rt[j], data.arrival[j], j))

    def allocate(self, data: AllocationData, lad: _Ladders) -> np.ndarray:
        rt = [data.seconds(j, data.time_s(j, *lad.steps[j][-1])) if lad.steps[j] else math.inf for j in range(data.J)]
        order = sorted(range(data.J), key=lambda j: (rt[j], data.arrival[j], j))
        return ordered_allocate(data, lad, order)


def _largest_time(data: AllocationData, j: int) -> float:
    """Job j's remaining time at its largest allowed configuration (s; inf if none)."""
    counts, cost = job_configurations(data, j)
    if not len(counts):
        return math.inf
    k = int(np.lexsort((cost, -counts.sum(axis=1)))[0])  # the most tasks, then the least time
    return data.seconds(j, float(cost[k]))  # seconds whatever the objective
