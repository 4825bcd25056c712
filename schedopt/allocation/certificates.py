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
from schedopt.allocation.objectives import objective_of_time
from schedopt.claims import SESSION, Replay, TooLargeToReplay
from schedopt.allocation.rows import capacity_vector, quota_rows, typed_resource_names
from schedopt.instance import Instance, Job
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
    if instance.typed:
        return capacity_limit(capacity_vector(instance))
    return capacity_limit(instance.capacity_total)


#: configurations priced per block (bounds the replay's memory: a block's use is this × rows floats)
BLOCK_CONFIGURATIONS = 1_000_000


def configuration_count(instance: Instance) -> int:
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
    per-task demands ``demand`` (J, 2, R); the queue index of each job (-1: none)."""

    lo: np.ndarray
    n: np.ndarray
    demand: np.ndarray
    queue: np.ndarray


def job_arrays(instance: Instance) -> JobArrays:
    jobs = instance.jobs
    J, R = len(jobs), len(instance.resources)
    lo = np.zeros((J, 2), dtype=np.int64)
    n = np.ones((J, 2), dtype=np.int64)
    demand = np.zeros((J, 2, R))
    queue_of = {q.name: k for k, q in enumerate(instance.queues or [])}
    for j, job in enumerate(jobs):
        for k, name in enumerate(job.role_names[:2]):
            role = job.roles[name]
            lo[j, k], n[j, k] = role.min, max(0, role.max_count - role.min + 1)
            demand[j, k] = instance.vector(role.demand)
    queue = np.array([queue_of[j.queue] if j.queue is not None and j.queue in queue_of else -1 for j in jobs],
                     dtype=np.int64)
    return JobArrays(lo, n, demand, queue)


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
        n1 = np.maximum(n[owner, 1], 1)
        c0 = lo[owner, 0] + k // n1
        c1 = lo[owner, 1] + k % n1
        for t, kind in enumerate(kinds):
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
    if not instance.typed:
        return np.broadcast_to(prices[:R], (J, R)).copy()
    T = len(instance.accelerators)
    out = np.broadcast_to(prices[t * R:(t + 1) * R], (J, R)).copy()
    quotas = quota_rows(instance)
    for q in np.unique(data.queue[data.queue >= 0]):
        hit = np.flatnonzero(quotas.member[:, q] & (quotas.flavor == t))
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

    def allows(self, t: int, owner: np.ndarray, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
        return ((c0 >= self.lo[owner, 0]) & (c0 <= self.hi[owner, 0]) & (c1 >= self.lo[owner, 1])
                & (c1 <= self.hi[owner, 1]) & self.types[owner, t])


def lagrangian_cost_bound(instance: Instance, lam: np.ndarray, cost: CostGrid, *, admit: int | None,
                          nu: float, domain: Domain | None = None, blocks: list | None = None) -> float:
    """L(λ, ν) in the problem's cost units (a lower bound on Σ cost of every plan
    admitting at least ``admit`` jobs; ``admit`` None or every job: all admitted), over
    the configurations ``domain`` allows (every one without it; a paused job is always
    allowed). ``blocks``: :func:`configuration_blocks`' output, when the caller enumerated it once."""
    J = len(instance.jobs)
    every = admit is None or admit >= J
    data = job_arrays(instance)
    priced_role = _priced_use(instance, data, lam)
    m = np.full(J, np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        for t, owner, c0, c1, costs in (blocks if blocks is not None else _enumerated(instance, cost, data)):
            a = priced_role(t)
            priced = costs + c0 * a[owner, 0] + c1 * a[owner, 1]
            if domain is not None:
                priced = np.where(domain.allows(t, owner, c0, c1), priced, np.inf)
            np.minimum.at(m, owner, np.where(np.isnan(priced), np.inf, priced))
    if every:
        total = float(m.sum())  # a job without an allowed configuration makes L = +inf: no plan admits all
    else:
        must = domain.admitted if domain is not None else np.zeros(J, dtype=bool)
        with np.errstate(invalid="ignore"):
            terms = np.where(must, m - nu, np.minimum(0.0, m - nu))
        total = float(terms.sum()) + nu * float(admit)  # type: ignore[arg-type]
    return total - float(lam @ capacity_of(instance))


def admitted_count_bound(instance: Instance, mu: np.ndarray, cost: CostGrid) -> float:
    """μ·C + Σ_j max(0, 1 - min_x μ·u_j(x)) over jobs with an allowed configuration."""
    J = len(instance.jobs)
    data = job_arrays(instance)
    priced_role = _priced_use(instance, data, mu)
    least = np.full(J, np.inf)
    for t, owner, c0, c1, costs in _enumerated(instance, cost, data):
        allowed = np.isfinite(costs)
        a = priced_role(t)
        o = owner[allowed]
        np.minimum.at(least, o, c0[allowed] * a[o, 0] + c1[allowed] * a[o, 1])
    ok = np.isfinite(least)
    return float(mu @ capacity_of(instance)) + float(np.maximum(0.0, 1.0 - least[ok]).sum())


def first_job_that_fits(instance: Instance, cost: CostGrid) -> str | None:
    """A job with an allowed configuration that fits every capacity row alone (on some
    type, within its queue's quota), or None: whether a plan admitting one job exists."""
    cap = capacity_of(instance)
    data = job_arrays(instance)
    quotas = quota_rows(instance) if instance.typed else None
    R, T = len(instance.resources), len(instance.accelerators)
    first = len(instance.jobs)
    for t, owner, c0, c1, costs in configuration_blocks(instance, cost, data):
        ok = np.flatnonzero(np.isfinite(costs))
        if not len(ok):
            continue
        use = c0[ok, None] * data.demand[owner[ok], 0] + c1[ok, None] * data.demand[owner[ok], 1]  # (n, R)
        fits = np.all(use <= cap[t * R:(t + 1) * R] if instance.typed else use <= cap, axis=1)
        if quotas is not None and quotas.Q:  # each configuration within its queue's quota rows on t
            queue = data.queue[owner[ok]]
            for q in np.unique(queue[queue >= 0]):
                hit = np.flatnonzero(quotas.member[:, q] & (quotas.flavor == t))
                mine = queue == q
                if len(hit):
                    fits[mine] &= np.all(use[np.ix_(mine, quotas.resource[hit])] <= cap[T * R + hit], axis=1)
        if fits.any():
            first = min(first, int(owner[ok][fits].min()))
    return instance.jobs[first].id if first < len(instance.jobs) else None


def _finite_nonneg(value: float | None, what: str) -> float:
    v = 0.0 if value is None else float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{what} must be finite and >= 0, got {value}")
    return v


def lagrangian_replay(cost: CostGrid, sense: str) -> Callable:
    """The replay of a ``lagrangian`` proof for a count problem whose per-job
    cost is ``cost`` (its objective term, negated for a maximisation)."""

    def replay(instance: Instance, plan, proof) -> float:
        lam = price_vector(instance, proof.prices)
        J = len(instance.jobs)
        admit = J if proof.admit is None else int(proof.admit)
        if not 0 <= admit <= J:
            raise ValueError(f"admit {admit} outside [0, {J}]")
        if admit > len(plan.allocation):
            raise ValueError(f"admit {admit} > the {len(plan.allocation)} jobs the plan admits (the bound covers "
                             f"plans admitting at least {admit}, which need not include the optimum)")
        nu = _finite_nonneg(proof.admit_price, "admit_price")
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
    out: list[tuple[Domain, dict]] = []
    stack: list[tuple[Any, Domain, int, str]] = [(tree, Domain.everything(instance), 0, "tree")]
    while stack:
        node, dom, depth, path = stack.pop()
        if not isinstance(node, dict):
            raise ValueError(f"{path}: expected a mapping, got {type(node).__name__}")
        if depth > MAX_BRANCH_DEPTH:
            raise ValueError(f"{path}: deeper than {MAX_BRANCH_DEPTH}")
        keys = set(node)
        if keys <= {"prices", "admit_price"}:
            out.append((dom, node))
            if len(out) > MAX_BRANCH_LEAVES:
                raise ValueError(f"more than {MAX_BRANCH_LEAVES:,} leaves")
            continue
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
            stack += [(node["low"], low, depth + 1, f"{path}.low"), (node["high"], high, depth + 1, f"{path}.high")]
        elif keys == {"job", "admitted", "paused"}:
            admitted = dom.admitted.copy()
            admitted[j] = True
            none = dom.types.copy()
            none[j] = False  # paused: no configuration of the job is used
            stack += [(node["admitted"], dom.but(admitted=admitted), depth + 1, f"{path}.admitted"),
                      (node["paused"], dom.but(types=none), depth + 1, f"{path}.paused")]
        elif keys == {"job", "accelerator", "on", "off"}:
            kind = node["accelerator"]
            if kind not in kinds or not instance.typed:
                raise ValueError(f"{path}.accelerator: unknown type {kind!r}")
            on_types, off_types = dom.types.copy(), dom.types.copy()
            on_types[j] &= np.arange(len(kinds)) == kinds[kind]
            off_types[j, kinds[kind]] = False
            stack += [(node["on"], dom.but(types=on_types), depth + 1, f"{path}.on"),
                      (node["off"], dom.but(types=off_types), depth + 1, f"{path}.off")]
        else:
            raise ValueError(f"{path}: a node is a leaf {{prices, admit_price}} or splits {{job, role, at, low, high}}, "
                             f"{{job, accelerator, on, off}} or {{job, admitted, paused}}; got keys {sorted(keys)}")
    return out


def branch_replay(cost: CostGrid, sense: str) -> Callable:
    """The replay of a ``branch-lagrangian`` proof: the least Lagrangian bound over the
    leaves of its tree, each over the configurations its path allows."""

    def replay(instance: Instance, plan, proof) -> float:
        if proof.tree is None:
            raise ValueError("a branch-lagrangian proof needs its tree")
        if proof.prices:
            raise ValueError("a branch-lagrangian proof carries its prices in its leaves")
        J = len(instance.jobs)
        admit = J if proof.admit is None else int(proof.admit)
        if not 0 <= admit <= J:
            raise ValueError(f"admit {admit} outside [0, {J}]")
        if admit > len(plan.allocation):
            raise ValueError(f"admit {admit} > the {len(plan.allocation)} jobs the plan admits")
        leaves = branch_leaves(instance, proof.tree)
        blocks = list(_enumerated(instance, cost, job_arrays(instance)))
        least = math.inf
        for dom, leaf in leaves:
            lam = price_vector(instance, leaf.get("prices"))
            nu = _finite_nonneg(leaf.get("admit_price"), "admit_price")
            least = min(least, lagrangian_cost_bound(instance, lam, cost, admit=admit, nu=nu, domain=dom, blocks=blocks))
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
            "lp-dual": Replay("admitted_bound", admission_replay(cost))}
