"""Plans from counts: what an outside heuristic returns to be compared, checked
and certified like the built-in solvers."""

from __future__ import annotations

import time
from typing import Any

from schedopt.allocation.lagrange import heuristic_plan
from schedopt.allocation.problem import compile_allocation
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan


def allocation_plan(instance: Instance, allocation: dict[str, dict[str, int]], *, solver: str,
                    started: float | None = None, seed: int | None = None, options: dict[str, Any] | None = None,
                    metrics: dict[str, Any] | None = None, bound: bool = True) -> Plan:
    """A heuristic allocation plan for ``allocation`` (job id -> role -> count; jobs
    left out are paused), with the objective recomputed and, when ``bound``,
    the certified LP bounds on the admitted count and on Σ Q_j/f_j.
    ``started`` is the solve's ``time.perf_counter()`` start (now by default)."""
    t0 = time.perf_counter() if started is None else started
    data = compile_allocation(instance)
    config: dict[int, tuple[int, int]] = {}
    for job_id, counts in allocation.items():
        if job_id not in instance.job_index:
            raise InputError(solver, f'allocation names unknown job "{job_id}"')
        j = instance.job_index[job_id]
        names = data.jobs[j].role_names
        if set(counts) != set(names):
            raise InputError(solver, f"allocation.{job_id}: roles {sorted(counts)} != the job's roles {sorted(names)}")
        config[j] = (int(counts[names[0]]), int(counts[names[1]]) if len(names) == 2 else 0)
    return heuristic_plan(data, config, sorted(config), solver=solver, started=t0, seed=seed, options=options or {},
                          metrics=metrics or {}, bound=bound)
