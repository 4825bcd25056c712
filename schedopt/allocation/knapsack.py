"""The ``knapsack-lagrangian`` bound (solver side; docs/certificates.md).

The LP bound prices the capacity rows and lets each job split across types and counts,
and the admitted count be made of fractions of jobs; with rigid multi-GPU jobs on small
types that is what the LP gains (an 8-GPU job half on each of two 4-GPU types). Pricing
only each job's one-configuration row (μ_j) keeps each type's capacity and the admitted
count whole: each type is an integer knapsack by jobs taken, which the checker solves by
dynamic programming (:func:`schedopt.allocation.certificates.knapsack_cost_bound`). At
the prices :func:`job_prices_from` derives from the LP's, the bound is at least the LP's.
What is stated is what the checker's function returns, so ``check`` recomputes the same
number.
"""

from __future__ import annotations

import math

import numpy as np

from schedopt.allocation.certificates import (CostGrid, capacity_of, configuration_blocks, configuration_count,
                                              job_arrays, knapsack_cost_bound, price_vector, priced_minimum,
                                              remaining_time_grid)
from schedopt.claims import TooLargeToReplay
from schedopt.instance import Instance
from schedopt.plan import Proof
from schedopt.tolerances import SETTLED_GAP, TINY

#: how a plan's metrics name this bound (``bound_method``)
KNAPSACK_METHOD = "knapsack-lagrangian (job prices from the LP's, subgradient steps)"
#: the most allowed configurations (all jobs and types) priced, as for branch certificates; beyond, no knapsack bound
MAX_CONFIGURATIONS = 20_000
#: the most work one step's dynamic programmes may take (configurations × capacity units × jobs
#: counted, summed over types; about 20 ms at this much): above it, no knapsack bound is searched for
MAX_STEP_WORK = 2_000_000
#: subgradient steps at most (steps, not seconds: the same instance gives the same bound anywhere)
MAX_STEPS = 30
#: a step makes progress when it closes this share of the gap left to the target; after STALL_STEPS
#: steps without progress the step length θ is halved, and the search stops below MIN_THETA
PROGRESS = 0.01
STALL_STEPS = 2
MIN_THETA = 1 / 8


def job_prices_from(instance: Instance, lp: Proof, cost: CostGrid = remaining_time_grid,
                    blocks: list | None = None) -> np.ndarray:
    """μ (J,) from a ``lagrangian`` proof's capacity prices λ and admission price ν: each job's
    priced surplus, μ_j = max(0, ν − m_j) with m_j its least c + λ·u (every job admitted:
    μ_j = −m_j). Then no configuration has a negative reduced cost c + λ·u + μ_j − ν, so the
    knapsack bound at μ is at least the proof's L(λ, ν): pricing the capacity rows and the
    admission row instead of keeping them only lowers it."""
    lam = price_vector(instance, lp.prices)
    m = priced_minimum(instance, lam, cost, blocks)
    m = np.where(np.isfinite(m), m, 0.0)  # a job with no configuration: never chosen, no price
    if lp.admit is None or lp.admit >= len(instance.jobs):
        return -m
    return np.maximum(0.0, float(lp.admit_price or 0.0) - m)


def knapsack_proof(instance: Instance, lp: Proof, *, lp_bound: float, target: float, cost: CostGrid = remaining_time_grid,
                   max_steps: int = MAX_STEPS) -> tuple[float, Proof] | None:
    """The best ``knapsack-lagrangian`` bound over the plans the ``lagrangian`` proof ``lp`` covers
    (admitting at least its ``admit``), from the job prices :func:`job_prices_from` it gives, by subgradient steps
    towards ``target`` (a plan's cost: the search stops there; a step is θ·(target − L)/|g|² along
    g = chosen − 1, θ halved after STALL_STEPS steps that close less than PROGRESS of the gap left,
    the search over below MIN_THETA): (bound, proof), or None
    when the instance is too large to price (:data:`MAX_CONFIGURATIONS`, :data:`MAX_STEP_WORK`) or the
    LP's bound ``lp_bound`` (the one ``lp`` proves) is within SETTLED_GAP of the target (the search,
    tens of ms at 40 jobs, is not worth it there)."""
    J = len(instance.jobs)
    if J == 0 or lp.kind != "lagrangian" or configuration_count(instance) > MAX_CONFIGURATIONS:
        return None
    if target - lp_bound <= SETTLED_GAP * max(1.0, abs(target)):
        return None  # the LP's bound certifies the target within 1 % already
    kinds = max(1, len(instance.accelerators)) if instance.typed else 1
    units = np.floor(capacity_of(instance)[:kinds * len(instance.resources)]).reshape(kinds, -1).min(axis=1)
    if configuration_count(instance) / kinds * float(np.sum(units + 1)) * 2 > MAX_STEP_WORK:
        return None  # even a type's smallest row, at two counts, is more work than a step may take
    try:
        blocks = list(configuration_blocks(instance, cost, job_arrays(instance)))
    except TooLargeToReplay:
        return None
    every = lp.admit is None or lp.admit >= J
    k = None if every else int(lp.admit)  # type: ignore[arg-type]
    mu = job_prices_from(instance, lp, cost, blocks)
    best, best_mu = -math.inf, mu.copy()
    theta, stall = 1.0, 0
    for _ in range(max_steps + 1):
        chosen = np.zeros(J)
        bound = knapsack_cost_bound(instance, mu, cost, admit=k, blocks=blocks, chosen=chosen, max_work=MAX_STEP_WORK)
        if bound is None:
            return None
        raised = bound - best > PROGRESS * (target - best) if math.isfinite(best) else True
        if bound > best:
            best, best_mu = bound, mu.copy()
        stall = 0 if raised else stall + 1
        if stall >= STALL_STEPS:
            theta, stall = theta / 2, 0
        if best >= target or theta < MIN_THETA:
            break
        g = chosen - 1.0  # each job's row: taken on this many types more than once
        if not every:
            g = np.where((mu <= 0) & (g < 0), 0.0, g)  # a price at 0 stays at 0 on a negative step
        norm = float(g @ g)
        if norm <= TINY:
            break  # the relaxation's choice takes each job once: no price moves the bound
        mu = mu + theta * max(target - bound, TINY * max(1.0, abs(target))) / norm * g
        if not every:
            mu = np.maximum(mu, 0.0)
    if not math.isfinite(best):
        return None
    ids = [job.id for job in instance.jobs]
    proof = Proof(kind="knapsack-lagrangian", value=best,
                  job_prices={ids[j]: float(best_mu[j]) for j in np.flatnonzero(best_mu).tolist()}, admit=k)
    return best, proof
