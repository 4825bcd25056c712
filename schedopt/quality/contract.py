"""The quality problem (SLAQ §2): maximise Σ_j predicted loss reduction over the
horizon T under capacity, each job allocating units of its single role.
Solvers: ``slaq-greedy``, ``slaq-milp`` (Pyomo + HiGHS), ``slaq-cpsat``."""

from __future__ import annotations

from schedopt.allocation.certificates import count_certificates, loss_reduction_cost_grid
from schedopt.allocation.metrics import allocation_metrics
from schedopt.instance import Instance
from schedopt.problems import ObjectiveSpec, Problem, register_problem
from schedopt.quality.checker import check_quality, quality_value
from schedopt.quality.families import FAMILIES
from schedopt.quality.problem import compile_quality, untyped_only


def recognizes(instance: Instance) -> bool:
    """Every job has a loss curve and one role, and none gives remaining steps."""
    jobs = instance.jobs
    return bool(jobs) and not instance.allocation and all(
        j.loss_curve is not None and len(j.roles) == 1 and j.remaining_steps is None for j in jobs)


def rejects(instance: Instance) -> str | None:
    """SLAQ needs one role per job, its predicted loss curve and one pool of capacity."""
    why = untyped_only(instance)
    if why is not None:
        return why
    for i, job in enumerate(instance.jobs):
        if len(job.roles) != 1:
            return f'jobs[{i}] ("{job.id}") has {len(job.roles)} roles; a SLAQ job has one'
        if job.loss_curve is None:
            return f'jobs[{i}] ("{job.id}") has no loss_curve (nor a loss_history to fit one)'
    return None


PROBLEM = register_problem(Problem(
    name="quality",
    description="SLAQ §2: units per job maximising Σ predicted loss reduction over T",
    default_solver="slaq-greedy",
    objectives=(ObjectiveSpec("admitted", "max"), ObjectiveSpec("total_loss_reduction", "max")),
    recognizes=recognizes,
    rejects=rejects,
    compile=compile_quality,
    metrics=lambda instance, plan: allocation_metrics(instance, plan.allocation),
    check=check_quality,
    objective_value=quality_value,
    certificates=count_certificates(loss_reduction_cost_grid, "max"),
    solver_modules=("schedopt.quality.greedy", "schedopt.quality.exact"),
    families=dict(FAMILIES),
    rank=30,
))
