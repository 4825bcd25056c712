"""The allocation problem (Optimus eq. 5-8): how many tasks of each role every
job gets under the cluster's total capacity.

Objectives, lexicographic: admit the most jobs, then minimise
Σ_j Q_j / f_j(p_j, w_j). Solvers: ``optimus-greedy`` (eq. 9), ``optimus-lagrange``
(dual prices, rounding, local search), ``optimus-milp``
(Pyomo + HiGHS), ``optimus-cpsat``; baselines ``drf``, ``tetris``, ``fifo``,
``srtf``; ``dl2`` (learned, registered by :mod:`schedopt.learn`).
"""

from __future__ import annotations

from schedopt.allocation.certificates import count_certificates, remaining_time_grid
from schedopt.allocation.checker import allocation_value, check_allocation, plan_objective
from schedopt.allocation.families import FAMILIES
from schedopt.allocation.metrics import allocation_metrics
from schedopt.allocation.problem import compile_allocation
from schedopt.instance import Instance
from schedopt.problems import ObjectiveSpec, Problem, register_problem

def rejects(instance: Instance) -> str | None:
    """A job without a speed model or remaining steps cannot be allocated (eq. 5)."""
    for i, job in enumerate(instance.jobs):
        for field_name in ("speed", "remaining_steps"):
            if getattr(job, field_name) is None:
                return f'jobs[{i}] ("{job.id}") has no {field_name}'
    return None


PROBLEM = register_problem(Problem(
    name="allocation",
    description="Optimus eq. 5-8: task counts per job under total capacity; most jobs, then least Σ remaining time",
    default_solver="optimus-greedy",
    objectives=(ObjectiveSpec("admitted", "max"), ObjectiveSpec("total_remaining_time", "min")),
    recognizes=lambda instance: True,  # the default: any instance poses it
    rejects=rejects,
    compile=compile_allocation,
    metrics=lambda instance, plan: allocation_metrics(instance, plan.allocation, plan.accelerators),
    check=check_allocation,
    objective_value=allocation_value,
    certificates=count_certificates(remaining_time_grid, "min"),
    objective_instance=plan_objective,
    solver_modules=("schedopt.allocation.solvers",
                    "schedopt.allocation.baselines", "schedopt.allocation.gavel",
                    "schedopt.allocation.kueue"),
    families=dict(FAMILIES),
    rank=100,
))
