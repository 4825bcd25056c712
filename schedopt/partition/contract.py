"""Dorm's partition problem (Dorm §IV, P2): containers per application and
server, maximising Σ_k u_k under fairness-loss and adjustment budgets.
Solvers: ``dorm-milp`` and presets ``dorm-1/2/3`` (Pyomo + HiGHS),
``dorm-cpsat``; baselines ``drf-containers``, ``swarm-static``."""

from __future__ import annotations

from schedopt.instance import Instance
from schedopt.partition.certificates import CERTIFICATES
from schedopt.partition.checker import check_partition, partition_plan_metrics, partition_value
from schedopt.partition.families import FAMILIES
from schedopt.partition.problem import compile_partition
from schedopt.problems import ObjectiveSpec, Problem, register_problem


def recognizes(instance: Instance) -> bool:
    """Every job is a one-role application with neither speed, loss curve nor remaining steps."""
    jobs = instance.jobs
    return bool(jobs) and not instance.allocation and all(
        len(j.roles) == 1 and j.speed is None and j.loss_curve is None and j.remaining_steps is None for j in jobs)


def rejects(instance: Instance) -> str | None:
    """A Dorm application has one role: its container."""
    for i, job in enumerate(instance.jobs):
        if len(job.roles) != 1:
            return f'jobs[{i}] ("{job.id}") has {len(job.roles)} roles; a Dorm application has one (its container)'
    return None


PROBLEM = register_problem(Problem(
    name="partition",
    description="Dorm P2: containers per application and server, max utilization under fairness/adjustment budgets",
    default_solver="drf-containers",
    objectives=(ObjectiveSpec("resource_utilization", "max"),),
    recognizes=recognizes,
    rejects=rejects,
    compile=compile_partition,
    metrics=partition_plan_metrics,
    check=check_partition,
    certificates=CERTIFICATES,
    objective_value=partition_value,
    solver_modules=("schedopt.partition.milp", "schedopt.partition.cpsat", "schedopt.partition.baselines"),
    families=dict(FAMILIES),
    rank=40,
))
