"""SLAQ §2: quality-driven allocation (problem ``quality``).

    maximize   Σ_j Loss_j(a_j, t) - Loss_j(a_j, t + T)
    subject to Σ_j a_j · d_j <= C          (per resource; SLAQ: cores, d_j = 1)
               a_j integer in the role's [min, max]

Loss_j is the job's predicted *normalised* loss (``loss_curve``: 1 = the
largest loss seen), a_j the count of its single role (executors, cores) and
the steps it makes in T = ``policy.horizon_s`` are T · f_j(a_j) with
f_j the job's speed form. So the term of job j is

    R_j(a) = l_j(k_j) - l_j(k_j + T·f_j(a))

Admission as everywhere (DESIGN.md): when not every job fits at its minimum,
admit the most jobs first (smallest dominant demand first for the greedy,
exactly for the MILP), then maximise Σ R_j.

``slaq-greedy`` is the paper's algorithm: every admitted job starts at its
minimum (SLAQ: one core, against starvation), then repeatedly the job whose
next unit gives the highest predicted reduction (per dominant share of one
unit, which is the plain reduction for SLAQ's cores) gets it, until nothing
fits. With one resource, equal unit demands and concave R_j the greedy is
optimal (marginal allocation for separable concave objectives); otherwise its
gap to ``slaq-milp`` is measured, and it always carries the LP bound.

``slaq-milp``/``slaq-cpsat`` are the exact multiple-choice model over each
job's count, solved by the same lexicographic driver as the Optimus models
with cost = -R_j (so ``time_s`` below returns a cost, not a time).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from schedopt.allocation.cpsat import _CpSatBackend
from schedopt.allocation.exact import solve_exact
from schedopt.allocation.lagrange import solve_lp
from schedopt.allocation.milp import _HighsBackend
from schedopt.allocation.problem import (
    FIT_TOL,
    AllocationData,
    admit_smallest_first,
    admitted_upper_bound,
    build_plan,
    enumerate_choices,
)
from schedopt.errors import FieldProblem, InputError
from schedopt.instance import Instance
from schedopt.plan import Plan, Status, Termination
from schedopt.registry import register

OBJECTIVE_NAME = "total_loss_reduction"
StopRule = Literal["skip", "paper"]


@dataclass
class QualityData(AllocationData):
    """Allocation arrays whose cost is -R_j(a) (normalised loss units).

    ``horizon_s``: SLAQ's T in seconds."""

    horizon_s: float = 60.0

    def time_s(self, j: int, c0: Any, c1: Any) -> Any:
        """Cost -R_j(c0) (scalar or array); inf where the count is not allowed."""
        job = self.jobs[j]
        step = job.speed.step_time_s(c0, c1)
        if np.isscalar(step):
            step = float(step)
            if not math.isfinite(step) or step <= 0:
                return math.inf
            return -float(job.loss_curve.reduction(self.horizon_s / step))
        step = np.asarray(step, dtype=float)
        ok = np.isfinite(step) & (step > 0)
        ahead = np.divide(self.horizon_s, step, out=np.zeros_like(step), where=ok)
        return np.where(ok, -np.asarray(job.loss_curve.reduction(ahead), dtype=float), np.inf)


def compile_quality(instance: Instance) -> QualityData:
    """Arrays for the quality problem; raises :class:`InputError` naming each job
    that lacks what it needs (one role, a one-role speed form, a loss curve)."""
    problems = []
    for i, job in enumerate(instance.jobs):
        if len(job.roles) != 1:
            problems.append(FieldProblem(f"jobs[{i}].roles", "the quality problem allocates one role per job"))
        if job.speed is None:
            problems.append(FieldProblem(f"jobs[{i}].speed", "required by the quality problem (or speed_samples)"))
        if job.loss_curve is None:
            problems.append(FieldProblem(f"jobs[{i}].loss_curve", "required by the quality problem (or loss_history)"))
    if problems:
        raise InputError(instance.source, problems)
    J, R = len(instance.jobs), len(instance.resources)
    lo = np.zeros((J, 2), dtype=np.int64)
    hi = np.zeros((J, 2), dtype=np.int64)
    demand = np.zeros((J, 2, R))
    for i, job in enumerate(instance.jobs):
        role = job.roles[job.role_names[0]]
        lo[i, 0], hi[i, 0] = role.min, role.max_count
        demand[i, :1] = instance.role_demand(job)
    cap = instance.capacity_total.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(demand > 0, demand / cap, 0.0).max(axis=2) if R else np.zeros((J, 2))
    return QualityData(
        instance=instance, jobs=list(instance.jobs), n_roles=np.ones(J, dtype=int), lo=lo, hi=hi, demand=demand,
        Q=np.zeros(J), cap=cap, share=share, arrival=np.array([j.arrival for j in instance.jobs]),
        problem="quality", objective_name=OBJECTIVE_NAME, sense="max", horizon_s=instance.horizon_s,
    )


