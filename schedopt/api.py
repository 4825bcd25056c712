"""The public entry points: solve one instance, compare solvers on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from schedopt.instance import Instance
from schedopt.plan import Plan, Violation, check
from schedopt.registry import get_solver, solver_info, solvers


def solve(instance: Instance, solver: str = "optimus-greedy", *, time_limit: float | None = None,
          seed: int | None = None, **options: Any) -> Plan:
    """Solve ``instance`` with the registered solver ``solver``.

    ``time_limit`` in seconds (exact solvers); ``seed`` for any randomness;
    ``options`` are the solver's own (see :func:`schedopt.solvers`).
    Solver limits come back as the plan's status, never as an exception.
    """
    return get_solver(solver, **options).solve(instance, time_limit=time_limit, seed=seed)


@dataclass
class CompareRow:
    solver: str
    plan: Plan
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


@dataclass
class Comparison:
    """One row per solver, all on the same instance, time limit and seed."""

    instance: str
    rows: list[CompareRow]

    def records(self) -> list[dict[str, Any]]:
        """Plain dicts (solver, status, admitted, objective, bound, gap, seconds, check)."""
        out = []
        for row in self.rows:
            o = row.plan.objective
            out.append({
                "solver": row.solver, "status": row.plan.status.value, "admitted": o.admitted,
                "objective": o.value, "bound": o.bound, "gap": o.gap,
                "seconds": row.plan.solve_seconds, "check": "ok" if row.ok else f"{len(row.violations)} violations",
            })
        return out


def infer_problem(instance: Instance) -> str:
    """The problem an instance poses when nobody says: with given counts
    (``allocation``), ``ps-assignment`` when every such job has parameter blocks,
    else ``placement``; ``quality`` when every job
    has a loss curve and one role but no remaining steps; ``partition`` (Dorm)
    when every job has one role and neither speed nor loss curve; else ``allocation``."""
    jobs = instance.jobs
    if instance.allocation:
        given = [j for j in jobs if j.id in instance.allocation]
        return "ps-assignment" if given and all(j.param_blocks for j in given) else "placement"
    if jobs and all(j.loss_curve is not None and len(j.roles) == 1 and j.remaining_steps is None for j in jobs):
        return "quality"
    if jobs and all(len(j.roles) == 1 and j.speed is None and j.loss_curve is None and j.remaining_steps is None
                    for j in jobs):
        return "partition"
    return "allocation"


def compare(instance: Instance, solvers_: Iterable[str] | None = None, *, time_limit: float | None = None,
            seed: int | None = None, problem: str | None = None) -> Comparison:
    """Run several solvers (default: every solver of ``problem``, by default
    :func:`infer_problem`) and check each plan."""
    if solvers_ is None:
        kind = problem or infer_problem(instance)
        names = [s.name for s in solvers(kind)]
        if not names:
            from schedopt.errors import InputError

            raise InputError("--problem", f'no solver is registered for problem "{kind}"')
    else:
        names = list(solvers_)
    for name in names:
        solver_info(name)  # fail fast on an unknown name, before any solve
    rows = []
    for name in names:
        plan = solve(instance, name, time_limit=time_limit, seed=seed)
        rows.append(CompareRow(name, plan, check(instance, plan)))
    return Comparison(instance.name, rows)
