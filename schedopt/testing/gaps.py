"""``assert_gap``: a plan (or a solver's plan) against the exact optimum, with
a readable report; every measured gap is recorded for the pytest plugin's
summary.

The gap follows the plan's own convention (``Objective.gap``, as MIP solvers
report it): |value - optimum| / |value|. Objectives are lexicographic where
the problem says so (allocation and quality: the most admitted jobs first):
a plan that admits fewer jobs than the optimum has an infinite gap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from schedopt.instance import Instance
from schedopt.plan import Plan, Status
from schedopt.testing.harness import resolve, show_instance, solve_checked
from schedopt.tolerances import REL_TOL

#: (solver, gap) of every assert_gap call in this process, for the pytest plugin
RECORDED: list[tuple[str, float]] = []


class GapError(AssertionError):
    """The plan is infeasible or further from the optimum than allowed."""


@dataclass
class GapReport:
    """One comparison: the plan's and the optimum's values, the gap and where they differ."""

    solver: str
    reference: str
    instance: str
    value: float | None
    optimum: float | None
    admitted: int | None
    optimum_admitted: int | None
    gap: float
    bound: float | None = None
    differing_jobs: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"{self.solver} on {self.instance}: gap {_pct(self.gap)} to {self.reference}",
                 f"  value {self.value}   optimum {self.optimum}   plan's own bound {self.bound}"]
        if self.admitted is not None or self.optimum_admitted is not None:
            lines.append(f"  admitted {self.admitted}   optimum admits {self.optimum_admitted}")
        if self.differing_jobs:
            shown = ", ".join(self.differing_jobs[:12]) + (" ..." if len(self.differing_jobs) > 12 else "")
            lines.append(f"  jobs decided differently ({len(self.differing_jobs)}): {shown}")
        return "\n".join(lines)


def _pct(g: float) -> str:
    return "infinite (fewer jobs admitted)" if math.isinf(g) else f"{100 * g:.4g}%"


def reference_plan(instance: Instance, problem: str, reference: Any = None, *, time_limit: float | None = 60.0) -> tuple[str, Plan]:
    """The optimum: ``reference`` (a solver name or object; default the
    problem's exact solver, brute force for tiny allocation instances). It
    must prove optimality."""
    from schedopt.registry import get_solver
    from schedopt.testing.instances import kit

    if reference is None and problem == "allocation":
        plan = _bruteforce_allocation(instance)
        if plan is not None:
            return "brute force", plan
    if reference is None:
        reference = kit(problem).reference
        if reference is None:
            raise ValueError(f'problem "{problem}" has no exact solver to measure gaps against; pass reference=')
    solver = get_solver(reference) if isinstance(reference, str) else reference
    subject = resolve(solver, problem)
    plan = solve_checked(subject, instance, seed=0, time_limit=time_limit)
    if plan.status != Status.OPTIMAL:
        raise GapError(f"reference {subject.name} did not prove optimality on {instance.name} "
                       f"(status {plan.status.value}, {plan.message or 'no message'}): no gap can be certified")
    return subject.name, plan


def _bruteforce_allocation(instance: Instance, limit: int = 20_000) -> Plan | None:
    """The lexicographic optimum by enumeration when it has at most ``limit`` combinations, else None."""
    from schedopt.allocation import allocation_plan, solve_bruteforce

    try:
        _, _, allocation = solve_bruteforce(instance, max_combinations=limit)
    except ValueError:  # too many combinations: an exact solver instead
        return None
    plan = allocation_plan(instance, allocation, solver="bruteforce", bound=False)
    return plan.model_copy(update={"status": Status.OPTIMAL})


def _admitted(plan: Plan) -> int | None:
    return plan.objective.admitted


def measure_gap(plan: Plan, optimum: Plan, problem: str) -> float:
    """|value - optimum| / |value| after the lexicographic count (inf when fewer admitted)."""
    from schedopt.problems import get_problem

    objectives = get_problem(problem).objectives
    if len(objectives) > 1 and _admitted(plan) is not None and _admitted(optimum) is not None:
        if _admitted(plan) < _admitted(optimum):
            return math.inf
    if not served_any(plan) and not served_any(optimum):
        return 0.0  # nothing fits: both plans admit nothing, whatever status or value they state
    v, o = plan.objective.value, optimum.objective.value
    if v is None or o is None:
        return math.inf
    if v == o:
        return 0.0
    sense = plan.objective.sense
    worse = (v - o) if sense == "min" else (o - v)
    return worse / abs(v) if v != 0 else math.inf


def served_any(plan: Plan) -> bool:
    """Whether the plan gives anything to any job."""
    return bool(plan.allocation or plan.placement or plan.ps_assignment)


def _differing(plan: Plan, optimum: Plan) -> list[str]:
    a = {**(plan.allocation or {}), **(plan.placement or {})}
    b = {**(optimum.allocation or {}), **(optimum.placement or {})}
    return sorted(j for j in set(a) | set(b) if a.get(j) != b.get(j))


def assert_gap(instance: Instance, plan_or_solver: Any, *, max_gap: float, reference: Any = None,
               problem: str | None = None, seed: int | None = 0, time_limit: float | None = 60.0) -> GapReport:
    """Check ``plan_or_solver`` (a Plan, a registered solver name or a solver
    object) on ``instance`` against the exact optimum and fail with a report
    when its gap exceeds ``max_gap`` (a fraction: 0.05 = 5 %) or either plan
    fails schedopt.check. A plan better than the proven optimum fails too
    (the checker or the reference is wrong). Returns the report."""
    from schedopt.checking import check

    if isinstance(plan_or_solver, Plan):
        plan = plan_or_solver
        problem = problem or plan.problem
        name = plan.solver
        violations = check(instance, plan)
        if violations:
            listed = "\n".join(f"  - {v}" for v in violations[:10])
            raise GapError(f"plan of {name} fails schedopt.check on {instance.name}:\n{listed}\n"
                           f"--- instance ---\n{show_instance(instance)}")
    else:
        subject = resolve(plan_or_solver, problem)
        problem, name = subject.problem, subject.name
        plan = solve_checked(subject, instance, seed=seed, time_limit=time_limit)
    ref_name, optimum = reference_plan(instance, problem, reference, time_limit=time_limit)
    gap = measure_gap(plan, optimum, problem)
    report = GapReport(solver=name, reference=ref_name, instance=instance.name, value=plan.objective.value,
                       optimum=optimum.objective.value, admitted=_admitted(plan), optimum_admitted=_admitted(optimum),
                       gap=gap, bound=plan.objective.bound, differing_jobs=_differing(plan, optimum))
    RECORDED.append((name, gap))
    if _strictly_better(plan, optimum):
        raise GapError(f"{name} beats the proven optimum of {ref_name}: a checker or reference error\n{report}\n"
                       f"--- instance ---\n{show_instance(instance)}")
    if gap > max_gap:
        raise GapError(f"gap {_pct(gap)} exceeds max_gap {_pct(max_gap)}\n{report}\n--- instance ---\n{show_instance(instance)}")
    return report


def _strictly_better(plan: Plan, optimum: Plan, tol: float = REL_TOL) -> bool:
    a, b = _admitted(plan), _admitted(optimum)
    if a is not None and b is not None and a != b:
        return a > b
    v, o = plan.objective.value, optimum.objective.value
    if v is None or o is None:
        return False
    scale = max(abs(o), 1.0)
    return (o - v) > tol * scale if plan.objective.sense == "min" else (v - o) > tol * scale


__all__ = ["GapError", "GapReport", "assert_gap", "measure_gap", "reference_plan", "RECORDED"]