# ---- the greedy -------------------------------------------------------------------------------

def _moves(data: QualityData, start: dict[int, tuple[int, int]]) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """Each started job's moves: (job, count after the move, gain per unit share, units added).

    A move goes to the next allowed count (the next unit; the next measured
    point of a table). A job's path ends at its max, at the most units its
    demand could ever fit beside the start, or before the first move that
    gains nothing."""
    used = sum((start[j][0] * data.demand[j, 0] for j in start), np.zeros(data.R))
    free = data.cap * (1 + FIT_TOL) - used
    out = []
    for j in sorted(start):
        n0, d = start[j][0], data.demand[j, 0]
        room = int(data.hi[j, 0] - n0)
        pos = d > 0
        if pos.any():
            room = min(room, int(np.floor(np.min(free[pos] / d[pos]) + 1e-9)))
        if room <= 0:
            continue
        counts = np.arange(n0, n0 + room + 1)
        cost = np.asarray(data.time_s(j, counts, 0), dtype=float)
        allowed = np.isfinite(cost)
        counts, cost = counts[allowed], cost[allowed]
        units = np.diff(counts)
        gain = (cost[:-1] - cost[1:]) / units  # per unit: (R(n') - R(n)) / (n' - n)
        bad = ~(gain > 0)
        if bad.any():
            gain, units = gain[: int(np.argmax(bad))], units[: int(np.argmax(bad))]
        if len(gain) == 0:
            continue
        share = float(data.share[j, 0])
        per_share = gain / share if share > 0 else np.full(len(gain), np.inf)
        out.append((j, counts[1: len(gain) + 1], per_share, units))
    return out


def slaq_greedy(data: QualityData, start: dict[int, tuple[int, int]], *,
                stop_rule: StopRule = "skip") -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """SLAQ's greedy from ``start`` (job -> (a_j, 0)), vectorised; the same plan as
    :func:`slaq_greedy_heap`. The heap's pops visit units in order of each unit's
    running-minimum gain along its job's path (ties by job, then unit), so one
    sort replaces the heap; units are then taken in that order while they fit
    (``skip``: a job whose next unit does not fit stops; ``paper``: all stop)."""
    config = {j: [c[0], c[1]] for j, c in start.items()}
    moves = _moves(data, start)
    added = dropped = 0
    if moves:
        job = np.concatenate([np.full(len(n), j, dtype=np.int64) for j, n, _, _ in moves])
        count = np.concatenate([n for _, n, _, _ in moves])
        units = np.concatenate([u for _, _, _, u in moves])
        running = np.concatenate([np.minimum.accumulate(g) for _, _, g, _ in moves])
        step = np.concatenate([np.arange(len(n)) for _, n, _, _ in moves])
        order = np.lexsort((step, job, -running))
        job, count, units = job[order], count[order], units[order]
        use = data.demand[job, 0] * units[:, None]  # (moves, R)
        limit = data.cap * (1 + FIT_TOL) + FIT_TOL
        used = sum((start[j][0] * data.demand[j, 0] for j in start), np.zeros(data.R))
        # the prefix that fits as a whole is taken at once
        over = np.any(used + np.cumsum(use, axis=0) > limit, axis=1)
        first = int(np.argmax(over)) if over.any() else len(job)
        for j, n in zip(job[:first].tolist(), count[:first].tolist()):
            config[j][0] = n
        added = int(units[:first].sum())
        used = used + use[:first].sum(axis=0)
        stopped: set[int] = set()
        if first < len(job) and stop_rule == "skip":
            smallest = use[first:].min(axis=0)
            for i in range(first, len(job)):
                if np.any(used + smallest > limit):
                    break  # nothing left can fit
                j = int(job[i])
                if j in stopped:
                    continue
                if np.all(used + use[i] <= limit):
                    used += use[i]
                    config[j][0] = int(count[i])
                    added += int(units[i])
                else:
                    stopped.add(j)
        dropped = len(stopped) if stop_rule == "skip" else int(first < len(job))
    return {j: (c[0], c[1]) for j, c in config.items()}, {"units_added": added, "jobs_stopped_by_capacity": dropped}


