"""The Optimus allocation problem (Optimus eq. 5-8), compiled to arrays.

    minimize   Σ_j Q_j / f_j(p_j, w_j)                        (eq. 5-6)
    subject to Σ_j (w_j·O_j^r + p_j·N_j^r) <= C_r   for all r  (eq. 7)
               p_j, w_j integer in the roles' [min, max]        (eq. 8)

lexicographically after *maximise the number of admitted jobs* when not every
job fits at its minimum (DESIGN.md). Exact solvers use the multiple-choice
reformulation: enumerate each job's configurations, drop every one that a
cheaper-or-equal configuration with no more tasks of any role dominates, and
pick one per job. Its LP relaxation gives the bounds that certify heuristics.

Shapes: J jobs, R resources, K enumerated configurations (all jobs).
Roles are in canonical order (``ps``, ``worker``); one-role jobs use slot 0
and have count 0 in slot 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any

import numpy as np

from schedopt.gcpause import paused_gc
from schedopt.errors import FieldProblem, InputError
from schedopt.instance import Instance, Job
from schedopt.plan import Proof
from schedopt.speed import StepTable
from schedopt.allocation.jobtime import job_time_s, training_s
from schedopt.allocation.objectives import is_weighted, objective_terms
from schedopt.tolerances import BOUND_NOISE, capacity_limit

OBJECTIVE_NAME = "total_remaining_time"


def role_counts(job: Job, c0: int, c1: int) -> dict[str, int]:
    """A configuration (c0, c1) as a plan states it: {role: tasks} in the job's canonical role order."""
    names = job.role_names
    out = {names[0]: int(c0)}
    if len(names) == 2:
        out[names[1]] = int(c1)
    return out


