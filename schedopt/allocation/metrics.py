"""The allocation problem's objective term and metrics, from the instance alone."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from schedopt.allocation.jobtime import training_s
from schedopt.allocation.objectives import objective_of_time
from schedopt.instance import Instance, Job


def remaining_time_s(instance: Instance, job_id: str, counts: dict[str, int], accelerator: str | None = None) -> float:
    """t_j = Q_j / f_j(p_j, w_j) + ρ_j·[c_j ≠ running_j] in seconds: Optimus eq. 6
    plus the restart a running job pays when its counts change; inf if not allowed.
    ``accelerator``: the type the job runs on (its speed there, :meth:`Instance.speed_on`)."""
    job = instance.jobs[instance.job_index[job_id]]
    speed = instance.speed_on(job, accelerator)
    if speed is None or job.remaining_steps is None:
        return math.inf
    names = job.role_names
    c0 = counts[names[0]]
    c1 = counts[names[1]] if len(names) == 2 else 0
    train_s = training_s(float(job.remaining_steps), float(speed.step_time_s(c0, c1)))
    if train_s == math.inf:
        return math.inf
    return train_s + reconfiguration_s(instance, job, counts, accelerator)


def objective_term(instance: Instance, job_id: str, counts: dict[str, int], accelerator: str | None = None) -> float:
    """The job's term of the instance's objective (``allocation/objectives.py``):
    :func:`remaining_time_s` under Σ t_j, weight_j·t_j + offset_j otherwise; inf if not allowed."""
    return float(objective_of_time(instance, job_id, remaining_time_s(instance, job_id, counts, accelerator)))


def _changes(job: Job, running: dict[str, int], counts: dict[str, int]) -> bool:
    return any(running.get(r, 0) != counts.get(r, 0) for r in job.roles)


def reconfiguration_s(instance: Instance, job: Job, counts: dict[str, int], accelerator: str | None = None) -> float:
    """ρ_j if ``job`` runs now with other counts than ``counts`` (or, on a typed
    cluster, on another type than ``accelerator``), else 0 (seconds)."""
    running = instance.running_counts(job)
    changed = running is not None and (_changes(job, running, counts) or instance.moves_type(job, accelerator))
    return instance.restart_cost_s(job) if changed else 0.0


def reconfiguration_metrics(instance: Instance, allocation: dict[str, dict[str, int]],
                            accelerators: dict[str, str | None] | None = None) -> dict[str, Any] | None:
    """``restarts``: running jobs whose counts change; ``stopped``: running jobs
    paused; ``restart_s``: Σ ρ_j over the restarts (seconds). None when no job runs."""
    running_jobs = restarts = stopped = 0
    lost = 0.0
    for job in instance.jobs:
        running = instance.running_counts(job)
        if running is None:
            continue
        running_jobs += 1
        counts = allocation.get(job.id)
        if counts is None:
            stopped += 1
        elif _changes(job, running, counts) or instance.moves_type(job, (accelerators or {}).get(job.id)):
            restarts += 1
            lost += instance.restart_cost_s(job)
    return {"restarts": restarts, "stopped": stopped, "restart_s": lost} if running_jobs else None


def allocation_usage(instance: Instance, allocation: dict[str, dict[str, int]]) -> np.ndarray:
    """Σ_j (w_j·O_j + p_j·N_j), shape (resources,) (Optimus eq. 7's left side)."""
    used = dict.fromkeys(instance.resources, 0.0)  # summed in Python: a round's plan has few jobs
    for job_id, counts in allocation.items():
        job = instance.jobs[instance.job_index[job_id]]
        for role, n in counts.items():
            for r, amount in job.roles[role].demand.items():
                if r in used:
                    used[r] += n * amount
    return np.array(list(used.values()), dtype=float)


def allocation_metrics(instance: Instance, allocation: dict[str, dict[str, int]],
                       accelerators: dict[str, str | None] | None = None, used: np.ndarray | None = None) -> dict[str, Any]:
    """Admitted and paused counts, tasks, utilisation per resource (used / capacity).
    ``used``: :func:`allocation_usage` when the caller has it already."""
    used = allocation_usage(instance, allocation) if used is None else used
    cap = instance.capacity_total
    util = {r: (float(u / c) if c > 0 else 0.0) for r, u, c in zip(instance.resources, used, cap)}
    out: dict[str, Any] = {
        "admitted": len(allocation),
        "paused": len(instance.jobs) - len(allocation),
        "tasks": int(sum(sum(c.values()) for c in allocation.values())),
        "utilization": util,
    }
    out.update(reconfiguration_metrics(instance, allocation, accelerators) or {})
    return out