def slaq_greedy_heap(data: QualityData, start: dict[int, tuple[int, int]], *,
                     stop_rule: StopRule = "skip") -> dict[int, tuple[int, int]]:
    """The literal algorithm with a heap (the reference the vectorised greedy is tested against)."""
    config = {j: c[0] for j, c in start.items()}
    paths = {j: (counts, gains, units) for j, counts, gains, units in _moves(data, start)}
    used = sum((start[j][0] * data.demand[j, 0] for j in start), np.zeros(data.R))
    limit = data.cap * (1 + FIT_TOL) + FIT_TOL
    heap = [(-float(g[0]), j, 0) for j, (_, g, _) in paths.items()]
    heapq.heapify(heap)
    while heap:
        _, j, i = heapq.heappop(heap)
        counts, gains, units = paths[j]
        d = data.demand[j, 0] * units[i]
        if np.any(used + d > limit):
            if stop_rule == "paper":
                break
            continue  # skip: this job takes no more
        used = used + d
        config[j] = int(counts[i])
        if i + 1 < len(gains):
            heapq.heappush(heap, (-float(gains[i + 1]), j, i + 1))
    return {j: (n, 0) for j, n in config.items()}


@register("slaq-greedy", problem="quality", exact=False, backend="numpy")
class SlaqGreedy:
    """SLAQ §2 quality-driven greedy (one unit at a time to the highest predicted
    loss reduction), with the LP-relaxation bound."""

    def __init__(self, *, stop_rule: StopRule = "skip", bound: bool = True):
        if stop_rule not in ("skip", "paper"):
            raise InputError("slaq-greedy", f'stop_rule: expected "skip" or "paper", got {stop_rule!r}')
        self.stop_rule = stop_rule
        self.bound = bool(bound)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_quality(instance)
        admitted, start = admit_smallest_first(data)
        config, counters = slaq_greedy(data, start, stop_rule=self.stop_rule)
        greedy_s = time.perf_counter() - started
        bound = admitted_bound = None
        if self.bound:
            admitted_bound = admitted_upper_bound(data) if len(admitted) < data.J else data.J
            if admitted_bound == len(admitted):
                # the LP bound by column generation (with an admission row when some jobs are paused)
                cs = enumerate_choices(data)
                bound = solve_lp(data, cs, admit=None if len(admitted) == data.J else len(admitted)).bound if admitted else 0.0
        status = Status.HEURISTIC if admitted or data.J == 0 else Status.INFEASIBLE
        return build_plan(
            data, solver=self.name, config=config, status=status,
            termination=Termination.COMPLETED if status == Status.HEURISTIC else Termination.INFEASIBLE,
            started=started, bound=bound, admitted_bound=admitted_bound, seed=seed,
            options={"stop_rule": self.stop_rule, "bound": self.bound},
            metrics={**counters, "heuristic_seconds": greedy_s},
        )


def _greedy_incumbent(data: AllocationData, start: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    assert isinstance(data, QualityData)
    return slaq_greedy(data, start)[0]


@register("slaq-milp", problem="quality", exact=True, backend="pyomo+highs", supports_time_limit=True)
class SlaqMilp:
    """Exact multiple-choice model of SLAQ's allocation over each job's count (Pyomo + HiGHS)."""

    def __init__(self, *, rel_gap: float = 1e-7, threads: int = 1):
        self.rel_gap = float(rel_gap)
        self.threads = int(threads)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        return solve_exact(_HighsBackend(self.rel_gap, self.threads), self.name, instance, time_limit=time_limit,
                           seed=seed, options={"rel_gap": self.rel_gap, "threads": self.threads},
                           compile=compile_quality, heuristic=_greedy_incumbent)


@register("slaq-cpsat", problem="quality", exact=True, backend="cp-sat", supports_time_limit=True)
class SlaqCpSat:
    """The same model in OR-Tools CP-SAT (reductions integer-scaled; the bound accounts for it)."""

    def __init__(self, *, workers: int = 1):
        self.workers = int(workers)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        return solve_exact(_CpSatBackend(self.workers), self.name, instance, time_limit=time_limit, seed=seed,
                           options={"workers": self.workers}, compile=compile_quality, heuristic=_greedy_incumbent)
