"""Two problems that take each job's counts as given (the instance's
``allocation``) and decide where its tasks and parameters go.

``placement`` (Optimus §4.2 and Appendix, DLTAP): tasks per server; place the
most jobs, then minimise Σ_j T_j (or max_j T_j, or cross-node PS-worker pairs).
Solvers: ``optimus-placement``, ``placement-lagrange``, ``kube-default``, ``dltap``,
``placement-milp``, ``placement-cpsat``.

``ps-assignment`` (Optimus §5.3, Table 3): parameter blocks to parameter
servers; the Table 3 metrics. Solvers: ``paa``, ``mxnet-default``. It lives
with placement because both read the same given counts and both decide where
a job's state goes once its counts are fixed.
"""

from __future__ import annotations

from typing import Any

from schedopt.instance import Instance
from schedopt.placement.assignment import CERTIFICATES as PS_CERTIFICATES
from schedopt.placement.certificates import CERTIFICATES as PLACEMENT_CERTIFICATES
from schedopt.placement.checker import (check_placement, check_ps_assignment, placement_plan_metrics, placement_value,
                                        ps_assignment_value)
from schedopt.placement.families import PLACEMENT_FAMILIES, PS_ASSIGNMENT_FAMILIES
from schedopt.placement.assignment import assignment_metrics, ps_counts
from schedopt.placement.problem import compile_placement
from schedopt.plan import Plan
from schedopt.problems import ObjectiveSpec, Problem, register_problem
from schedopt.registry import register_composer


def _given(instance: Instance) -> list[Any]:
    return [j for j in instance.jobs if j.id in (instance.allocation or {})]


def recognizes_ps_assignment(instance: Instance) -> bool:
    """Counts are given and every job with counts has parameter blocks."""
    given = _given(instance)
    return bool(given) and all(j.param_blocks for j in given)


def recognizes_placement(instance: Instance) -> bool:
    """Counts are given (the instance has an ``allocation``)."""
    return bool(instance.allocation)


def rejects_placement(instance: Instance) -> str | None:
    """Placement takes each job's counts as given: the instance's ``allocation``."""
    return None if instance.allocation is not None else "it gives no allocation (the counts to place; solve the allocation first, or use a joint ALLOC+PLACE solver)"


def rejects_ps_assignment(instance: Instance) -> str | None:
    """PS assignment needs the counts and every counted job's parameter blocks."""
    if instance.allocation is None:
        return "it gives no allocation (the PS counts)"
    missing = [j.id for j in _given(instance) if not j.param_blocks]
    return f'job "{missing[0]}" has no param_blocks' if missing else None


def _ps_metrics(instance: Instance, plan: Plan) -> dict[str, Any]:
    return assignment_metrics(instance, plan.ps_assignment or {})


PLACEMENT = register_problem(Problem(
    name="placement",
    description="Optimus §4.2 / DLTAP: given counts onto servers; most jobs placed, then least Σ T_j",
    default_solver="optimus-placement",
    objectives=(ObjectiveSpec("placed", "max"), ObjectiveSpec("total_transfer_time", "min")),
    recognizes=recognizes_placement,
    rejects=rejects_placement,
    compile=compile_placement,
    metrics=placement_plan_metrics,
    check=check_placement,
    objective_value=placement_value,
    solver_modules=("schedopt.placement.optimus", "schedopt.placement.kube", "schedopt.placement.dltap",
                    "schedopt.placement.milp", "schedopt.placement.cpsat", "schedopt.placement.price_guided"),
    certificates=dict(PLACEMENT_CERTIFICATES),
    families=dict(PLACEMENT_FAMILIES),
    rank=20,
))

PS_ASSIGNMENT = register_problem(Problem(
    name="ps-assignment",
    description="Optimus §5.3: parameter blocks to parameter servers; Table 3 metrics",
    default_solver="paa",
    objectives=(ObjectiveSpec("max_size_difference", "min"),),
    recognizes=recognizes_ps_assignment,
    rejects=rejects_ps_assignment,
    compile=ps_counts,
    metrics=_ps_metrics,
    check=check_ps_assignment,
    objective_value=ps_assignment_value,
    solver_modules=("schedopt.placement.paa",),
    certificates=dict(PS_CERTIFICATES),
    families=dict(PS_ASSIGNMENT_FAMILIES),
    rank=10,
))


def _compose(name: str):  # the joint module is imported when a joint solver is asked for
    from schedopt.placement.joint import joint_info

    return joint_info(name)


register_composer(_compose)
