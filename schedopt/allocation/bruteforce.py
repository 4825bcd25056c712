"""Brute-force enumeration of the allocation problem, for verification on tiny
instances: every combination of (configuration or paused) over all jobs,
without dominance pruning. Exponential: guarded by ``max_combinations``."""

from __future__ import annotations

import itertools
import math

import numpy as np

from schedopt.allocation.model import compile_model
from schedopt.allocation.problem import job_configurations
from schedopt.instance import Instance
from schedopt.tolerances import capacity_limit


def solve_bruteforce(instance: Instance, max_combinations: int = 2_000_000) -> tuple[int, float, dict[str, dict[str, int]]]:
    """The lexicographic optimum: (admitted jobs, Σ t_j, allocation). On a cluster
    with accelerator types each job's options are every type and configuration;
    the type of each admitted job is :func:`solve_bruteforce_typed`'s."""
    admitted, total, allocation, _ = solve_bruteforce_typed(instance, max_combinations)
    return admitted, total, allocation


def solve_bruteforce_typed(instance: Instance, max_combinations: int = 2_000_000
                           ) -> tuple[int, float, dict[str, dict[str, int]], dict[str, str | None]]:
    """:func:`solve_bruteforce` with the type each admitted job runs on (empty without types)."""
    model = compile_model(instance)
    data = model.rows
    groups = [range(int(model.job_start[j]), int(model.job_start[j + 1])) for j in range(model.J)]
    options = []
    for rows in groups:
        opts: list[tuple] = [(None, 0.0, np.zeros(data.R), None)]
        for j in rows:
            counts, cost = job_configurations(data, j)
            opts += [((int(c[0]), int(c[1])), float(t), c[0] * data.demand[j, 0] + c[1] * data.demand[j, 1], j)
                     for c, t in zip(counts, cost)]
        options.append(opts)
    size = math.prod(len(o) for o in options)
    if size > max_combinations:
        raise ValueError(f"brute force over {size} combinations exceeds max_combinations={max_combinations}")
    best: tuple[int, float] = (-1, math.inf)
    best_alloc: dict[str, dict[str, int]] = {}
    best_types: dict[str, str | None] = {}
    cap = capacity_limit(data.cap)
    for combo in itertools.product(*options):
        use = sum((o[2] for o in combo), np.zeros(data.R))
        if np.any(use > cap):
            continue
        admitted = sum(o[0] is not None for o in combo)
        total = sum(o[1] for o in combo)
        if (admitted, -total) > (best[0], -best[1]):
            best = (admitted, total)
            best_alloc = {data.jobs[o[3]].id: data.counts_dict(o[3], *o[0]) for o in combo if o[0] is not None}
            best_types = ({data.jobs[o[3]].id: model.accelerator(o[3]) for o in combo if o[0] is not None}
                          if not model.plain else {})
    return best[0], best[1], best_alloc, best_types
