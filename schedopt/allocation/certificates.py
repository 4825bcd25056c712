"""Replaying count-allocation certificates from the instance alone (checker side).

Nothing here imports a solver: each job's configurations are enumerated from
its roles' bounds, its objective term evaluated by the instance's own speed
form (and loss curve), and the bound recomputed with the certificate's prices.
Shared by the allocation problem (term t_j, minimised) and SLAQ's quality
problem (term R_j, maximised: its cost is -R_j).

For prices λ >= 0 (R,) on the capacities C and ν >= 0 on "admit at least k",
every plan admitting a set A with |A| >= k and Σ_{j in A} u_j <= C costs

    Σ_A c_j >= Σ_A (c_j + λ·u_j) - λ·C >= Σ_j min(0, m_j(λ) - ν) + ν·k - λ·C

with m_j(λ) = min over j's allowed configurations x of c_j(x) + λ·u_j(x);
when k is every job, the bound is Σ_j m_j(λ) - λ·C. The optimum admits at
least as many jobs as any feasible plan, so a plan admitting k jobs may state
this bound on the optimum's cost. For the admitted count, prices μ >= 0 give

    |A| <= μ·C + Σ_j max(0, 1 - min_x μ·u_j(x))   (jobs with no allowed x add 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from schedopt.allocation.jobtime import job_time_s, training_s
from schedopt.allocation.objectives import is_weighted, objective_of_time, objective_terms
from schedopt.allocation.problem import running_arrays
from schedopt.claims import SESSION, Replay, TooLargeToReplay, branch_tree_leaves
from schedopt.allocation.rows import capacity_vector, quota_rows, typed_resource_names
from schedopt.instance import Instance, Job
from schedopt.speed import StepTable
from schedopt.tolerances import capacity_limit

#: a job's cost per configuration (min sense): (instance, job, c0, c1) -> array, inf where not allowed
CostGrid = Callable[[Instance, Job, np.ndarray, np.ndarray], np.ndarray]

#: most configurations a replay enumerates (all jobs together) before it declines
MAX_REPLAY_CONFIGURATIONS = 50_000_000


def remaining_time_grid(instance: Instance, job: Job, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
    """The job's objective term over the counts (c0, c1): t_j = Q_j·step_time(c0, c1) + ρ_j
    where the counts differ from the running ones (s), weighted and offset by the
    instance's objective (``allocation/objectives.py``) when it is not Σ t_j."""
    return objective_of_time(instance, job.id, _time_grid(instance, job, c0, c1))


