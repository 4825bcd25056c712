"""The independent checker: :func:`check` recomputes a plan's objective,
metrics and constraints from the instance alone.

What every plan must satisfy (instance name, a bound on the right side of the
value, the gap formula, "optimal" only with a closed gap) is checked here; what
a problem requires is checked by that problem's own ``check`` (its package's
``checker.py``), found through :mod:`schedopt.problems` by ``plan.problem``.
:func:`check_server_placement` is the per-server map every problem that places
tasks shares. Nothing here imports a solver.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from schedopt.instance import Instance
from schedopt.plan import Plan, Status, relative_gap
from schedopt.tolerances import OPTIMAL_GAP, REL_TOL, capacity_limit
from schedopt.violations import Violation



@dataclass
class CheckReport:
    """What :func:`check_report` found: ``violations`` (the plan is wrong),
    ``unverified`` (claims no certificate proves: bounds, gaps or "optimal" that
    only a backend or nobody vouches for; failures under ``strict``) and
    ``verified`` (claims a certificate proved, one line each)."""

    violations: list[Violation]
    unverified: list[Violation]
    verified: list[str]
    not_stated: list[str] = field(default_factory=list)  # claims the plan does not make (bound, gap, ...)

    @property
    def ok(self) -> bool:
        return not self.violations


def check(instance: Instance, plan: Plan, *, strict: bool = False) -> list[Violation]:
    """Recompute objective, metrics and every constraint of ``plan`` from
    ``instance`` alone, and replay its certificates. Returns the violations
    (empty when the plan is sound); with ``strict``, a bound no certificate
    proves is a violation too."""
    report = check_report(instance, plan, strict=strict)
    return report.violations + (report.unverified if strict else [])


def check_report(instance: Instance, plan: Plan, *, strict: bool = False) -> CheckReport:
    """:func:`check` with what was verified, what was only trusted and what is not
    stated. ``strict`` adds to ``unverified`` the bounds a solver that carries one
    (docs/certificates.md, :data:`schedopt.certification.CARRIES_BOUND`) left out."""
    from schedopt.certification import check_certificates
    from schedopt.instance import as_instance
    from schedopt.plan import as_plan
    from schedopt.problems import find_contract  # the problems' checkers, without their solvers

    instance, plan = as_instance(instance), as_plan(plan)
    out: list[Violation] = []
    if plan.instance != instance.name:
        out.append(Violation("instance", f'plan is for "{plan.instance}", instance is "{instance.name}"'))
    problem = find_contract(plan.problem)
    if problem is None:
        out.append(Violation("problem", f'no checker for problem "{plan.problem}"'))
        return CheckReport(out, [], [])
    out.extend(check_numbers(plan))
    if any(v.path.startswith("objective.") for v in out):
        return CheckReport(out, [], [])  # the problem's checks compare these numbers
    if problem.objective_instance is not None:  # the objective the plan names, of those the problem has
        try:
            instance = problem.objective_instance(instance, plan)
        except ValueError as exc:
            return CheckReport(out + [Violation("objective.name", str(exc))], [], [])
    out.extend(problem.check(instance, plan))
    out.extend(check_objective_bound(plan))
    if any(v.path.startswith(("allocation", "placement", "capacity")) for v in out):
        return CheckReport(out, [], [])  # certificates bound feasible plans only
    judged = check_certificates(instance, plan, problem, strict=strict)
    return CheckReport(out + judged.wrong, judged.unverified, judged.verified, judged.not_stated)


def check_numbers(plan: Plan) -> list[Violation]:
    """The objective's value, bound and gap are finite and every metric is a
    number, not NaN (a NaN compares false with everything and would pass)."""
    out: list[Violation] = []
    for key in ("value", "bound", "gap"):
        v = getattr(plan.objective, key)
        if v is not None and not math.isfinite(v):
            out.append(Violation(f"objective.{key}", f"expected a finite number, got {v}"))
    if plan.objective.gap is not None and math.isfinite(plan.objective.gap) and plan.objective.gap < 0:
        out.append(Violation("objective.gap", f"a gap is >= 0, got {plan.objective.gap}"))
    if not math.isfinite(plan.solve_seconds) or plan.solve_seconds < 0:
        out.append(Violation("solve_seconds", f"expected a finite number >= 0, got {plan.solve_seconds}"))
    stack: list[tuple[str, object]] = [("metrics", plan.metrics)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((f"{path}.{k}", v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(node))
        elif isinstance(node, float) and math.isnan(node):
            out.append(Violation(path, "NaN is not a value"))
    return out


def check_objective_bound(plan: Plan) -> list[Violation]:
    """The bound lies on the right side of the value, the gap is
    |value - bound| / |value|, and "optimal" has a closed gap (``OPTIMAL_GAP``)."""
    out: list[Violation] = []
    obj = plan.objective
    if obj.value is None or obj.bound is None:
        if obj.gap is not None and obj.bound is None:
            out.append(Violation("objective.gap", "a gap is reported without a bound"))
        return out
    slack = REL_TOL * max(1.0, abs(obj.value))
    if obj.sense == "min" and obj.bound > obj.value + slack:
        out.append(Violation("objective.bound", f"lower bound {obj.bound:.6g} exceeds the value {obj.value:.6g}"))
    if obj.sense == "max" and obj.bound < obj.value - slack:
        out.append(Violation("objective.bound", f"upper bound {obj.bound:.6g} is below the value {obj.value:.6g}"))
    expected = relative_gap(obj.value, obj.bound)
    if obj.gap is not None and expected is not None and abs(obj.gap - expected) > REL_TOL:
        out.append(Violation("objective.gap", f"gap {obj.gap:.6g} != |value - bound| / |value| = {expected:.6g}"))
    if plan.status == Status.OPTIMAL and expected is not None and expected > OPTIMAL_GAP:
        out.append(Violation("status", f"status optimal with a gap of {expected:.3g}"))
    return out


def check_server_placement(instance: Instance, plan: Plan) -> list[Violation]:
    """``plan.placement`` names known servers and roles, its per-job totals equal
    ``plan.allocation``, and no server is loaded over its capacity."""
    out: list[Violation] = []
    names = {n: i for i, n in enumerate(instance.server_names)}
    load = np.zeros_like(instance.server_capacity)
    for job_id, per_server in (plan.placement or {}).items():
        path = f"placement.{job_id}"
        if job_id not in plan.allocation:
            out.append(Violation(path, "placed but not allocated"))
            continue
        if job_id not in instance.job_index:
            out.append(Violation(path, f'unknown job "{job_id}"'))
            continue
        job = instance.jobs[instance.job_index[job_id]]
        totals: dict[str, int] = {}
        for server, counts in per_server.items():
            if server not in names:
                out.append(Violation(f"{path}.{server}", f'unknown server "{server}"'))
                continue
            for role, n in counts.items():
                if role not in job.roles:
                    out.append(Violation(f"{path}.{server}.{role}", f'job has no role "{role}"'))
                    continue
                totals[role] = totals.get(role, 0) + n
                load[names[server]] += n * instance.vector(job.roles[role].demand)
        if totals != {r: n for r, n in plan.allocation[job_id].items() if n}:
            out.append(Violation(path, f"placed counts {totals} != allocation {plan.allocation[job_id]}"))
    over = load > capacity_limit(instance.server_capacity)
    for s, r in zip(*np.nonzero(over)):
        out.append(Violation(f"placement.capacity.{instance.server_names[s]}.{instance.resources[r]}",
                             f"load {load[s, r]:g} > capacity {instance.server_capacity[s, r]:g}"))
    return out


def check_paused(plan: Plan, expected: list[str], what: str) -> list[Violation]:
    """``plan.paused`` lists exactly ``expected`` (in any order)."""
    if sorted(plan.paused) != sorted(expected):
        return [Violation("paused", f"paused {sorted(plan.paused)} != {what} {sorted(expected)}")]
    return []
