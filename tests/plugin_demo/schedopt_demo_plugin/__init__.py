"""A scheduler author's own allocation heuristic, in its own package, found by
schedopt through the entry point ``schedopt.solvers`` (docs/architecture.md)."""

from __future__ import annotations

import time

import numpy as np

from schedopt import Instance, Plan
from schedopt.allocation import allocation_plan


class FirstComeMinimum:
    """Jobs in arrival order at their minimum counts while the cluster has room."""

    problem = "allocation"  # the problem it solves; exact = False, backend = "python" by default

    def __init__(self, *, spare: float = 0.0):
        self.spare = float(spare)  # fraction of each resource kept free

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        free = instance.capacity_total * (1.0 - self.spare)
        allocation: dict[str, dict[str, int]] = {}
        for job in sorted(instance.jobs, key=lambda j: (j.arrival, j.id)):
            counts = {name: role.min for name, role in job.roles.items()}
            need = sum(n * instance.vector(job.roles[name].demand) for name, n in counts.items())
            c = [counts[name] for name in job.role_names] + [0]  # (ps, worker) or (n, 0)
            allowed = job.speed is not None and np.isfinite(job.speed.step_time_s(c[0], c[1]))
            if allowed and np.all(need <= free + 1e-9):
                allocation[job.id] = counts
                free = free - need
        return allocation_plan(instance, allocation, solver=self.name, started=started, seed=seed,
                               options={"spare": self.spare})