@dataclass
class AllocationData:
    """Arrays of one allocation instance.

    ``lo``/``hi`` (J, 2) count bounds; ``demand`` (J, 2, R) per-task demand;
    ``Q`` (J,) remaining steps; ``cap`` (R,) cluster capacity C_r;
    ``share`` (J, 2) dominant share of one task, max_r demand_r / C_r.
    """

    instance: Instance
    jobs: Sequence[Job]  # by row: a list, or a typed model's RowJobs (made on first use)
    n_roles: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    demand: np.ndarray
    Q: np.ndarray
    cap: np.ndarray
    share: np.ndarray
    arrival: np.ndarray
    # the problem the arrays describe; the solvers minimise Σ cost (``time_s``),
    # and a maximisation reports value = -Σ cost
    problem: str = "allocation"
    objective_name: str = OBJECTIVE_NAME
    sense: str = "min"
    # the reconfiguration cost: ``running`` (J, 2) counts each job runs with now
    # (-1: not running), ``restart_s`` (J,) ρ_j seconds lost when they change
    running: np.ndarray | None = None
    restart_s: np.ndarray | None = None
    #: the objective's per-job constant (J,), paid by an admitted job whatever its
    #: configuration (``allocation/objectives.py``; None: 0, Optimus's Σ t_j). Its weight is
    #: in ``Q`` and ``restart_s`` already, so job j's cost is Q_j·step + ρ_j·[changed] + offset_j
    offset: np.ndarray | None = None
    #: the objective's per-job weight (J,) already in ``Q`` and ``restart_s`` (None: 1)
    weight: np.ndarray | None = None

    #: whether each job's cost is Q_j·step_time(c0, c1) (+ ρ_j), which the dual's pricing
    #: minimises in closed form for formula speeds (``allocation.dual``); a problem with
    #: another cost (SLAQ's -R_j) sets False and its configurations are enumerated
    closed_form_cost: bool = True

    def seconds(self, j: int, cost: float) -> float:
        """Job j's time t_j (s) from its cost under the objective (the cost itself under Σ t_j)."""
        if self.offset is None or self.weight is None:
            return cost
        return (cost - float(self.offset[j])) / float(self.weight[j])

    def restarts(self, j: int) -> bool:
        """Whether job j pays ρ_j > 0 for leaving its running counts."""
        return self.running is not None and self.restart_s is not None and self.running[j, 0] >= 0 and self.restart_s[j] > 0

    def restart_mask(self) -> np.ndarray:
        """(J,) :meth:`restarts` of every job."""
        if self.running is None or self.restart_s is None:
            return np.zeros(self.J, dtype=bool)
        return (self.running[:, 0] >= 0) & (self.restart_s > 0)

    @property
    def sign(self) -> float:
        """Reported objective = sign · Σ cost (+1 for min, -1 for max)."""
        return 1.0 if self.sense == "min" else -1.0

    @property
    def J(self) -> int:
        return len(self.jobs)

    @property
    def R(self) -> int:
        return len(self.cap)

    def time_s(self, j: int, c0: Any, c1: Any) -> Any:
        """t_j = Q_j / f_j(c0, c1) + ρ_j·[(c0, c1) ≠ running_j] in seconds (scalar
        or array), inf if not allowed (Optimus eq. 6 with the restart cost)."""
        step = self.jobs[j].speed.step_time_s(c0, c1)
        if not self.restarts(j):
            t = training_s(float(self.Q[j]), step)
        else:
            t = job_time_s(float(self.Q[j]), step, float(self.restart_s[j]), self.changed(j, c0, c1))  # type: ignore[index]
        return t if self.offset is None else t + float(self.offset[j])  # inf stays inf

    def times_at(self, rows: np.ndarray, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
        """:meth:`time_s` of each job of ``rows`` (n,) at its own counts ``c0``, ``c1`` (n,), seconds
        (n,), the same floats one call each gives (:func:`step_times_at`, then the job time's terms at once)."""
        rows = np.asarray(rows, dtype=np.int64)
        if type(self).time_s is not AllocationData.time_s:  # another cost (SLAQ's): its own time_s
            return np.array([float(self.time_s(v, int(a), int(b))) for v, a, b in zip(rows, c0, c1)], dtype=float)
        t = self._job_times_at(rows, np.asarray(c0, dtype=np.int64), np.asarray(c1, dtype=np.int64))
        return t if self.offset is None else t + self.offset[rows]

    def _job_times_at(self, rows: np.ndarray, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
        """Q_j·step + ρ_j where the job pays it and its counts change (s, (n,)), before the objective's offset."""
        step = step_times_at(self, rows, c0, c1)
        if not len(rows):
            return np.zeros(0)
        if self.running is None or self.restart_s is None:
            return training_s(self.Q[rows], step)
        pays = self.restart_mask()[rows]  # ρ_j only for the jobs that pay it (restarts), where the counts change
        return job_time_s(self.Q[rows], step, np.where(pays, self.restart_s[rows], 0.0), pays & self.changed_at(rows, c0, c1))

    def changed_at(self, rows: np.ndarray, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
        """:meth:`changed` of each job of ``rows`` (n,) at its own counts (n,)."""
        assert self.running is not None
        return (np.asarray(c0) != self.running[rows, 0]) | (np.asarray(c1) != self.running[rows, 1])

    def total_time_s(self, config: dict[int, tuple[int, int]]) -> float:
        """Σ_j t_j over ``config`` (job -> (c0, c1)), seconds: each job's :meth:`time_s` (read
        at once, :meth:`times_at`) summed in Python floats in ``config``'s order (a plan's
        objective: the same float as one scalar call per job)."""
        if type(self).time_s is not AllocationData.time_s:  # another cost (SLAQ's): its own time_s
            return float(sum(self.time_s(j, *c) for j, c in config.items()))
        if not config:
            return 0.0
        jobs = np.fromiter(config, dtype=np.int64, count=len(config))
        counts = np.array(list(config.values()), dtype=np.int64).reshape(len(config), 2)
        t = self._job_times_at(jobs, counts[:, 0], counts[:, 1])
        if not np.all(np.isfinite(t)):
            return math.inf
        total = 0.0
        if self.offset is None:
            for x in t.tolist():
                total += x
        else:  # each job's term, then its offset, as one call per job adds them
            for x, o in zip(t.tolist(), self.offset[jobs].tolist()):
                total += x
                total += o
        return float(total)

    @property
    def rigid(self) -> np.ndarray:
        """(J,) bool: the job allows one count per role (lo = hi; a one-role job's second slot ignored)."""
        return (self.lo[:, 0] == self.hi[:, 0]) & ((self.n_roles != 2) | (self.lo[:, 1] == self.hi[:, 1]))

    def speeds(self) -> list[Any]:
        """Each job's speed form (J,): a typed model's row jobs hold theirs apart
        (``model.RowJobs.speeds``), so reading them makes no job."""
        held = getattr(self.jobs, "speeds", None)
        return list(held) if held is not None else [job.speed for job in self.jobs]

    def step_table(self) -> StepTable:
        """The jobs' speeds as one :class:`~schedopt.speed.StepTable` (entry j: job j), built
        once per job list."""
        table = self.__dict__.get("_step_table")
        if table is None or table[0] is not self.jobs:
            table = self.__dict__["_step_table"] = (self.jobs, StepTable(self.speeds()))
        return table[1]

    def usage(self, config: dict[int, tuple[int, int]]) -> np.ndarray:
        """Σ_j (c0·demand_j,0 + c1·demand_j,1) over ``config``, shape (R,) (Optimus eq. 7's left side)."""
        if not config:
            return np.zeros(self.R)
        jobs = np.fromiter(config, dtype=np.int64, count=len(config))
        counts = np.array(list(config.values()), dtype=float).reshape(len(config), 2)
        return np.einsum("jk,jkr->r", counts, self.demand[jobs])

    def changed(self, j: int, c0: Any, c1: Any) -> Any:
        """Whether (c0, c1) differs from job j's running counts (bool, or an array of them)."""
        assert self.running is not None
        r0, r1 = int(self.running[j, 0]), int(self.running[j, 1])
        changed = (np.asarray(c0) != r0) | (np.asarray(c1) != r1)
        return changed if changed.ndim else bool(changed)

    def counts_dict(self, j: int, c0: int, c1: int) -> dict[str, int]:
        return role_counts(self.jobs[j], c0, c1)


def compile_allocation(instance: Instance) -> AllocationData:
    """Arrays for the allocation problem; raises :class:`InputError` when a job
    lacks what the problem needs (a speed form and remaining steps). The cyclic
    collector is paused meanwhile (:mod:`schedopt.gcpause`)."""
    with paused_gc():
        return _compile_allocation(instance)


def _compile_allocation(instance: Instance) -> AllocationData:
    problems = []
    for i, job in enumerate(instance.jobs):
        if job.speed is None:
            problems.append(FieldProblem(f"jobs[{i}].speed", "required by the allocation problem"))
        if job.remaining_steps is None:
            problems.append(FieldProblem(f"jobs[{i}].remaining_steps", "required by the allocation problem"))
    if problems:
        raise InputError(instance.source, problems)
    running, restart = running_arrays(instance)
    data = AllocationData(**role_arrays(instance), Q=np.array([float(j.remaining_steps) for j in instance.jobs]),
                          running=running, restart_s=restart)
    return with_objective_terms(data, instance, np.arange(data.J))


def with_objective_terms(data: AllocationData, instance: Instance, job_of: np.ndarray) -> AllocationData:
    """``data`` costed by the instance's objective (``allocation/objectives.py``): row v is
    job ``job_of[v]``; its Q and ρ scaled by the job's weight and its offset set. Σ t_j
    (the default) leaves ``data`` as it is."""
    if not is_weighted(instance):
        return data
    weight, offset = objective_terms(instance)
    data.Q = data.Q * weight[job_of]
    if data.restart_s is not None:
        data.restart_s = data.restart_s * weight[job_of]
    data.offset = offset[job_of].astype(float)
    data.weight = weight[job_of].astype(float)
    data.objective_name = instance.objective
    return data


def running_arrays(instance: Instance) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Each job's running counts (J, 2) in canonical role order (-1 when not
    running) and restart cost ρ_j (J,) seconds; (None, None) when no job both
    runs and has ρ_j > 0, so the problem is Optimus eq. 5-6 unchanged."""
    if not instance.previous and all(job.running is None for job in instance.jobs):
        return None, None  # nothing runs now (a first round, or a snapshot without history)
    J = len(instance.jobs)
    running = np.full((J, 2), -1, dtype=np.int64)
    restart = np.zeros(J)
    for i, job in enumerate(instance.jobs):
        counts = instance.running_counts(job)
        if counts is None:
            continue
        names = job.role_names
        running[i] = (counts[names[0]], counts[names[1]] if len(names) == 2 else 0)
        restart[i] = instance.restart_cost_s(job)
    if not np.any((running[:, 0] >= 0) & (restart > 0)):
        return None, None
    return running, restart


def role_arrays(instance: Instance) -> dict[str, Any]:
    """The per-job arrays every count-allocation problem shares: role count,
    bounds lo/hi (J, 2), per-task demand (J, 2, R), capacity C_r, dominant
    share of one task (J, 2), arrival (J,). Roles in canonical order; one-role
    jobs use slot 0."""
    J, R = len(instance.jobs), len(instance.resources)
    n_roles = np.array([len(j.roles) for j in instance.jobs], dtype=int)
    lo, hi = (a.copy() for a in instance.role_bounds())  # (J, 2) each
    demand = instance.role_demands().copy()  # (J, 2, R)
    cap = instance.capacity_total.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(demand > 0, demand / cap, 0.0).max(axis=2) if R else np.zeros((J, 2))
    return {"instance": instance, "jobs": list(instance.jobs), "n_roles": n_roles, "lo": lo, "hi": hi,
            "demand": demand, "cap": cap, "share": share, "arrival": np.array([j.arrival for j in instance.jobs])}


# ---- the multiple-choice reformulation ----------------------------------------------------

@dataclass
class ChoiceSet:
    """Enumerated, dominance-pruned configurations, grouped by job.

    ``job`` (K,) owner; ``counts`` (K, 2); ``cost`` (K,) seconds t_j;
    ``use`` (K, R) resources; ``start`` (J+1,) offsets: job j owns
    ``start[j]:start[j+1]``. ``enumerated`` counts configurations before pruning.
    """

    job: np.ndarray
    counts: np.ndarray
    cost: np.ndarray
    use: np.ndarray
    start: np.ndarray
    enumerated: int

    @property
    def K(self) -> int:
        return len(self.job)

    def of(self, j: int) -> slice:
        return slice(int(self.start[j]), int(self.start[j + 1]))

    def indices_of(self, config: dict[int, tuple[int, int]]) -> list[int]:
        """Indices of the given per-job configurations (each must be in the set)."""
        out = []
        for j, c in config.items():
            s = self.of(j)
            hit = np.nonzero((self.counts[s, 0] == c[0]) & (self.counts[s, 1] == c[1]))[0]
            out.append(s.start + int(hit[0]))
        return out

    def indices_present(self, config: dict[int, tuple[int, int]]) -> list[int]:
        """Indices of those of the given per-job configurations that are in the set
        (pruning or fixing may have removed some)."""
        out = []
        for j, c in config.items():
            if not 0 <= j < len(self.start) - 1:
                continue
            s = self.of(j)
            hit = np.nonzero((self.counts[s, 0] == c[0]) & (self.counts[s, 1] == c[1]))[0]
            if len(hit):
                out.append(s.start + int(hit[0]))
        return out

    def subset(self, keep: np.ndarray) -> "ChoiceSet":
        """The configurations where ``keep`` is True, still grouped by job."""
        n_jobs = len(self.start) - 1
        counts = np.bincount(self.job[keep], minlength=n_jobs)
        return ChoiceSet(job=self.job[keep], counts=self.counts[keep], cost=self.cost[keep], use=self.use[keep],
                         start=np.concatenate([[0], np.cumsum(counts)]), enumerated=self.enumerated)


def job_configurations(data: AllocationData, j: int) -> tuple[np.ndarray, np.ndarray]:
    """All allowed configurations of job j within its bounds: counts (n, 2), cost (n,).
    Jobs that share a measured table and bounds share the work (cached on ``data``)."""
    shared = _shared_table_key(data, j)
    if shared is None:
        return _job_configurations(data, j)
    cache = data.__dict__.setdefault("_table_configurations", {})
    if shared not in cache:
        counts, cost = _job_configurations(data, j)
        cache[shared] = (counts, cost / float(data.Q[j]))
    counts, step = cache[shared]
    return counts, step * float(data.Q[j])


def _job_configurations(data: AllocationData, j: int) -> tuple[np.ndarray, np.ndarray]:
    speed = data.jobs[j].speed
    (lo0, lo1), (hi0, hi1) = data.lo[j], data.hi[j]
    if speed.measured:
        counts = speed.configuration_array()  # sorted (c0, c1); one role: c1 = 0
        inside = (counts[:, 0] >= lo0) & (counts[:, 0] <= hi0)
        if data.n_roles[j] == 2:
            inside &= (counts[:, 1] >= lo1) & (counts[:, 1] <= hi1)
        counts = counts[inside]
    else:
        c0 = np.arange(lo0, hi0 + 1)
        c1 = np.arange(lo1, hi1 + 1) if data.n_roles[j] == 2 else np.zeros(1, dtype=np.int64)
        g0, g1 = np.meshgrid(c0, c1, indexing="ij")
        counts = np.stack([g0.ravel(), g1.ravel()], axis=1)
    cost = np.asarray(data.time_s(j, counts[:, 0], counts[:, 1]), dtype=float).reshape(-1)
    keep = np.isfinite(cost)
    return counts[keep], cost[keep]


def pareto_prune(counts: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Mask of configurations no other configuration dominates. c' dominates c
    when c' uses no more tasks of any role and costs no more (DESIGN.md)."""
    n = len(cost)
    if n <= 1:
        return np.ones(n, dtype=bool)
    lo0, lo1 = counts.min(axis=0)
    n0, n1 = counts.max(axis=0) - (lo0, lo1) + 1
    if n0 * n1 <= 4 * n + 64:
        # dense grid: prefix minimum over the rectangle [lo, c] in O(n0·n1)
        grid = np.full((n0, n1), np.inf)
        a, b = counts[:, 0] - lo0, counts[:, 1] - lo1
        grid[a, b] = cost
        pm = np.minimum.accumulate(np.minimum.accumulate(grid, axis=0), axis=1)
        best_before = np.full((n0, n1), np.inf)
        best_before[1:, :] = pm[:-1, :]
        best_before[:, 1:] = np.minimum(best_before[:, 1:], pm[:, :-1])
        return ~(best_before[a, b] <= cost)
    # sparse (tables): every pair at once, in blocks of rows (n² comparisons, bounded memory)
    keep = np.ones(n, dtype=bool)
    block = max(1, 2_000_000 // n)
    for lo in range(0, n, block):
        i = np.arange(lo, min(n, lo + block))
        dom = ((counts[None, :, 0] <= counts[i, None, 0]) & (counts[None, :, 1] <= counts[i, None, 1])
               & (cost[None, :] <= cost[i, None]))
        dom[np.arange(len(i)), i] = False  # not by itself
        keep[i] = ~dom.any(axis=1)
    return keep


def count_minimal(cs: ChoiceSet) -> np.ndarray:
    """Mask of configurations with no other configuration of the same job using
    no more tasks of either role (for grid forms: just the minimum)."""
    keep = np.zeros(cs.K, dtype=bool)
    sizes = np.diff(cs.start)
    keep[cs.start[:-1][sizes == 1]] = True  # a job's one configuration (rigid jobs): minimal
    for j in np.flatnonzero(sizes > 1).tolist():
        s = cs.of(j)
        keep[s] = pareto_prune(cs.counts[s], np.zeros(s.stop - s.start))
    return keep


def enumerate_choices(data: AllocationData, jobs: np.ndarray | None = None, prune: bool = True,
                      least: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> ChoiceSet:
    """The multiple-choice configurations of ``jobs`` (default: all). ``least``: each job's
    minimum configuration (J, 2), whether it is allowed (J,) and its time there (J,), when the
    caller has them: a rigid job (one allowed count per role) has that one configuration."""
    jobs = np.arange(data.J) if jobs is None else np.asarray(jobs, dtype=np.int64)
    wanted = set(jobs.tolist())
    batched = _one_role_batch(data, jobs)
    # rigid jobs (one allowed count per role) given their least configuration: that one
    # configuration each, at its time there (none where it is not allowed), all at once
    rigid = np.zeros(data.J, dtype=bool)
    if least is not None:
        mins, allowed, t_least = least
        rigid[jobs] = data.rigid[jobs]
        if batched:
            rigid[list(batched)] = False
    rigid_jobs = np.flatnonzero(rigid & allowed) if least is not None else np.zeros(0, dtype=np.int64)
    pruned = data.__dict__.setdefault("_pruned_tables", {})  # _shared_table_key -> counts, step times, enumerated
    parts_counts, parts_cost, parts_owner = [], [], []
    sizes = np.zeros(data.J, dtype=np.int64)
    enumerated = 0
    for j in sorted(wanted - set(np.flatnonzero(rigid).tolist())):
        if j in batched:
            counts, cost = batched[j]
            enumerated += len(cost)
            if prune:  # one role: a count survives when it costs less than every smaller count
                before = np.minimum.accumulate(np.concatenate([[np.inf], cost[:-1]]))
                keep = cost < before
                counts, cost = counts[keep], cost[keep]
        elif (shared := _shared_table_key(data, j)) is not None:
            # a measured table seen before with the same bounds: its pruned configurations and step times
            # are the same, and the cost is Q_j times the step time (pruning is unchanged by that scale)
            if (shared, prune) not in pruned:
                counts, cost = job_configurations(data, j)
                total = len(cost)
                if prune:
                    keep = pareto_prune(counts, cost)
                    counts, cost = counts[keep], cost[keep]
                pruned[shared, prune] = (counts, cost / float(data.Q[j]), total)
            counts, step, total = pruned[shared, prune]
            cost = step * data.Q[j]
            enumerated += total
        else:
            counts, cost = job_configurations(data, j)
            enumerated += len(cost)
            if prune:
                keep = pareto_prune(counts, cost)
                counts, cost = counts[keep], cost[keep]
        parts_counts.append(counts)
        parts_cost.append(cost)
        parts_owner.append(np.full(len(cost), j, dtype=np.int64))
        sizes[j] = len(cost)
    if len(rigid_jobs):
        enumerated += len(rigid_jobs)
        sizes[rigid_jobs] = 1
        parts_counts.append(mins[rigid_jobs].astype(np.int64))
        parts_cost.append(t_least[rigid_jobs].astype(float))
        parts_owner.append(rigid_jobs)
    job = np.repeat(np.arange(data.J, dtype=np.int64), sizes)
    if parts_counts:
        counts = np.concatenate(parts_counts).astype(np.int64, copy=False)
        cost = np.concatenate(parts_cost).astype(float, copy=False)
        if 0 < len(rigid_jobs) < len(cost):  # the looped jobs', then the rigid ones: by job
            order = np.argsort(np.concatenate(parts_owner), kind="stable")
            counts, cost = counts[order], cost[order]
    else:
        counts, cost = np.zeros((0, 2), dtype=np.int64), np.zeros(0)
    use = (counts[:, :, None] * data.demand[job]).sum(axis=1) if len(job) else np.zeros((0, data.R))
    return ChoiceSet(job=job, counts=counts, cost=cost, use=use, start=np.concatenate([[0], np.cumsum(sizes)]),
                     enumerated=enumerated)


def _shared_table_key(data: AllocationData, j: int) -> tuple | None:
    """A key equal for jobs whose configurations and step times are the same: a measured
    table (its step-time grid, :meth:`TableSpeed.content_key`) within the same bounds, cost Q_j·step (no restart cost, Q_j > 0).
    None for every other job. Cached on ``data`` per job."""
    keys = data.__dict__.setdefault("_shared_table_keys", {})
    if j not in keys:
        speed = data.jobs[j].speed
        if (not speed.measured or type(data).time_s is not AllocationData.time_s or data.restarts(j)
                or not data.Q[j] > 0 or data.offset is not None):
            keys[j] = None
        else:
            keys[j] = (speed.content_key(), int(data.n_roles[j]), tuple(data.lo[j].tolist()), tuple(data.hi[j].tolist()))
    return keys[j]


def _one_role_batch(data: AllocationData, jobs: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Counts (n, 2) and costs (n,) of the one-role formula-speed jobs among
    ``jobs``, all costed in one call when the data can (``costs``: SLAQ's quality
    data); {} otherwise. Only allowed (finite-cost) counts are kept."""
    costs = getattr(data, "costs", None)
    if costs is None:
        return {}
    picked = np.array([j for j in jobs.tolist() if data.n_roles[j] == 1 and not data.jobs[j].speed.measured],
                      dtype=np.int64)
    if not len(picked):
        return {}
    lo, hi = data.lo[picked, 0], data.hi[picked, 0]
    n = np.maximum(hi - lo + 1, 0)
    owner = np.repeat(np.arange(len(picked)), n)
    first = np.concatenate([[0], np.cumsum(n)[:-1]])
    c0 = lo[owner] + np.arange(int(n.sum())) - first[owner]
    cost = np.asarray(costs(picked, owner, c0), dtype=float)
    out = {}
    bounds = np.concatenate([[0], np.cumsum(n)])
    for i, j in enumerate(picked.tolist()):
        seg = slice(int(bounds[i]), int(bounds[i + 1]))
        ok = np.isfinite(cost[seg])
        counts = np.stack([c0[seg][ok], np.zeros(int(ok.sum()), dtype=np.int64)], axis=1).astype(np.int64)
        out[j] = (counts, cost[seg][ok])
    return out


def step_times_at(data: AllocationData, rows: np.ndarray, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
    """Step time (s) of each job of ``rows`` (n,) at its own counts ``c0``, ``c1`` (n,), the
    floats ``speed.step_time_s`` gives (measured tables by their scalar lookup); inf where not
    allowed."""
    return data.step_table().at(rows, c0, c1)


# ---- admission ---------------------------------------------------------------------------

def min_configuration(data: AllocationData, j: int) -> tuple[int, int] | None:
    """The allowed configuration with the smallest dominant demand (None if none)."""
    if not data.jobs[j].speed.measured:
        c = (int(data.lo[j, 0]), int(data.lo[j, 1]))
        return c if math.isfinite(data.time_s(j, *c)) else None
    if type(data).time_s is AllocationData.time_s:  # allowed = a finite step time: read the table's grid
        lo = (int(data.lo[j, 0]), int(data.lo[j, 1]) if data.n_roles[j] == 2 else 0)
        if math.isfinite(data.jobs[j].speed.scalar_step_time()(*lo)):
            return int(data.lo[j, 0]), int(data.lo[j, 1])  # the least counts use the least of everything
        counts = allowed_on_grid(data, j)
    else:
        counts, _ = job_configurations(data, j)
    if len(counts) == 0:
        return None
    use = counts[:, 0, None] * data.demand[j, 0] + counts[:, 1, None] * data.demand[j, 1]  # (n, R)
    dom = (use * inverse_capacity(data.cap)).max(axis=1) if data.R else np.zeros(len(counts))
    k = int(np.argmin(dom))  # ties: the first in (c0, c1) order, as before
    return int(counts[k, 0]), int(counts[k, 1])


def allowed_on_grid(data: AllocationData, j: int) -> np.ndarray:
    """Job j's allowed counts (n, 2) within its bounds, in (c0, c1) order: where its
    table's step time is finite (one role: c1 = 0)."""
    grid = data.jobs[j].speed._grid()  # (max c0 + 1, max c1 + 1) step times, inf where not allowed
    (lo0, lo1), (hi0, hi1) = data.lo[j], data.hi[j]
    if data.n_roles[j] != 2:
        lo1, hi1 = 0, 0
    sub = grid[lo0:hi0 + 1, lo1:hi1 + 1]
    c0, c1 = np.nonzero(np.isfinite(sub))
    return np.stack([c0 + lo0, c1 + lo1], axis=1).astype(np.int64)


def cannot_run(data: AllocationData, jobs: Any = None) -> dict[str, str]:
    """Jobs (of ``jobs``, default all) that no plan can ever run, with the reason:
    no allowed configuration, or more than the whole cluster at their least use."""
    out: dict[str, str] = {}
    for j in (range(data.J) if jobs is None else jobs):
        c = min_configuration(data, j)
        if c is None:
            out[data.jobs[j].id] = "no allowed configuration (its speed is undefined or 0 at every count)"
            continue
        over = np.flatnonzero(use_of(data, j, c) > capacity_limit(data.cap))
        if len(over):
            r = int(over[0])
            out[data.jobs[j].id] = (f"needs {use_of(data, j, c)[r]:g} {data.instance.resources[r]} at its least, "
                                    f"the whole cluster has {data.cap[r]:g}")
    return out


def use_of(data: AllocationData, j: int, c: tuple[int, int]) -> np.ndarray:
    return c[0] * data.demand[j, 0] + c[1] * data.demand[j, 1]


def inverse_capacity(cap: np.ndarray) -> np.ndarray:
    """1 / C_r, with 0 for resources of zero capacity (shares of them count as 0)."""
    safe = np.where(cap > 0, cap, 1.0)
    return np.where(cap > 0, 1.0 / safe, 0.0)


def fits(used: np.ndarray, extra: np.ndarray, cap: np.ndarray) -> bool:
    return bool(np.all(used + extra <= capacity_limit(cap)))


# ---- building plans -------------------------------------------------------------------------

def settle_bounds(*, cost: float | None, bound: float | None, proof: Proof | None, admitted: int,
                  admitted_bound: int | None, admitted_proof: Proof | None, jobs: int, metrics: dict[str, Any],
                  sign: float = 1.0) -> tuple[float | None, Proof | None, Proof | None]:
    """The bounds a plan states, from a lower bound ``bound`` on Σ cost (``cost``: the plan's):
    a bound above the cost by more than noise is a bug, not a claim, and is dropped
    (``metrics.bound_rejected``); within noise it is the cost; it holds only among
    plans admitting as many jobs, so an ``admitted_bound`` above ``admitted`` drops it.
    Returns the bound in the problem's sense (``sign``), its proof (value filled in)
    and the admitted count's proof (None when the bound is every job)."""
    if cost is not None and bound is not None and bound > cost:
        if bound - cost > BOUND_NOISE * max(1.0, abs(cost)):
            metrics["bound_rejected"] = sign * bound + 0.0
            bound = None
        else:
            bound = cost  # rounding noise of the relaxation/solver, never a better-than-optimal claim
    if admitted_bound is not None and admitted_bound > admitted:
        bound = None
    stated = None if bound is None else sign * bound + 0.0
    proof = None if stated is None or proof is None else proof.model_copy(update={"value": stated})
    if admitted_bound is None or admitted_bound >= jobs:
        admitted_proof = None  # no more jobs than there are: nothing to prove
    elif admitted_proof is not None:
        admitted_proof = admitted_proof.model_copy(update={"value": float(admitted_bound)})
    return stated, proof, admitted_proof


def lagrangian_proof(data: AllocationData, lam: np.ndarray, nu: float = 0.0, admit: int | None = None,
                     names: list[str] | None = None) -> Proof:
    """The certificate of a Lagrangian bound L(λ, ν) (``schedopt.plan.Proof``):
    capacity prices by row name (the instance's resources; on a typed cluster
    ``names``: ``resource@type`` and the quota rows) and, with an admission row, k and ν."""
    lam = np.maximum(np.asarray(lam, dtype=float), 0.0)
    every = admit is None or admit >= data.J
    return Proof(kind="lagrangian", prices={r: float(v) for r, v in zip(names or data.instance.resources, lam)},
                 admit=None if every else int(admit), admit_price=None if every else max(0.0, float(nu)))
