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
from schedopt.allocation.milp import _HighsBackend
from schedopt.allocation.problem import (
    FIT_TOL,
    AllocationData,
    admit_smallest_first,
    role_arrays,
)
from schedopt.convergence import LossCurve
from schedopt.errors import FieldProblem, InputError
from schedopt.instance import Instance
from schedopt.allocation.lagrange import heuristic_plan
from schedopt.plan import Plan
from schedopt.registry import register
from schedopt.speed import FORMULA_FORMS

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


    def costs(self, jobs: np.ndarray, owner: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Cost -R of many (job, count) pairs at once: job ``jobs[owner[i]]`` with
        ``counts[i]`` units (flat arrays). Jobs with a formula speed are evaluated
        together per (form, curve family); tables one job at a time."""
        out = np.full(len(counts), np.inf)
        kinds: dict[tuple[type, str], list[int]] = {}
        for i, j in enumerate(jobs.tolist()):
            job = self.jobs[j]
            kinds.setdefault((type(job.speed), job.loss_curve.family), []).append(i)
        for (form, family), members in kinds.items():
            rows = np.isin(owner, members)
            if not isinstance(self.jobs[int(jobs[members[0]])].speed, FORMULA_FORMS):
                for i in members:  # owner is sorted: job i's pairs are one slice
                    at = slice(int(np.searchsorted(owner, i)), int(np.searchsorted(owner, i, side="right")))
                    out[at] = self.time_s(int(jobs[i]), counts[at], 0)
                continue
            idx = np.full(len(jobs), -1)
            idx[members] = np.arange(len(members))
            sel = idx[owner[rows]]
            speed_p = np.array([self.jobs[int(jobs[i])].speed.params() for i in members], dtype=float)[sel]
            curve_p = np.array([self.jobs[int(jobs[i])].loss_curve.params for i in members], dtype=float)[sel]
            k0 = np.array([self.jobs[int(jobs[i])].loss_curve.step for i in members], dtype=float)[sel]
            step = np.asarray(form.formula(*speed_p.T, counts[rows].astype(float), 0.0), dtype=float)
            good = np.isfinite(step) & (step > 0)
            ahead = np.divide(self.horizon_s, step, out=np.zeros_like(step), where=good)
            with np.errstate(over="ignore", invalid="ignore"):
                red = LossCurve.formula(family, curve_p.T, k0) - LossCurve.formula(family, curve_p.T, k0 + ahead)
            out[rows] = np.where(good, -red, np.inf)
        return out


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
    return QualityData(**role_arrays(instance), Q=np.zeros(len(instance.jobs)), problem="quality",
                       objective_name=OBJECTIVE_NAME, sense="max", horizon_s=instance.horizon_s)


# ---- the greedy -------------------------------------------------------------------------------

def _segment_starts(owner: np.ndarray) -> np.ndarray:
    """Start index of each run of equal ``owner`` values (owner sorted)."""
    return np.flatnonzero(np.concatenate([[True], owner[1:] != owner[:-1]])) if len(owner) else np.zeros(0, dtype=np.int64)


def _moves(data: QualityData, start: dict[int, tuple[int, int]]) -> tuple[np.ndarray, ...]:
    """Every started job's moves, flat and grouped by job in job order:
    (job, count after the move, gain per unit share, units added, running
    minimum of the gain along the job's path, step along the path).

    A move goes to the next allowed count (the next unit; the next measured
    point of a table). A job's path ends at its max, at the most units its
    demand could ever fit beside the start, or before the first move that
    gains nothing."""
    jobs = np.array(sorted(start), dtype=np.int64)
    n0 = np.array([start[j][0] for j in jobs], dtype=np.int64)
    d = data.demand[jobs, 0]  # (S, R)
    free = data.cap * (1 + FIT_TOL) - (n0[:, None] * d).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(d > 0, free / d, np.inf).min(axis=1) if data.R else np.full(len(jobs), np.inf)
    room = data.hi[jobs, 0] - n0
    room = np.where(np.isfinite(fit), np.minimum(room, np.floor(np.maximum(fit, -1) + 1e-9)), room).astype(np.int64)
    keep = room > 0
    jobs, n0, room = jobs[keep], n0[keep], room[keep]
    # candidate counts n0 .. n0 + room of each job, flat
    lengths = room + 1
    owner = np.repeat(np.arange(len(jobs)), lengths)
    offsets = np.cumsum(lengths) - lengths
    counts = n0[owner] + np.arange(int(lengths.sum())) - offsets[owner]
    cost = data.costs(jobs, owner, counts)
    allowed = np.isfinite(cost)
    owner, counts, cost = owner[allowed], counts[allowed], cost[allowed]
    # a move between consecutive allowed counts of the same job
    same = owner[1:] == owner[:-1]
    units = (counts[1:] - counts[:-1])[same]
    gain = ((cost[:-1] - cost[1:])[same]) / units  # per unit: (R(n') - R(n)) / (n' - n)
    m_owner, m_count = owner[1:][same], counts[1:][same]
    # cut each path before its first move that gains nothing
    bad = ~(gain > 0)
    seg = _segment_starts(m_owner)
    seen_bad = np.cumsum(bad)
    before = np.repeat(seen_bad[seg] - bad[seg], np.diff(np.append(seg, len(bad))))
    ok = seen_bad - before == 0
    m_owner, m_count, gain, units = m_owner[ok], m_count[ok], gain[ok], units[ok]
    share = data.share[jobs[m_owner], 0]
    with np.errstate(divide="ignore"):
        per_share = np.where(share > 0, gain / np.where(share > 0, share, 1.0), np.inf)
    seg = _segment_starts(m_owner)
    bounds = np.append(seg, len(m_owner))
    running = np.concatenate([np.minimum.accumulate(per_share[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]) if len(seg) else per_share
    step = np.arange(len(m_owner)) - np.repeat(seg, np.diff(bounds))
    return jobs[m_owner], m_count, per_share, units, running, step


def slaq_greedy(data: QualityData, start: dict[int, tuple[int, int]], *,
                stop_rule: StopRule = "skip") -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """SLAQ's greedy from ``start`` (job -> (a_j, 0)), vectorised; the same plan as
    :func:`slaq_greedy_heap`. The heap's pops visit units in order of each unit's
    running-minimum gain along its job's path (ties by job, then unit), so one
    sort replaces the heap; units are then taken in that order while they fit
    (``skip``: a job whose next unit does not fit stops; ``paper``: all stop)."""
    config = {j: [c[0], c[1]] for j, c in start.items()}
    job, count, _, units, running, step = _moves(data, start)
    added = dropped = 0
    if len(job):
        order = np.lexsort((step, job, -running))
        job, count, units = job[order], count[order], units[order]
        use = data.demand[job, 0] * units[:, None]  # (moves, R)
        limit = data.cap * (1 + FIT_TOL) + FIT_TOL
        used = sum((start[j][0] * data.demand[j, 0] for j in start), np.zeros(data.R))
        # the prefix that fits as a whole is taken at once (a job's moves come in count order)
        over = np.any(used + np.cumsum(use, axis=0) > limit, axis=1)
        first = int(np.argmax(over)) if over.any() else len(job)
        final = np.zeros(data.J, dtype=np.int64)
        np.maximum.at(final, job[:first], count[:first])
        for j in np.flatnonzero(final).tolist():
            config[j][0] = int(final[j])
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
    job, count, gain, units, _, _ = _moves(data, start)
    paths: dict[int, list[tuple[int, float, int]]] = {}
    for j, n, g, u in zip(job.tolist(), count.tolist(), gain.tolist(), units.tolist()):
        paths.setdefault(j, []).append((n, g, u))
    used = sum((start[j][0] * data.demand[j, 0] for j in start), np.zeros(data.R))
    limit = data.cap * (1 + FIT_TOL) + FIT_TOL
    heap = [(-path[0][1], j, 0) for j, path in paths.items()]
    heapq.heapify(heap)
    while heap:
        _, j, i = heapq.heappop(heap)
        n, _, u = paths[j][i]
        d = data.demand[j, 0] * u
        if np.any(used + d > limit):
            if stop_rule == "paper":
                break
            continue  # skip: this job takes no more
        used = used + d
        config[j] = n
        if i + 1 < len(paths[j]):
            heapq.heappush(heap, (-paths[j][i + 1][1], j, i + 1))
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
        return heuristic_plan(data, config, admitted, solver=self.name, started=started, seed=seed,
                              options={"stop_rule": self.stop_rule, "bound": self.bound},
                              metrics={**counters, "heuristic_seconds": greedy_s}, bound=self.bound)


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
