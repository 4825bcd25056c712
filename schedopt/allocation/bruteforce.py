"""Brute-force enumeration of the allocation problem, for verification on tiny
instances: every combination of (configuration or paused) over all jobs,
without dominance pruning. Exponential: guarded by ``max_combinations``."""

from __future__ import annotations

import itertools
import math

import numpy as np

from schedopt.allocation.problem import compile_allocation, job_configurations
from schedopt.instance import Instance


def solve_bruteforce(instance: Instance, max_combinations: int = 2_000_000) -> tuple[int, float, dict[str, dict[str, int]]]:
    """The lexicographic optimum: (admitted jobs, Σ t_j, allocation)."""
    data = compile_allocation(instance)
    options = []
    for j in range(data.J):
        counts, cost = job_configurations(data, j)
        options.append([(None, 0.0, np.zeros(data.R))] + [
            ((int(c[0]), int(c[1])), float(t), c[0] * data.demand[j, 0] + c[1] * data.demand[j, 1])
            for c, t in zip(counts, cost)
        ])
    size = math.prod(len(o) for o in options)
    if size > max_combinations:
        raise ValueError(f"brute force over {size} combinations exceeds max_combinations={max_combinations}")
    best: tuple[int, float] = (-1, math.inf)
    best_alloc: dict[str, dict[str, int]] = {}
    cap = data.cap * (1 + 1e-12) + 1e-12
    for combo in itertools.product(*options):
        use = sum((o[2] for o in combo), np.zeros(data.R))
        if np.any(use > cap):
            continue
        admitted = sum(o[0] is not None for o in combo)
        total = sum(o[1] for o in combo)
        if (admitted, -total) > (best[0], -best[1]):
            best = (admitted, total)
            best_alloc = {data.jobs[j].id: data.counts_dict(j, *o[0]) for j, o in enumerate(combo) if o[0] is not None}
    return best[0], best[1], best_alloc
