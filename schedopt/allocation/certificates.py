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
from typing import Callable

import numpy as np

from schedopt.allocation.rows import capacity_vector, quota_rows, typed_resource_names, wide_use
from schedopt.instance import Instance, Job
from schedopt.problems import Replay
from schedopt.tolerances import capacity_limit

#: a job's cost per configuration (min sense): (instance, job, c0, c1) -> array, inf where not allowed
CostGrid = Callable[[Instance, Job, np.ndarray, np.ndarray], np.ndarray]

#: most configurations a replay enumerates (all jobs together) before it declines
MAX_REPLAY_CONFIGURATIONS = 50_000_000


class TooLargeToReplay(Exception):
    """The instance has more configurations than a replay enumerates."""


def job_grid(instance: Instance, job: Job) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every count combination within the roles' bounds: c0, c1 (n,) and use (n, R)."""
    names = job.role_names
    r0 = job.roles[names[0]]
    c0 = np.arange(r0.min, r0.max_count + 1, dtype=np.int64)
    if len(names) == 2:
        r1 = job.roles[names[1]]
        c1 = np.arange(r1.min, r1.max_count + 1, dtype=np.int64)
    else:
        c1 = np.zeros(1, dtype=np.int64)
    g0, g1 = (a.ravel() for a in np.meshgrid(c0, c1, indexing="ij"))
    demand = instance.role_demand(job)
    use = g0[:, None] * demand[0][None, :]
    if len(names) == 2:
        use = use + g1[:, None] * demand[1][None, :]
    return g0, g1, use


def remaining_time_grid(instance: Instance, job: Job, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
    """t_j = Q_j·step_time(c0, c1) + ρ_j where the counts differ from the running ones (s)."""
    if job.speed is None or job.remaining_steps is None:
        return np.full(len(c0), np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        step = np.asarray(job.speed.step_time_s(c0, c1), dtype=float).reshape(-1)
    ok = np.isfinite(step)
    q = float(job.remaining_steps)
    t = np.where(ok, q * np.where(ok, step, 0.0) if q > 0 else 0.0, np.inf)
    running = instance.running_counts(job)
    if running is not None:
        names = job.role_names
        r0 = running.get(names[0], 0)
        r1 = running.get(names[1], 0) if len(names) == 2 else 0
        changed = (c0 != r0) | ((c1 != r1) if len(names) == 2 else False)
        t = t + np.where(changed, instance.restart_cost_s(job), 0.0)
    return t


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


def _capacity(instance: Instance) -> np.ndarray:
    if instance.typed:
        return capacity_limit(capacity_vector(instance))
    return capacity_limit(instance.capacity_total)


def _options(instance: Instance):
    """Per job, its configuration grids: [(job at one type's speed, c0, c1, use)],
    use over :func:`resource_names` (one grid per type it can run on; one grid without types)."""
    total = 0
    kinds = instance.accelerators if instance.typed else [None]
    for job in instance.jobs:
        size = 1
        for r in job.roles.values():
            size *= max(0, r.max_count - r.min + 1)
        total += size * len(kinds)
    if total > MAX_REPLAY_CONFIGURATIONS:
        raise TooLargeToReplay(f"{total:,} configurations (the replay enumerates at most {MAX_REPLAY_CONFIGURATIONS:,})")
    quotas = quota_rows(instance) if instance.typed else None
    for j, job in enumerate(instance.jobs):
        c0, c1, use = job_grid(instance, job)
        if not instance.typed:
            yield [(job, c0, c1, use)]
            continue
        grids = []
        for t, kind in enumerate(kinds):
            if instance.speed_on(job, kind) is None:
                continue
            grids.append((instance.job_on(job, kind), c0, c1, wide_use(instance, j, t, use, quotas)))
        yield grids


def lagrangian_cost_bound(instance: Instance, lam: np.ndarray, cost: CostGrid, *, admit: int | None,
                          nu: float) -> float:
    """L(λ, ν) in the problem's cost units (a lower bound on Σ cost of every plan
    admitting at least ``admit`` jobs; ``admit`` None or every job: all admitted)."""
    J = len(instance.jobs)
    every = admit is None or admit >= J
    total = 0.0
    for grids in _options(instance):
        m = math.inf
        for job, c0, c1, use in grids:
            priced = cost(instance, job, c0, c1) + use @ lam
            if len(priced) and np.isfinite(priced).any():
                m = min(m, float(priced.min()))
        if every:
            total += m  # a job without an allowed configuration makes L = +inf: no plan admits all
        else:
            total += min(0.0, m - nu)
    if not every:
        total += nu * float(admit)  # type: ignore[arg-type]
    return total - float(lam @ _capacity(instance))


def admitted_count_bound(instance: Instance, mu: np.ndarray, cost: CostGrid) -> float:
    """μ·C + Σ_j max(0, 1 - min_x μ·u_j(x)) over jobs with an allowed configuration."""
    total = float(mu @ _capacity(instance))
    for grids in _options(instance):
        least = math.inf
        for job, c0, c1, use in grids:
            allowed = np.isfinite(cost(instance, job, c0, c1))
            if allowed.any():
                least = min(least, float((use[allowed] @ mu).min()))
        if math.isfinite(least):
            total += max(0.0, 1.0 - least)
    return total


def first_job_that_fits(instance: Instance, cost: CostGrid) -> str | None:
    """A job with an allowed configuration that fits every capacity row alone (on some
    type, within its queue's quota), or None: whether a plan admitting one job exists."""
    cap = _capacity(instance)
    for job, grids in zip(instance.jobs, _options(instance)):
        for job_t, c0, c1, use in grids:
            ok = np.isfinite(cost(instance, job_t, c0, c1)) & np.all(use <= cap[None, :], axis=1)
            if ok.any():
                return job.id
    return None


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


def admission_replay(cost: CostGrid) -> Callable:
    """The replay of an ``lp-dual`` proof of the admitted count."""

    def replay(instance: Instance, plan, proof) -> float:
        return admitted_count_bound(instance, price_vector(instance, proof.prices), cost)

    return replay


def count_certificates(cost: CostGrid, sense: str) -> dict[str, Replay]:
    """The certificate kinds a count problem replays: ``lagrangian`` proves the objective's
    bound, ``lp-dual`` the admitted count's."""
    return {"lagrangian": Replay("bound", lagrangian_replay(cost, sense)),
            "lp-dual": Replay("admitted_bound", admission_replay(cost))}
