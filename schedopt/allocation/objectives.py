"""The allocation problem's second objective, in one place (issue 50 §1).

Both objectives come after *admit the most jobs* (DESIGN.md) and both are a sum of
per-job terms of the job's time t_j (Optimus eq. 6 with the restart cost,
:mod:`schedopt.allocation.jobtime`):

``total_remaining_time`` (Optimus eq. 5, the default)
    c_j = t_j seconds.

``jct_weighted_time`` (the average-JCT objective)
    c_j = H·(t_j - 2·t*_j) / t*_j²,   H = 3600 s,

    t*_j = Q_j · min over the job's types and counts within its roles' bounds of
    the step time: the least time the job's remaining work can take (no restart).

Why it targets average JCT. Σ_j C_j = ∫ N(t) dt (N jobs in the system), so
average JCT falls fastest when jobs finish at the highest rate: a job running at
t_j finishes at rate 1/t_j, and the allocation maximising Σ_j 1/t_j is the fluid
form of shortest-remaining-processing-time (the c-μ rule with unit holding
costs). c_j is the tangent of -H/t_j at t_j = t*_j (−H/t ≈ −2H/t* + H·t/t*²),
which keeps each job's term an affine function of t_j, so every solver, bound
and certificate of Σ t_j serves it unchanged: the weight H/t*_j² scales the
job's remaining steps and restart cost, and the constant -2H/t*_j is the
job's *offset*, paid once when the job is admitted. Both parts prefer short
work: among as many admitted jobs, the shortest are admitted (offset), and a
fast type or a larger allocation saves more on a short job than on a long one
(weight), unlike Σ t_j, which gives the fast types to the longest jobs.
Σ_j c_j is minus the jobs finished per hour, to first order at each job's best
time (c_j <= -H/t_j, equality at t_j = t*_j).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from schedopt.instance import Instance, Job

#: the objectives an allocation plan may name, the first the default
OBJECTIVES = ("total_remaining_time", "jct_weighted_time")
#: H in c_j = H·(t_j − 2t*_j)/t*_j²: terms in jobs per hour
HOUR_S = 3600.0
#: t*_j is at least this (seconds): a job with no work left gets a finite weight
MIN_BEST_S = 1.0


def job_step_times(instance: Instance, job: Job) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The job's counts within its roles' bounds, ``c0`` and ``c1`` (n,; one role: c1 = 0), and
    its step time (s) at each on each type of the cluster (types, n; one row without types):
    inf where the count is not allowed or the job has no speed on the type."""
    names = job.role_names
    grids = [np.arange(job.roles[r].min, job.roles[r].max_count + 1) for r in names]
    g = np.meshgrid(*grids, indexing="ij")
    c0 = g[0].ravel()
    c1 = g[1].ravel() if len(names) == 2 else np.zeros_like(c0)
    kinds = instance.accelerators if instance.has_types else [None]
    step = np.full((len(kinds), len(c0)), np.inf)
    for t, kind in enumerate(kinds):
        speed = instance.speed_on(job, kind)
        if speed is None or not len(c0):
            continue
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            on = np.asarray(speed.step_time_s(c0, c1), dtype=float).reshape(-1)
        step[t] = np.where(np.isfinite(on) & (on >= 0), on, np.inf)
    return c0, c1, step


def best_training_s(instance: Instance, job: Job, least: dict[tuple[Any, ...], float] | None = None) -> float:
    """t*_j (s): Q_j times the job's least step time over its types (every type of the
    cluster it has a speed on) and its counts within the roles' bounds
    (:func:`job_step_times`); inf when it can run nowhere. No restart cost and no
    capacity: a property of the job alone. ``least``: a memo of measured tables' least step
    time over a block of counts, shared between the jobs of one instance."""
    if job.remaining_steps is None:
        return math.inf
    best = _least_step_s(instance, job, {} if least is None else least)
    return float(job.remaining_steps) * best if math.isfinite(best) else math.inf