def _time_grid(instance: Instance, job: Job, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
    """t_j over the counts (seconds)."""
    if job.speed is None or job.remaining_steps is None:
        return np.full(len(c0), np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        step = np.asarray(job.speed.step_time_s(c0, c1), dtype=float).reshape(-1)
    q = float(job.remaining_steps)
    running = instance.running_counts(job)
    if running is None:
        return training_s(q, step)
    names = job.role_names
    r0 = running.get(names[0], 0)
    r1 = running.get(names[1], 0) if len(names) == 2 else 0
    changed = (c0 != r0) | ((c1 != r1) if len(names) == 2 else False)
    return job_time_s(q, step, instance.restart_cost_s(job), changed)


@dataclass(frozen=True)
class RunState:
    """What a job's time reads besides its speed, per job (J,): its remaining steps ``q`` (NaN:
    none given), its running counts ``r0``/``r1`` (-1: not running, or nothing to pay: no job has a
    restart cost), its restart ``rho`` (s) and the type it runs on (``on``, object; None: unnamed)."""

    q: np.ndarray
    r0: np.ndarray
    r1: np.ndarray
    rho: np.ndarray
    on: np.ndarray


def run_state(instance: Instance) -> RunState:
    """The instance's :class:`RunState`, built once per jobs list (the counts and restarts from
    :func:`~schedopt.allocation.problem.running_arrays`): the time of every configuration on every
    type reads it (:func:`remaining_time_block`, once per type)."""
    return instance.derived("certificate_run_state", _run_state)


def _run_state(instance: Instance) -> RunState:
    jobs = instance.jobs
    J = len(jobs)
    q = np.array([math.nan if job.remaining_steps is None else float(job.remaining_steps) for job in jobs], dtype=float)
    running, restart = running_arrays(instance)
    if running is None:  # no restart to pay anywhere: every time is the training time alone
        running, restart = np.full((J, 2), -1, dtype=np.int64), np.zeros(J)
    on = np.array([job.running_accelerator for job in jobs] + [None], dtype=object)[:J]
    return RunState(q, running[:, 0], running[:, 1], restart, on)


def remaining_time_block(instance: Instance, kind: str | None, owner: np.ndarray, c0: np.ndarray,
                         c1: np.ndarray) -> np.ndarray:
    """:func:`remaining_time_grid` of many jobs on type ``kind`` at once: entry i is job ``owner[i]``
    (ascending, each job's entries together) at counts (``c0[i]``, ``c1[i]``), shapes (N,). The
    same floats as one call per job (of the job as it runs on ``kind``, ``Instance.job_on``): the
    measured tables read from one :class:`~schedopt.speed.StepTable`, a formula over its own entries,
    then Q_j·step, ρ_j where the counts change, the objective's weight and offset, element by element."""
    jobs, typed = instance.jobs, instance.typed
    present, first, size = np.unique(owner, return_index=True, return_counts=True)
    n = len(present)
    state = run_state(instance)
    weight, offset = np.ones(n), np.zeros(n)
    if is_weighted(instance):
        w_all, b_all = objective_terms(instance)
        weight, offset = w_all[present].astype(float), b_all[present].astype(float)
    q = state.q[present]
    speeds: list[Any] = [instance.speed_on(jobs[j], kind) if typed else jobs[j].speed for j in present.tolist()]
    for i in np.flatnonzero(np.isnan(q)).tolist():  # no remaining steps: no time (inf) anywhere
        speeds[i] = None
    q = np.nan_to_num(q, nan=0.0)
    runs = state.r0[present] >= 0
    # moved off the type it runs on now (Instance.moves_type): every count here changes
    moved = runs & (state.on[present] != None) & (state.on[present] != kind) if typed and instance.has_types \
        else np.zeros(n, dtype=bool)  # noqa: E711 (an object array's elementwise test)
    rho = np.where(runs, state.rho[present], 0.0)
    stays = runs & ~moved
    r0, r1 = np.where(stays, state.r0[present], -1), np.where(stays, state.r1[present], -1)
    at = np.repeat(np.arange(n), size)  # each entry's place in ``present``
    table = StepTable(speeds)
    step = np.full(len(owner), np.inf)
    read = table.measured[at]
    step[read] = table.at(at[read], c0[read], c1[read])
    for i in np.flatnonzero(~table.measured).tolist():  # formulas: the job's own array call
        if speeds[i] is not None:
            seg = slice(int(first[i]), int(first[i]) + int(size[i]))
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                step[seg] = np.asarray(speeds[i].step_time_s(c0[seg], c1[seg]), dtype=float).reshape(-1)
    t = training_s(q[at], step)
    running = r0[at] >= 0
    changed = moved[at] | (running & ((c0 != r0[at]) | (c1 != r1[at])))  # a one-role job's c1 and r1 are 0
    pays = moved[at] | running
    t = np.where(pays, t + np.where(changed, rho[at], 0.0), t)
    if not is_weighted(instance):
        return t
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(t), weight[at] * t + offset[at], np.inf)


def loss_reduction_cost_grid(instance: Instance, job: Job, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
    """-R_j(c0): minus the predicted loss reduction over the horizon (SLAQ's term, as a cost)."""
    if job.speed is None or job.loss_curve is None or len(job.roles) != 1:
        return np.full(len(c0), np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        step = np.asarray(job.speed.step_time_s(c0, np.zeros_like(c0)), dtype=float).reshape(-1)
        ok = np.isfinite(step) & (step > 0)
        ahead = np.divide(instance.horizon_s, step, out=np.zeros_like(step), where=ok)
        red = np.asarray(job.loss_curve.reduction(ahead), dtype=float).reshape(-1)
    return np.where(ok & np.isfinite(red), -red, np.inf)


def resource_names(instance: Instance) -> list[str]:
    """The capacity rows prices name: the resources, or on a cluster with
    accelerator types the (type, resource) pairs (``gpu@v100``)."""
    if not instance.typed:
        return list(instance.resources)
    return typed_resource_names(instance)


def price_vector(instance: Instance, prices: dict[str, float] | None) -> np.ndarray:
    """The prices as a vector over :func:`resource_names`; ValueError for an
    unknown resource or a price that is negative or not finite."""
    prices = prices or {}
    names = resource_names(instance)
    unknown = sorted(set(prices) - set(names))
    if unknown:
        raise ValueError(f"prices name unknown resources {unknown}")
    vec = np.array([float(prices.get(r, 0.0)) for r in names], dtype=float)
    if not np.all(np.isfinite(vec)) or np.any(vec < 0):
        raise ValueError(f"prices must be finite and >= 0, got {prices}")
    return vec


def capacity_of(instance: Instance) -> np.ndarray:
    """The capacity rows' limits (R,; typed: every type's rows, then the quota rows), read-only,
    computed once per jobs list and queues (a replay reads them at every leaf of a branch tree)."""
    limits, queues = instance.derived("certificate_capacity", lambda inst: (_capacity_of(inst), inst.queues))
    return limits if queues is instance.queues else _capacity_of(instance)


def _capacity_of(instance: Instance) -> np.ndarray:
    limits = capacity_limit(capacity_vector(instance) if instance.typed else instance.capacity_total)
    limits.setflags(write=False)
    return limits


#: configurations priced per block (bounds the replay's memory: a block's use is this × rows floats)
BLOCK_CONFIGURATIONS = 1_000_000


def configuration_count(instance: Instance) -> int:
    """How many configurations the replay enumerates (every job's role ranges, on every type);
    computed once per jobs list."""
    return instance.derived("configuration_count", _configuration_count)


def _configuration_count(instance: Instance) -> int:
    kinds = len(instance.accelerators) if instance.typed else 1
    total = 0
    for job in instance.jobs:
        size = 1
        for r in job.roles.values():
            size *= max(0, r.max_count - r.min + 1)
        total += size * kinds
    return total


@dataclass
class JobArrays:
    """Per job: the first two roles' lower bounds ``lo`` and range sizes ``n`` (J, 2) and
    per-task demands ``demand`` (J, 2, R); the queue index of each job (-1: none), and the
    queues some job is in (``queued``)."""

    lo: np.ndarray
    n: np.ndarray
    demand: np.ndarray
    queue: np.ndarray
    queued: np.ndarray  # the queues some job is in, ascending


def job_arrays(instance: Instance) -> JobArrays:
    """The instance's :class:`JobArrays`, built once per instance (its jobs and queues); a replay
    prices them again at every node of a branch tree."""
    arrays, queues = instance.derived("certificate_job_arrays", lambda inst: (_job_arrays(inst), inst.queues))
    return arrays if queues is instance.queues else _job_arrays(instance)


def _job_arrays(instance: Instance) -> JobArrays:
    jobs = instance.jobs
    lo, hi = instance.role_bounds()  # (J, 2) each; a one-role job's second slot 0 and 0: one count, 0
    lo, n = lo.copy(), np.maximum(0, hi - lo + 1)
    demand = instance.role_demands().copy()  # (J, 2, R)
    queue_of = {q.name: k for k, q in enumerate(instance.queues or [])}
    queue = np.array([queue_of[j.queue] if j.queue is not None and j.queue in queue_of else -1 for j in jobs],
                     dtype=np.int64)
    return JobArrays(lo, n, demand, queue, np.unique(queue[queue >= 0]))


def configuration_blocks(instance: Instance, cost: CostGrid, data: JobArrays):
    """Every job's configurations within its roles' bounds, on every type it can run on,
    as flat arrays, a block of jobs at a time: yields (t, owner (N,) job index, c0, c1 (N,)
    counts, cost (N,) the job's cost there, inf where not allowed). Counts are built in
    numpy; the cost is one call of ``cost`` per job and type."""
    total = configuration_count(instance)
    if total > MAX_REPLAY_CONFIGURATIONS:
        raise TooLargeToReplay(f"{total:,} configurations (the replay enumerates at most {MAX_REPLAY_CONFIGURATIONS:,})")
    jobs = instance.jobs
    J = len(jobs)
    typed = instance.typed
    kinds = instance.accelerators if typed else [None]
    lo, n = data.lo, data.n
    size = n[:, 0] * n[:, 1]
    ends = np.cumsum(size)
    start = 0
    while start < J:
        # the jobs whose configurations fit the block (at least one job)
        stop = max(start + 1, int(np.searchsorted(ends, (ends[start - 1] if start else 0) + BLOCK_CONFIGURATIONS,
                                                  side="right")))
        sizes = size[start:stop]
        owner = np.repeat(np.arange(start, stop), sizes)
        offset = np.concatenate([[0], np.cumsum(sizes)])
        k = np.arange(int(offset[-1]), dtype=np.int64) - np.repeat(offset[:-1], sizes)
        n1 = np.maximum(n[start:stop, 1], 1)
        if np.all(n1 == n1[0]):  # one grid width: a scalar divisor (numpy divides by it 3x faster)
            q = k // int(n1[0])
            r = k - q * int(n1[0])
        else:
            width = np.repeat(n1, sizes)
            q = k // width
            r = k - q * width
        c0 = np.repeat(lo[start:stop, 0], sizes) + q
        c1 = np.repeat(lo[start:stop, 1], sizes) + r
        for t, kind in enumerate(kinds):
            if cost is remaining_time_grid:  # the allocation objective: every job's grid at once, the same floats
                yield t, owner, c0, c1, remaining_time_block(instance, kind, owner, c0, c1)
                continue
            costs = np.full(len(owner), np.inf)
            for j in range(start, stop):
                a, b = int(offset[j - start]), int(offset[j - start + 1])
                if a == b:
                    continue
                job = jobs[j]
                if typed:
                    if instance.speed_on(job, kind) is None:
                        continue
                    job = instance.job_on(job, kind)
                costs[a:b] = cost(instance, job, c0[a:b], c1[a:b])
            yield t, owner, c0, c1, costs
        start = stop


def _enumerated(instance: Instance, cost: CostGrid, data: JobArrays):
    """:func:`configuration_blocks`, enumerated once per instance and cost within a
    :func:`schedopt.claims.replay_session`."""
    session = SESSION.get()
    if session is None:
        return configuration_blocks(instance, cost, data)
    key = (id(instance), cost)
    held = session.get(key)
    if held is None or held[0] is not instance:
        held = (instance, list(configuration_blocks(instance, cost, data)))
        session[key] = held
    return held[1]


def _job_prices(instance: Instance, data: JobArrays, prices: np.ndarray, t: int) -> np.ndarray:
    """(J, R): what a unit of each resource on type t costs job j at row prices ``prices``
    (its type's rows, plus the quota rows of its queue on t), so that a configuration's
    priced use is c0·(d0·P_j) + c1·(d1·P_j) without its use over every row."""
    R = len(instance.resources)
    J = len(instance.jobs)
    out = np.empty((J, R))  # every job's row the type's prices (a filled copy: np.broadcast_to costs more)
    if not instance.typed:
        out[:] = prices[:R]
        return out
    T = len(instance.accelerators)
    out[:] = prices[t * R:(t + 1) * R]
    queued = data.queued
    if not len(queued):
        return out
    quotas = quota_rows(instance)
    for q in queued:
        hit = np.flatnonzero(quotas.member[:, q] & quotas.types[:, t])
        if len(hit):
            extra = np.zeros(R)
            np.add.at(extra, quotas.resource[hit], prices[T * R + hit])
            out[data.queue == q] += extra
    return out


def _priced_use(instance: Instance, data: JobArrays, prices: np.ndarray):
    """t -> (J, 2): each role's per-task demand priced on type t (cached per type)."""
    cache: dict[int, np.ndarray] = {}

    def per_role(t: int) -> np.ndarray:
        if t not in cache:
            P = _job_prices(instance, data, prices, t)
            cache[t] = np.einsum("jkr,jr->jk", data.demand, P)
        return cache[t]

    return per_role


@dataclass
class Domain:
    """Each job's allowed configurations in one leaf of a branch certificate: counts of
    its first and second role within ``lo``..``hi`` (J, 2), types where ``types`` (J, T)."""

    lo: np.ndarray
    hi: np.ndarray
    types: np.ndarray
    admitted: np.ndarray  # (J,) the job is admitted (not paused) in this leaf

    @classmethod
    def everything(cls, instance: Instance) -> "Domain":
        J, T = len(instance.jobs), len(instance.accelerators)
        return cls(np.zeros((J, 2), dtype=np.int64), np.full((J, 2), np.iinfo(np.int64).max, dtype=np.int64),
                   np.ones((J, T), dtype=bool), np.zeros(J, dtype=bool))

    def but(self, **change: Any) -> "Domain":
        """A copy with some arrays replaced."""
        return Domain(**{**{k: getattr(self, k) for k in ("lo", "hi", "types", "admitted")}, **change})

    def allows(self, t: "int | np.ndarray", owner: np.ndarray, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
        """(N,) bool: configurations (``owner``, counts ``c0``, ``c1``, on type(s) ``t``) this domain allows."""
        return ((c0 >= self.lo[owner, 0]) & (c0 <= self.hi[owner, 0]) & (c1 >= self.lo[owner, 1])
                & (c1 <= self.hi[owner, 1]) & self.types[owner, t])


def lagrangian_cost_bound(instance: Instance, lam: np.ndarray, cost: CostGrid, *, admit: int | None,
                          nu: float, domain: Domain | None = None,
                          blocks: "list | ConfigurationTable | None" = None) -> float:
    """L(λ, ν) in the problem's cost units (a lower bound on Σ cost of every plan
    admitting at least ``admit`` jobs; ``admit`` None or every job: all admitted), over
    the configurations ``domain`` allows (every one without it; a paused job is always
    allowed). ``blocks``: :func:`configuration_blocks`' output (or its :class:`ConfigurationTable`),
    when the caller enumerated it once."""
    J = len(instance.jobs)
    every = admit is None or admit >= J
    m = priced_minimum(instance, lam, cost, blocks, domain)
    if every:
        total = float(m.sum())  # a job without an allowed configuration makes L = +inf: no plan admits all
    else:
        must = domain.admitted if domain is not None else np.zeros(J, dtype=bool)
        with np.errstate(invalid="ignore"):
            terms = np.where(must, m - nu, np.minimum(0.0, m - nu))
        total = float(terms.sum()) + nu * float(admit)  # type: ignore[arg-type]
    return total - float(lam @ capacity_of(instance))


#: a knapsack-lagrangian replay runs its dynamic programme over a type's capacity row only when the
#: row's capacity, floored, is at most this many units (GPUs: any cluster; CPU cores or GB may not be)
MAX_KNAPSACK_CAPACITY = 100_000
#: ... and while its work (configurations × capacity units, all rows and types together) stays below this
MAX_KNAPSACK_WORK = 300_000_000


def job_price_vector(instance: Instance, prices: dict[str, float] | None, *, signed: bool) -> np.ndarray:
    """μ (J,) from a proof's ``job_prices`` (job id -> price; 0 for jobs not named); ValueError for
    an unknown job, a price that is not finite, or (unless ``signed``) a negative one."""
    prices = prices or {}
    unknown = sorted(set(prices) - set(instance.job_index))
    if unknown:
        raise ValueError(f"job_prices name unknown jobs {unknown[:5]}")
    mu = np.zeros(len(instance.jobs))
    for job_id, value in prices.items():
        mu[instance.job_index[job_id]] = float(value)
    if not np.all(np.isfinite(mu)) or (not signed and np.any(mu < 0)):
        raise ValueError(f"job_prices must be finite{'' if signed else ' and >= 0'}")
    return mu


def _knapsack_counts(owner: np.ndarray, weight: np.ndarray, value: np.ndarray, capacity: int, most: int,
                     picks: list | None = None) -> np.ndarray:
    """F (most + 1,): F[n] the least Σ value over configurations taken, at most one per owner (sorted),
    Σ weight <= capacity (integer weights >= 0), exactly n taken (F[most]: at least ``most``); inf where
    no such choice exists. ``picks``: filled with, per owner, its configurations' (index, where taking it
    improved a state from n - 1 to n, where from ``most`` to ``most``), for :func:`_walk_back`."""
    keep = np.flatnonzero(weight <= capacity)
    best = np.full((capacity + 1, most + 1), np.inf)  # least value within c units taking n
    best[:, 0] = 0.0
    if not len(keep):
        return best[capacity]
    own = owner[keep]
    if len(own) == 1 or bool(np.all(own[1:] != own[:-1])):  # one configuration per owner (rigid jobs)
        got = _knapsack_by_weight(keep, owner, weight, value, capacity, most, best, picks)
        if got is not None:
            return got
    starts = np.flatnonzero(np.r_[True, own[1:] != own[:-1]])
    ends = np.r_[starts[1:], len(own)]
    for a, b in zip(starts.tolist(), ends.tolist()):
        old = best if b - a == 1 else best.copy()  # one configuration: its states read the old table first
        taken = []
        for i in range(a, b):
            k = int(keep[i])
            w, v = int(weight[k]), float(value[k])
            up = at_most = None
            grow = old[: capacity + 1 - w, :-1] + v if most else None  # both read the old table first
            stay = old[: capacity + 1 - w, most] + v if v < 0 else None
            if grow is not None:
                up = grow < best[w:, 1:]
                best[w:, 1:][up] = grow[up]
            if stay is not None:  # at ``most`` taken already, one more keeps the count at ``most``: worth it below 0
                at_most = stay < best[w:, most]
                best[w:, most][at_most] = stay[at_most]
            taken.append((k, up, at_most))
        if picks is not None:
            picks.append((int(own[a]), taken))
    return best[capacity]


class _ByWeight:
    """What :func:`_knapsack_by_weight` took, for :func:`_walk_back`: per weight class (in the order
    the table grew) its weight, its configurations' owners by value, the prefix sums of their values
    and the table before the class (the walk back finds how many of the class a state took)."""

    def __init__(self) -> None:
        self.classes: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []


#: the largest (k, c) array :func:`_knapsack_by_weight` builds for one class (each count k of the
#: class at each capacity c); above it the table grows a configuration at a time
BY_WEIGHT_CELLS = 2_000_000


def _knapsack_by_weight(keep: np.ndarray, owner: np.ndarray, weight: np.ndarray, value: np.ndarray, capacity: int,
                        most: int, best: np.ndarray, picks: list | None) -> np.ndarray | None:
    """:func:`_knapsack_counts` where every owner has one configuration (``keep``: those within
    ``capacity``), by weight class: configurations of one weight differ only in value, so taking k
    of a class takes its k cheapest (prefix sums of its sorted values), and the table grows by a
    class at a time, a few array operations per k. None when a class's (k, c) arrays would exceed
    BY_WEIGHT_CELLS."""
    w_all = weight[keep].astype(np.int64)
    v_all = value[keep].astype(float)
    record = _ByWeight() if picks is not None else None
    classes = []
    for w in np.unique(w_all).tolist():
        in_class = np.flatnonzero(w_all == w)
        order = in_class[np.argsort(v_all[in_class], kind="stable")]
        top = len(order) if w == 0 else min(len(order), capacity // w)
        if (top + 1) * (capacity + 1) > BY_WEIGHT_CELLS:
            return None
        classes.append((w, order, top))
    for w, order, top in classes:
        prefix = np.concatenate([[0.0], np.cumsum(v_all[order])])[:top + 1]  # Σ of the k cheapest
        ks = np.arange(top + 1)
        rows = np.arange(capacity + 1)[None, :] - w * ks[:, None]  # (k, c): the row k of the class came from
        rows = np.where(rows >= 0, rows, capacity + 1)  # the row past the table: no such state
        padded = np.vstack([best, np.full((1, most + 1), np.inf)])
        new = best.copy()  # k = 0: the table as it was
        for k in range(1, min(top, most - 1) + 1):  # n0 + k < most: count n0 + k
            np.minimum(new[:, k:most], padded[rows[k], :most - k] + prefix[k], out=new[:, k:most])
        # n0 + k >= most: at least ``most``, the least over n0 >= most - k of each row k came from
        suffix = np.minimum.accumulate(padded[:, ::-1], axis=1)[:, ::-1]  # (c, j): least over n0 >= j
        new[:, most] = (suffix[rows, np.maximum(0, most - ks)[:, None]] + prefix[:, None]).min(axis=0)
        if record is not None:
            record.classes.append((w, owner[keep[order]], prefix, best))
        best = new
    if picks is not None:
        picks.append(record)
    return best[capacity]


def _walk_back(picks: list, weight: np.ndarray, capacity: int, most: int, n: int, chosen: np.ndarray) -> None:
    """Add 1 to ``chosen`` for each owner an optimal choice of :func:`_knapsack_counts` (run with
    ``most``) takes, from the state (``capacity``, ``n``): per owner, the last update that wrote the
    state (its configurations in reverse; for one, its update at ``most`` came after the other)."""
    c = capacity
    if picks and isinstance(picks[0], _ByWeight):  # by weight class: the k cheapest of each, last class first
        for w, owners, prefix, before in reversed(picks[0].classes):
            best_k, best_n0, least = 0, n, math.inf
            for k in range(len(prefix)):  # the first (k, n0) whose candidate is the state's value
                if c - w * k < 0:
                    break
                n0s = [n - k] if n < most else list(range(max(0, most - k), most + 1))
                for n0 in n0s:
                    if n0 >= 0 and before[c - w * k, n0] + prefix[k] < least:
                        best_k, best_n0, least = k, n0, before[c - w * k, n0] + prefix[k]
            if best_k:
                chosen[owners[:best_k]] += 1  # one configuration per owner: the owners are distinct
            c, n = c - w * best_k, best_n0
        return
    for j, taken in reversed(picks):
        for k, up, at_most in reversed(taken):
            w = int(weight[k])
            if c < w:
                continue
            if n == most and at_most is not None and at_most[c - w]:
                chosen[j] += 1
                c -= w
                break
            if n >= 1 and up is not None and up[c - w, n - 1]:
                chosen[j] += 1
                c, n = c - w, n - 1
                break


def knapsack_cost_bound(instance: Instance, mu: np.ndarray, cost: CostGrid, *, admit: int | None,
                        blocks: list | None = None, chosen: np.ndarray | None = None,
                        max_work: int = MAX_KNAPSACK_WORK) -> float | None:
    """The Lagrangian bound with only the one-configuration-per-job rows priced (μ (J,), free in
    sign when every job is admitted, else >= 0): min over n_1 + ... + n_T >= admit of
    Σ_t KP_t(n_t) − Σ_j μ_j, where KP_t(n) is the least Σ (c + μ_j) over n configurations on
    type t, at most one per job, within a capacity row of t (weights and capacity floored to
    integers: a relaxation; for each n the largest over t's rows; quota rows dropped). Every plan
    admitting at least ``admit`` jobs (None: every job) costs at least this. None when a type has
    no row small enough (MAX_KNAPSACK_CAPACITY) or the work would exceed ``max_work``.
    ``chosen`` (J,): how many types a minimising choice takes each job on (a subgradient: chosen − 1)."""
    J = len(instance.jobs)
    most = J if admit is None else int(admit)
    data = job_arrays(instance)
    R = len(instance.resources)
    cap = capacity_of(instance)
    by_type: dict[int, list] = {}
    for t, owner, c0, c1, costs in (blocks if blocks is not None else _enumerated(instance, cost, data)):
        ok = np.isfinite(costs)
        by_type.setdefault(t, []).append((owner[ok], c0[ok], c1[ok], costs[ok]))
    work = 0
    total = np.full(most + 1, np.inf)  # least Σ over the types so far, by jobs taken (``most``: at least)
    total[0] = 0.0
    trail = []  # per type: its rows' (F, picks, weight, units), and per combined count the count it took and from
    for t, parts in sorted(by_type.items()):
        owner = np.concatenate([p[0] for p in parts])
        if not len(owner):
            continue
        c0, c1, costs = (np.concatenate([p[i] for p in parts]) for i in (1, 2, 3))
        order = np.argsort(owner, kind="stable")
        owner, c0, c1, costs = owner[order], c0[order], c1[order], costs[order]
        value = costs + mu[owner]
        row_cap = cap[t * R:(t + 1) * R] if instance.typed else cap
        n_jobs = len(np.unique(owner))
        rows = []
        for r in range(R):
            units = math.floor(float(row_cap[r]))
            weight = np.floor(c0 * data.demand[owner, 0, r] + c1 * data.demand[owner, 1, r]).astype(np.int64)
            fit = n_jobs if (weight <= 0).any() else units // int(weight.min())
            top = min(most, n_jobs, fit)  # the most jobs type t holds (counted up to ``most``)
            steps = len(owner) * (units + 1) * (top + 1)
            if units > MAX_KNAPSACK_CAPACITY or work + steps > max_work:
                continue
            work += steps
            picks: list | None = [] if chosen is not None else None
            f = np.full(most + 1, np.inf)
            f[:top + 1] = _knapsack_counts(owner, weight, value, units, top, picks)
            rows.append((f, picks, weight, units, top))
        if not rows:
            return None
        f = np.max([row[0] for row in rows], axis=0)  # each row's F bounds KP_t(n): so does the largest
        combined, took, came = _min_plus(total, f, most)
        trail.append((rows, took, came))
        total = combined
    bound = float(total[most])
    if chosen is not None and math.isfinite(bound):
        m = most
        for rows, took, came in reversed(trail):
            b = int(took[m])
            f, picks, weight, units, top = max(rows, key=lambda row: float(row[0][b]))
            _walk_back(picks, weight, units, top, b, chosen)
            m = int(came[m])
    return bound - float(mu.sum())


def _min_plus(total: np.ndarray, f: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The types so far (``total`` (most + 1,): least Σ by jobs taken, ``most``: at least) joined with
    one more type (``f``, the same): combined[m] the least total[n] + f[b] over n + b = m (m < most)
    or n + b >= most (m = most), with the b (``took``) and n (``came``) of the first least pair in
    (n, b) order (-1 where none is finite)."""
    cand = total[:, None] + f[None, :]  # (n, b)
    n_of, b_of = np.indices(cand.shape)
    reach = np.minimum(n_of + b_of, most)  # the count each pair lands on
    combined = np.full(most + 1, np.inf)
    took = np.full(most + 1, -1, dtype=np.int64)
    came = np.full(most + 1, -1, dtype=np.int64)
    flat, land = cand.ravel(), reach.ravel()
    order = np.lexsort((np.arange(len(flat)), flat, land))  # by count, then value, then (n, b) order
    first = order[np.r_[True, land[order][1:] != land[order][:-1]]]  # each count's least pair
    ok = np.isfinite(flat[first])
    m = land[first][ok]
    combined[m], took[m], came[m] = flat[first][ok], b_of.ravel()[first][ok], n_of.ravel()[first][ok]
    return combined, took, came


def proof_admit(instance: Instance, plan: Any, proof: Any) -> int:
    """The count a proof's bound covers (its ``admit``; every job without one); ValueError when it is
    outside [0, jobs] or above the plan's own admitted count (the bound covers plans admitting at
    least that many, which need not include the optimum)."""
    J = len(instance.jobs)
    admit = J if proof.admit is None else int(proof.admit)
    if not 0 <= admit <= J:
        raise ValueError(f"admit {admit} outside [0, {J}]")
    if admit > len(plan.allocation):
        raise ValueError(f"admit {admit} > the {len(plan.allocation)} jobs the plan admits (the bound covers "
                         f"plans admitting at least {admit}, which need not include the optimum)")
    return admit


def knapsack_replay(cost: CostGrid, sense: str) -> Callable:
    """The replay of a ``knapsack-lagrangian`` proof (docs/certificates.md)."""

    def replay(instance: Instance, plan, proof) -> float:
        if proof.prices or proof.tree is not None:
            raise ValueError("a knapsack-lagrangian proof prices jobs (job_prices), not resources")
        J = len(instance.jobs)
        admit = proof_admit(instance, plan, proof)
        if proof.admit_price is not None:
            raise ValueError("a knapsack-lagrangian proof keeps the admission row: no admit_price")
        every = admit >= J
        mu = job_price_vector(instance, proof.job_prices, signed=every)
        bound = knapsack_cost_bound(instance, mu, cost, admit=None if every else admit)
        if bound is None:
            raise TooLargeToReplay("a type's capacity rows are too large for the knapsack replay "
                                   f"(at most {MAX_KNAPSACK_CAPACITY:,} units, {MAX_KNAPSACK_WORK:,} steps)")
        return bound if sense == "min" else -bound

    return replay


class ConfigurationTable:
    """:func:`configuration_blocks`' configurations in one set of flat arrays grouped by job (the
    blocks' order within a job): type ``t``, ``owner``, counts ``c0``, ``c1`` and ``costs`` (N,),
    where each job's run starts (``starts``, its job ``run_owner``). A branch tree's replay prices
    them once per leaf: one pass over the table, not one per block and type."""

    def __init__(self, blocks: list) -> None:
        parts = [np.concatenate([b[i] for b in blocks]) if blocks else np.zeros(0) for i in range(1, 5)]
        types = (np.concatenate([np.full(len(b[1]), b[0], dtype=np.int64) for b in blocks]) if blocks
                 else np.zeros(0, dtype=np.int64))
        order = np.argsort(parts[0], kind="stable")
        self.owner, self.c0, self.c1, self.costs = (a[order] for a in parts)
        self.owner = self.owner.astype(np.int64)
        self.t = types[order]
        self.starts = _starts(self.owner) if len(self.owner) else np.zeros(0, dtype=np.int64)
        self.run_owner = self.owner[self.starts]
        self.kinds = np.unique(self.t).tolist()

    def priced_minimum(self, J: int, priced_role: Callable[[int], np.ndarray], domain: "Domain | None",
                       minus: np.ndarray | None = None) -> np.ndarray:
        """m (J,): each job's least cost + c0·a_t[j, 0] + c1·a_t[j, 1] (− ``minus`` (N,), each
        configuration's own term, when given) over the configurations ``domain`` allows (all without
        it), a_t = ``priced_role(t)`` (J, 2); inf: none allowed."""
        m = np.full(J, np.inf)
        if not len(self.owner):
            return m
        a = np.zeros((self.kinds[-1] + 1, J, 2))
        for k in self.kinds:
            a[k] = priced_role(k)
        at = a[self.t, self.owner]  # (N, 2)
        priced = self.costs + self.c0 * at[:, 0] + self.c1 * at[:, 1]
        if minus is not None:
            priced = priced - minus
        if domain is not None:
            priced = np.where(domain.allows(self.t, self.owner, self.c0, self.c1), priced, np.inf)
        least = np.fmin.reduceat(priced, self.starts)  # fmin skips NaN; a job of NaN only gives NaN
        m[self.run_owner] = np.where(np.isnan(least), np.inf, least)
        return m


def instance_table(instance: Instance, cost: CostGrid) -> ConfigurationTable:
    """Every allowed configuration of ``instance`` (:func:`configuration_blocks`, enumerated once per
    replay session) as one :class:`ConfigurationTable`."""
    return ConfigurationTable(list(_enumerated(instance, cost, job_arrays(instance))))


def configuration_table(blocks: "list | ConfigurationTable") -> ConfigurationTable:
    """``blocks`` as a :class:`ConfigurationTable` (built when a list of blocks is given)."""
    return blocks if isinstance(blocks, ConfigurationTable) else ConfigurationTable(list(blocks))


def priced_minimum(instance: Instance, lam: np.ndarray, cost: CostGrid,
                   blocks: "list | ConfigurationTable | None" = None, domain: Domain | None = None) -> np.ndarray:
    """m (J,): each job's least c + λ·u over its allowed configurations and types (those ``domain``
    allows, when given; inf: none). ``blocks``: :func:`configuration_blocks`' output or its
    :class:`ConfigurationTable`, when enumerated once (without it, a block at a time: the memory
    of one block)."""
    J = len(instance.jobs)
    data = job_arrays(instance)
    priced_role = _priced_use(instance, data, lam)
    with np.errstate(invalid="ignore", over="ignore"):
        if blocks is not None:
            return configuration_table(blocks).priced_minimum(J, priced_role, domain)
        m = np.full(J, np.inf)
        for block in _enumerated(instance, cost, data):
            m = np.fmin(m, ConfigurationTable([block]).priced_minimum(J, priced_role, domain))
        return m


def least_by_owner(out: np.ndarray, owner: np.ndarray, values: np.ndarray) -> None:
    """out[j] = min(out[j], the least of ``values`` where ``owner`` is j), in place, a NaN value
    counting as +inf (not allowed). The blocks hold each job's configurations together (``owner``
    non-decreasing), so one reduceat does it; ``np.minimum.at`` otherwise (the same minimum,
    5-10x slower)."""
    if not len(owner):
        return
    if np.any(owner[1:] < owner[:-1]):
        np.minimum.at(out, owner, np.where(np.isnan(values), np.inf, values))
        return
    starts = _starts(owner)
    idx = owner[starts]
    least = np.fmin.reduceat(values, starts)  # fmin skips NaN; a job of NaN only gives NaN
    out[idx] = np.fmin(out[idx], np.where(np.isnan(least), np.inf, least))


def _starts(owner: np.ndarray) -> np.ndarray:
    """Where each owner's run begins in a non-decreasing ``owner``."""
    return np.flatnonzero(np.concatenate([[True], owner[1:] != owner[:-1]]))


def admitted_count_bound(instance: Instance, mu: np.ndarray, cost: CostGrid) -> float:
    """μ·C + Σ_j max(0, 1 - min_x μ·u_j(x)) over the jobs' allowed configurations that fit every
    capacity row alone (:func:`fits_alone`; one that does not is in no plan)."""
    J = len(instance.jobs)
    data = job_arrays(instance)
    priced_role = _priced_use(instance, data, mu)
    least = np.full(J, np.inf)
    for t, owner, c0, c1, costs in _enumerated(instance, cost, data):
        a = priced_role(t)
        usable = np.isfinite(costs)
        usable[usable] = fits_alone(instance, data, t, owner[usable], c0[usable], c1[usable])
        if len(owner) and not np.any(owner[1:] < owner[:-1]) and np.all(a >= 0):
            # μ·u is non-decreasing in both counts (prices and demands >= 0), so a job whose
            # least counts (its run's first configuration) are usable has its minimum there
            first = _starts(owner)
            corner = usable[first]
            o = owner[first[corner]]
            np.minimum.at(least, o, c0[first[corner]] * a[o, 0] + c1[first[corner]] * a[o, 1])
            if corner.all():
                continue
            rest = np.isin(owner, owner[first[~corner]])  # the other jobs: every usable configuration
            allowed = rest & usable
        else:
            allowed = usable
        o = owner[allowed]
        least_by_owner(least, o, c0[allowed] * a[o, 0] + c1[allowed] * a[o, 1])
    ok = np.isfinite(least)
    return float(mu @ capacity_of(instance)) + float(np.maximum(0.0, 1.0 - least[ok]).sum())


def fits_alone(instance: Instance, data: JobArrays, t: int, owner: np.ndarray, c0: np.ndarray,
               c1: np.ndarray) -> np.ndarray:
    """(n,) whether each configuration (job ``owner`` at counts ``c0``, ``c1`` on type ``t``) fits
    every capacity row alone: its type's rows and its queue's quota rows on that type."""
    cap = capacity_of(instance)
    R, T = len(instance.resources), len(instance.accelerators)
    base = cap[t * R:(t + 1) * R] if instance.typed else cap
    fits = np.ones(len(owner), dtype=bool)
    if not len(owner):
        return fits
    for r in range(R):  # one resource at a time: no (n, R) array over millions of configurations
        fits &= c0 * data.demand[owner, 0, r] + c1 * data.demand[owner, 1, r] <= base[r]
    quotas = quota_rows(instance) if instance.typed and instance.queues else None
    if quotas is not None and quotas.Q:  # each configuration within its queue's quota rows on t
        queue = data.queue[owner]
        for q in np.unique(queue[queue >= 0]).tolist():
            mine = np.flatnonzero(queue == q)
            o, a, b = owner[mine], c0[mine], c1[mine]
            for h in np.flatnonzero(quotas.member[:, q] & quotas.types[:, t]).tolist():
                r = int(quotas.resource[h])
                fits[mine] &= a * data.demand[o, 0, r] + b * data.demand[o, 1, r] <= cap[T * R + h]
    return fits


def first_job_that_fits(instance: Instance, cost: CostGrid) -> str | None:
    """A job with an allowed configuration that fits every capacity row alone (on some
    type, within its queue's quota), or None: whether a plan admitting one job exists."""
    data = job_arrays(instance)
    first = len(instance.jobs)
    for t, owner, c0, c1, costs in configuration_blocks(instance, cost, data):
        ok = np.flatnonzero(np.isfinite(costs))
        if not len(ok):
            continue
        fits = fits_alone(instance, data, t, owner[ok], c0[ok], c1[ok])
        if fits.any():
            first = min(first, int(owner[ok][fits].min()))
    return instance.jobs[first].id if first < len(instance.jobs) else None


def finite_nonneg(value: float | None, what: str) -> float:
    v = 0.0 if value is None else float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{what} must be finite and >= 0, got {value}")
    return v


def lagrangian_replay(cost: CostGrid, sense: str) -> Callable:
    """The replay of a ``lagrangian`` proof for a count problem whose per-job
    cost is ``cost`` (its objective term, negated for a maximisation)."""

    def replay(instance: Instance, plan, proof) -> float:
        lam = price_vector(instance, proof.prices)
        admit = proof_admit(instance, plan, proof)
        nu = finite_nonneg(proof.admit_price, "admit_price")
        bound = lagrangian_cost_bound(instance, lam, cost, admit=admit, nu=nu)
        return bound if sense == "min" else -bound

    return replay


#: the most leaves and the deepest path a branch certificate may have (a replay's work is bounded)
MAX_BRANCH_LEAVES = 20_000
#: (a plan file nests at most schedopt.io.MAX_DEPTH = 64 levels; the tree starts 4 levels down)
MAX_BRANCH_DEPTH = 50


def branch_leaves(instance: Instance, tree: Any) -> list[tuple[Domain, dict]]:
    """The leaves of a branch certificate's ``tree``, each with the domain its path allows.

    A node is a leaf ``{prices, admit_price}``, or splits one job's configurations in two:
    ``{job, role, at, low, high}`` (the role's count <= at, and >= at + 1) or
    ``{job, accelerator, on, off}`` (on that type, and on any other) or
    ``{job, admitted, paused}`` (the job runs, and it does not). The two children
    cover every configuration of their parent, so the leaves cover every plan: the bound
    is the least of the leaves' Lagrangian bounds. ValueError names what is malformed."""
    index = instance.job_index
    kinds = {k: t for t, k in enumerate(instance.accelerators)}

    def split(node: dict, dom: Domain, path: str) -> list | None:
        keys = set(node)
        if keys not in ({"job", "role", "at", "low", "high"}, {"job", "admitted", "paused"},
                        {"job", "accelerator", "on", "off"}):
            return None
        job_id = node.get("job")
        if job_id not in index:
            raise ValueError(f"{path}.job: unknown job {job_id!r}")
        j = index[job_id]
        job = instance.jobs[j]
        if keys == {"job", "role", "at", "low", "high"}:
            role = node["role"]
            if role not in job.role_names[:2]:
                raise ValueError(f"{path}.role: job {job_id!r} has no role {role!r}")
            at = node["at"]
            if isinstance(at, bool) or not isinstance(at, int):
                raise ValueError(f"{path}.at: expected an integer, got {at!r}")
            k = job.role_names.index(role)
            low = dom.but(hi=dom.hi.copy())
            low.hi[j, k] = min(low.hi[j, k], at)
            high = dom.but(lo=dom.lo.copy())
            high.lo[j, k] = max(high.lo[j, k], at + 1)
            return [(node["low"], low, f"{path}.low"), (node["high"], high, f"{path}.high")]
        if keys == {"job", "admitted", "paused"}:
            admitted = dom.admitted.copy()
            admitted[j] = True
            none = dom.types.copy()
            none[j] = False  # paused: no configuration of the job is used
            return [(node["admitted"], dom.but(admitted=admitted), f"{path}.admitted"),
                    (node["paused"], dom.but(types=none), f"{path}.paused")]
        kind = node["accelerator"]
        if kind not in kinds or not instance.typed:
            raise ValueError(f"{path}.accelerator: unknown type {kind!r}")
        on_types, off_types = dom.types.copy(), dom.types.copy()
        on_types[j] &= np.arange(len(kinds)) == kinds[kind]
        off_types[j, kinds[kind]] = False
        return [(node["on"], dom.but(types=on_types), f"{path}.on"), (node["off"], dom.but(types=off_types), f"{path}.off")]

    return branch_tree_leaves(tree, Domain.everything(instance), {"prices", "admit_price", "class_prices"}, split,
                              max_leaves=MAX_BRANCH_LEAVES, max_depth=MAX_BRANCH_DEPTH,
                              shapes="a leaf {prices, admit_price, class_prices} or splits {job, role, at, low, high}, "
                                     "{job, accelerator, on, off} or {job, admitted, paused}")


@dataclass
class SizeClasses:
    """Every configuration's size class on one resource pooled over the types (its use of the
    resource, c0·d0 + c1·d1, floored to an integer: ``size`` (N,), in the order of a
    :class:`ConfigurationTable`), the classes ``sizes`` (S,) ascending, how many jobs have an allowed
    configuration in each (``jobs`` (S,)), and the range [``lo``, ``hi``] (S,) that every plan admitting
    at least ``admit`` jobs within the pooled capacity (floored, ``capacity``) keeps each class's count
    of admitted jobs in (lo > hi: no such plan)."""

    size: np.ndarray
    sizes: np.ndarray
    jobs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    capacity: int
    admit: int

    @property
    def forced_by_count(self) -> np.ndarray:
        """(S,) the least count of each class the admission row alone forces (admit less the other
        classes' jobs): the ranges without the pooled capacity are [forced_by_count, jobs]."""
        return np.maximum(0, self.admit - (self.jobs.sum() - self.jobs))

    @property
    def cut(self) -> np.ndarray:
        """The classes (indices) whose range the pooled capacity narrows."""
        return np.flatnonzero((self.lo > self.forced_by_count) | (self.hi < self.jobs))

    @property
    def tight(self) -> int:
        """How much the pooled capacity cuts the ranges: Σ (lo − forced_by_count) + (jobs − hi)."""
        return int((self.lo - self.forced_by_count + self.jobs - self.hi).sum())

    def cut_place(self, size: np.ndarray) -> np.ndarray:
        """(N,) each configuration's place among the :attr:`cut` classes by its pooled ``size`` (N,;
        :func:`pooled_sizes`), -1 where its class is not cut: the row an LP over them puts it in."""
        cut = self.cut
        place = np.full(len(self.sizes), -1, dtype=np.int64)
        place[cut] = np.arange(len(cut))
        return place[np.searchsorted(self.sizes, size)]

    def cut_prices(self, pi: np.ndarray) -> dict[str, float]:
        """A proof's ``class_prices`` from π (C,) on the :attr:`cut` classes, in their order: {size: π_s}."""
        return {str(int(self.sizes[i])): float(p) for i, p in zip(self.cut.tolist(), np.asarray(pi).tolist())}


def pooled_capacity(instance: Instance, r: int) -> float:
    """Resource ``r``'s capacity limit summed over the types (quota rows left out)."""
    cap = capacity_of(instance)
    if not instance.typed:
        return float(cap[r])
    R = len(instance.resources)
    return float(sum(cap[t * R + r] for t in range(len(instance.accelerators))))


def pooled_sizes(demand: np.ndarray, owner: np.ndarray, c0: np.ndarray, c1: np.ndarray, r: int) -> np.ndarray:
    """(N,) each configuration's size class on resource ``r``: c0·d0_r + c1·d1_r of its job (``owner``;
    ``demand`` :class:`JobArrays`' (J, 2, R)), floored to an integer (its use on whichever type)."""
    return np.floor(c0 * demand[owner, 0, r] + c1 * demand[owner, 1, r]).astype(np.int64)


def class_ranges(size: np.ndarray, owner: np.ndarray, n_jobs: int, capacity: int,
                 admit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(sizes (S,) ascending, jobs (S,), lo (S,), hi (S,)) of the configurations given by their integer
    ``size`` and ``owner`` (job index < ``n_jobs``): :func:`size_classes`' ranges within the pooled
    ``capacity`` for plans admitting at least ``admit`` jobs (lo > hi: none does)."""
    key = n_jobs + 1
    pairs = np.unique(size * key + owner)  # each (size, job) once
    sizes, jobs = np.unique(pairs // key, return_counts=True)
    S = len(sizes)
    lo, hi = np.ones(S, dtype=np.int64), np.zeros(S, dtype=np.int64)
    for i in range(S):
        others = np.repeat(np.delete(sizes, i), np.delete(jobs, i))  # ascending: sizes are
        least = np.concatenate([[0], np.cumsum(others)])  # least[m]: the least pooled use of m other jobs
        k = np.arange(int(jobs[i]) + 1)
        need = np.maximum(0, admit - k)
        ok = need <= len(others)
        ok[ok] &= sizes[i] * k[ok] + least[need[ok]] <= capacity
        if ok.any():
            lo[i], hi[i] = int(k[ok].min()), int(k[ok].max())
    return sizes, jobs, lo, hi


def size_classes(instance: Instance, table: ConfigurationTable, r: int, admit: int) -> SizeClasses:
    """The :class:`SizeClasses` of resource ``r`` over ``table``'s allowed configurations.

    A plan admitting n_s jobs at a configuration of class s (n_s <= the jobs having one there),
    Σ n_s >= ``admit``, uses at least Σ s·n_s of the pooled capacity. So n_s = k is possible only
    if s·k plus the least pooled use of admit − k jobs from the other classes (the smallest sizes
    first, each class counted as often as it has jobs) fits: a convex function of k, so the
    possible k form the range [lo, hi]."""
    allowed = np.isfinite(table.costs)
    size = np.where(allowed, pooled_sizes(job_arrays(instance).demand, table.owner, table.c0, table.c1, r), 0)
    capacity = math.floor(pooled_capacity(instance, r))
    sizes, jobs, lo, hi = class_ranges(size[allowed], table.owner[allowed], len(instance.jobs), capacity, admit)
    return SizeClasses(size, sizes, jobs, lo, hi, capacity, admit)


def class_price_vector(classes: SizeClasses, prices: dict[str, float] | None) -> np.ndarray:
    """π (S,) over ``classes.sizes`` from a proof's ``class_prices`` (size -> price, any sign; sizes
    that are no class price nothing); ValueError for a key that is not a size or a price not finite."""
    pi = np.zeros(len(classes.sizes))
    where = {int(s): i for i, s in enumerate(classes.sizes.tolist())}
    for key, value in (prices or {}).items():
        try:
            size = int(key)
        except ValueError:
            raise ValueError(f"class_prices: {key!r} is not an integer size") from None
        if str(size) != str(key).strip() or size < 0:
            raise ValueError(f"class_prices: {key!r} is not an integer size >= 0")
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"class_prices[{key!r}] must be finite, got {value}")
        if size in where:
            pi[where[size]] = v
    return pi


def size_class_bound(instance: Instance, lam: np.ndarray, cost: CostGrid, *, admit: int | None, nu: float,
                     resource: str, class_prices: dict[str, float] | None,
                     table: ConfigurationTable | None = None, classes: SizeClasses | None = None,
                     domain: Domain | None = None) -> float:
    """L(λ, ν, π): the Lagrangian bound with prices π_s on the size classes' ranges of ``resource``
    (:func:`size_classes`) beside λ on the capacities and ν on the admission row. Every plan
    admitting at least ``admit`` jobs keeps each class's count n_s in [lo_s, hi_s], so
    π_s·(n_s − b_s) >= 0 with b_s = lo_s where π_s >= 0, hi_s where π_s < 0; its cost is at least
    Σ_A (c_j − π_s(j)) + Σ_s π_s·b_s, and the Lagrangian bound of those costs follows as for
    ``lagrangian``. ``table`` and ``classes``: :func:`instance_table` and :func:`size_classes` of this
    instance, resource and count, when the caller has them. ``domain``: over only the configurations a
    branch leaf allows (a job it admits adds m_j − ν; the ranges hold for every plan, so in every leaf).
    ValueError for an unknown resource."""
    if resource not in instance.resources:
        raise ValueError(f"pooled: unknown resource {resource!r}")
    J = len(instance.jobs)
    k = J if admit is None else int(admit)
    data = job_arrays(instance)
    if table is None:
        table = instance_table(instance, cost)
    if classes is None:
        classes = size_classes(instance, table, instance.resources.index(resource), k)
    if np.any(classes.lo > classes.hi):
        return math.inf  # no plan admits that many within the pooled capacity
    pi = class_price_vector(classes, class_prices)
    per_config = pi[np.searchsorted(classes.sizes, classes.size)] if len(classes.sizes) else np.zeros(len(table.owner))
    with np.errstate(invalid="ignore", over="ignore"):
        m = table.priced_minimum(J, _priced_use(instance, data, lam), domain, minus=per_config)
    if k >= J:
        total = float(m.sum())
    else:
        must = domain.admitted if domain is not None else np.zeros(J, dtype=bool)
        with np.errstate(invalid="ignore"):
            total = float(np.where(must, m - nu, np.minimum(0.0, m - nu)).sum()) + nu * float(k)
    b = np.where(pi >= 0, classes.lo, classes.hi)
    return total - float(lam @ capacity_of(instance)) + float(pi @ b)


def size_class_replay(cost: CostGrid, sense: str) -> Callable:
    """The replay of a ``size-class-lagrangian`` proof (docs/certificates.md)."""

    def replay(instance: Instance, plan, proof) -> float:
        if proof.tree is not None or proof.job_prices:
            raise ValueError("a size-class-lagrangian proof prices resources, the admission row and size classes")
        if not proof.pooled:
            raise ValueError("a size-class-lagrangian proof names the resource its classes pool (pooled)")
        lam = price_vector(instance, proof.prices)
        admit = proof_admit(instance, plan, proof)
        nu = finite_nonneg(proof.admit_price, "admit_price")
        bound = size_class_bound(instance, lam, cost, admit=admit, nu=nu, resource=proof.pooled,
                                 class_prices=proof.class_prices)
        return bound if sense == "min" else -bound

    return replay


def branch_replay(cost: CostGrid, sense: str) -> Callable:
    """The replay of a ``branch-lagrangian`` proof: the least Lagrangian bound over the
    leaves of its tree, each over the configurations its path allows."""

    def replay(instance: Instance, plan, proof) -> float:
        if proof.tree is None:
            raise ValueError("a branch-lagrangian proof needs its tree")
        if proof.prices:
            raise ValueError("a branch-lagrangian proof carries its prices in its leaves")
        admit = proof_admit(instance, plan, proof)
        leaves = branch_leaves(instance, proof.tree)
        table = ConfigurationTable(list(_enumerated(instance, cost, job_arrays(instance))))  # priced once per leaf
        classes = None  # the size classes' ranges hold for every plan, so in every leaf
        if proof.pooled is not None:
            if proof.pooled not in instance.resources:
                raise ValueError(f"pooled: unknown resource {proof.pooled!r}")
            k = len(instance.jobs) if admit is None else int(admit)
            classes = size_classes(instance, table, instance.resources.index(proof.pooled), k)
        least = math.inf
        for dom, leaf in leaves:
            lam = price_vector(instance, leaf.get("prices"))
            nu = finite_nonneg(leaf.get("admit_price"), "admit_price")
            if leaf.get("class_prices") is not None:
                if not isinstance(leaf["class_prices"], dict):
                    raise ValueError("a leaf's class_prices map sizes to prices")
                if classes is None:
                    raise ValueError("a leaf's class_prices need the proof's pooled resource")
                bound = size_class_bound(instance, lam, cost, admit=admit, nu=nu, resource=proof.pooled,
                                         class_prices=leaf["class_prices"], table=table, classes=classes, domain=dom)
            else:
                bound = lagrangian_cost_bound(instance, lam, cost, admit=admit, nu=nu, domain=dom, blocks=table)
            least = min(least, bound)
        return least if sense == "min" else -least

    return replay


def admission_replay(cost: CostGrid) -> Callable:
    """The replay of an ``lp-dual`` proof of the admitted count."""

    def replay(instance: Instance, plan, proof) -> float:
        return admitted_count_bound(instance, price_vector(instance, proof.prices), cost)

    return replay


def count_certificates(cost: CostGrid, sense: str) -> dict[str, Replay]:
    """The certificate kinds a count problem replays: ``lagrangian`` proves the objective's
    bound, ``lp-dual`` the admitted count's."""
    return {"lagrangian": Replay("bound", lagrangian_replay(cost, sense)),
            "branch-lagrangian": Replay("bound", branch_replay(cost, sense)),
            "knapsack-lagrangian": Replay("bound", knapsack_replay(cost, sense)),
            "size-class-lagrangian": Replay("bound", size_class_replay(cost, sense)),
            "lp-dual": Replay("admitted_bound", admission_replay(cost))}
