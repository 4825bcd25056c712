"""The harness below the contract checks (``checks.py``) and the gap reports
(``gaps.py``): a solver resolved with its problem, solved and checked by the
independent checker, failures that show the instance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedopt.instance import Instance
from schedopt.io import dumps
from schedopt.plan import Plan


class SolverCheckError(AssertionError):
    """A solver broke its contract; the message says how and shows the instance."""


def show_instance(instance: Instance, limit: int = 4000) -> str:
    """The instance as YAML for a failure message (cut after ``limit`` characters)."""
    text = dumps(instance.to_dict(), ".yaml")
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


def fail(solver: Any, what: str, instance: Instance | None = None) -> SolverCheckError:
    name = getattr(solver, "name", type(solver).__name__)
    msg = f"solver {name}: {what}"
    if instance is not None:
        msg += f"\n--- instance {instance.name} ---\n{show_instance(instance)}"
    return SolverCheckError(msg)


@dataclass(frozen=True)
class Subject:
    """What is checked: a solver object and the problem it solves."""

    solver: Any
    problem: str

    @property
    def name(self) -> str:
        return str(getattr(self.solver, "name", type(self.solver).__name__))


def resolve(solver: Any, problem: str | None = None) -> Subject:
    """A registered name or a solver object (with ``solve`` and a ``problem``
    attribute, or ``problem`` given) as a :class:`Subject`."""
    from schedopt.registry import get_solver, solver_info

    if isinstance(solver, str):
        return Subject(get_solver(solver), solver_info(solver).problem)
    if not callable(getattr(solver, "solve", None)):
        raise TypeError(f"{solver!r} has no solve(instance, *, time_limit=None, seed=None) method")
    found = problem or getattr(solver, "problem", None)
    if found is None:
        name = getattr(solver, "name", None)
        if isinstance(name, str):
            try:
                found = solver_info(name).problem
            except Exception:
                found = None
    if not isinstance(found, str):
        raise TypeError(f"cannot tell which problem {solver!r} solves: give problem=... or a `problem` attribute")
    return Subject(solver, found)


def solve_checked(subject: Subject, instance: Instance, *, seed: int | None = 0,
                  time_limit: float | None = None) -> Plan:
    """Solve and run the independent checker; any violation fails, showing the instance."""
    from schedopt.checking import check

    try:
        plan = subject.solver.solve(instance, time_limit=time_limit, seed=seed)
    except Exception as exc:  # a solver limit or odd input is a status, never an exception
        raise fail(subject.solver, f"raised {type(exc).__name__}: {exc}", instance) from exc
    if not isinstance(plan, Plan):
        raise fail(subject.solver, f"returned {type(plan).__name__}, expected a schedopt Plan", instance)
    violations = check(instance, plan)
    if violations:
        listed = "\n".join(f"  - {v}" for v in violations[:10])
        raise fail(subject.solver, f"its plan fails schedopt.check ({len(violations)} violations):\n{listed}", instance)
    return plan