def _least_step_s(instance: Instance, job: Job, least: dict[tuple[Any, ...], float]) -> float:
    """The least of :func:`job_step_times`'s step times (s; inf: none). A measured table's is the
    least of its dense grid (``TableSpeed._grid``, the floats its ``step_time_s`` reads) over the
    block of counts the roles allow, kept in ``least`` per grid and block (equal small tables share
    one grid): 100 `gavel` jobs on three types read 300 speeds, about 20 distinct tables; a
    formula's is read on the roles' grid of counts as in :func:`job_step_times`."""
    names = job.role_names
    bounds = tuple((job.roles[r].min, job.roles[r].max_count) for r in names)
    kinds = instance.accelerators if instance.has_types else [None]
    best = math.inf
    for kind in kinds:
        speed = instance.speed_on(job, kind)
        if speed is None:
            continue
        if not getattr(speed, "measured", False) or getattr(speed, "n_roles", 0) != len(names):
            best = min(best, _least_formula_s(speed, bounds))
            continue
        grid = speed._grid()
        key = (id(grid), bounds)
        got = least.get(key)
        if got is None:
            (lo0, hi0), (lo1, hi1) = bounds[0], bounds[1] if len(bounds) == 2 else (0, 0)
            block = grid[max(lo0, 0):max(hi0 + 1, 0), max(lo1, 0):max(hi1 + 1, 0)]
            got = least[key] = float(np.min(block, initial=math.inf, where=block >= 0))  # as job_step_times
        best = min(best, got)
    return best


def _least_formula_s(speed: Any, bounds: tuple[tuple[int, int], ...]) -> float:
    """A speed's least step time (s) over the counts within ``bounds`` ((min, max) per role; inf: none)."""
    grids = [np.arange(lo, hi + 1) for lo, hi in bounds]
    g = np.meshgrid(*grids, indexing="ij")
    c0 = g[0].ravel()
    if not len(c0):
        return math.inf
    c1 = g[1].ravel() if len(bounds) == 2 else np.zeros_like(c0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        on = np.asarray(speed.step_time_s(c0, c1), dtype=float).reshape(-1)
    on = np.where(np.isfinite(on) & (on >= 0), on, np.inf)
    return float(on.min())


def _terms(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    J = len(instance.jobs)
    if instance.objective == "total_remaining_time":
        return np.ones(J), np.zeros(J)
    least: dict[tuple[Any, ...], float] = {}
    best = np.array([best_training_s(instance, job, least) for job in instance.jobs], dtype=float).reshape(J)
    ok = np.isfinite(best)
    best = np.maximum(np.where(ok, best, 1.0), MIN_BEST_S)
    weight = np.where(ok, HOUR_S / best**2, 1.0)  # a job that can run nowhere is never admitted
    offset = np.where(ok, -2.0 * HOUR_S / best, 0.0)
    return weight, offset


def objective_terms(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(weight (J,), offset (J,)): job j's term is weight_j·t_j + offset_j where t_j is
    finite (1 and 0 under ``total_remaining_time``). Computed once per instance."""
    return instance.derived(f"objective_terms:{instance.objective}", _terms)


def is_weighted(instance: Instance) -> bool:
    """Whether the instance's objective is not plain Σ t_j."""
    return instance.objective != OBJECTIVES[0]


def objective_of_time(instance: Instance, job_id: str, t: Any) -> Any:
    """Job ``job_id``'s term of the instance's objective from its time ``t`` (seconds, scalar or
    array): ``t`` itself under Σ t_j, weight·t + offset otherwise; inf stays inf (not allowed)."""
    if not is_weighted(instance):
        return t
    weight, offset = objective_terms(instance)
    j = instance.job_index[job_id]
    w, b = float(weight[j]), float(offset[j])
    if np.ndim(t) == 0:
        return w * float(t) + b if math.isfinite(t) else math.inf
    t = np.asarray(t, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(t), w * t + b, np.inf)
