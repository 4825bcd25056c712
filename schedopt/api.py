"""The public entry points: solve one instance, compare solvers on it."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from schedopt.errors import InputError
from schedopt.instance import Instance, as_instance
from schedopt.logs import solver_logging
from schedopt.checking import Violation, check
from schedopt.plan import Plan
from schedopt.problems import get_problem, infer_problem
from schedopt.registry import get_solver, solver_info, solvers


def solve(instance: Instance, solver: str | None = None, *, time_limit: float | None = None,
          seed: int | None = None, log: bool | logging.Logger = False, **options: Any) -> Plan:
    """Solve ``instance`` with the registered solver ``solver`` (default: the
    heuristic of the problem the instance poses, see :func:`infer_problem`).

    ``time_limit`` in seconds (every solver; heuristics run to their end);
    ``seed`` for any randomness; ``options`` are the solver's own (see
    :func:`schedopt.solvers`). Solver limits come back as the plan's status,
    never as an exception; a solver of a problem the instance does not pose
    raises :class:`InputError` naming the solvers that fit. ``log``: stream the
    backend's progress to Python logging (:mod:`schedopt.logs`); silent otherwise.
    """
    instance = as_instance(instance)
    if solver is not None and not isinstance(solver, str):
        raise TypeError(f"solver: expected a registered solver name (a string, see schedopt.solvers()), got "
                        f"{type(solver).__name__}; pass options as keywords")
    check_run_settings(time_limit, seed)
    if solver is None:
        problem = get_problem(infer_problem(instance))
        if problem.default_solver is None:
            raise InputError("solver", f'instance "{instance.name}" poses the {problem.name} problem; name a solver: '
                                       + ", ".join(s.name for s in solvers(problem.name)))
        solver = problem.default_solver
    info = solver_info(solver)
    check_fits(instance, info.problem, solver)
    info.refuse(instance)  # what the instance states and the solver does not model: one line
    made = info.make(**options)
    with solver_logging(log):
        plan = made.solve(instance, time_limit=time_limit, seed=seed)
    if time_limit is not None and not info.supports_time_limit:
        # a heuristic runs to its end: say so in the plan rather than ignore the limit silently
        over = plan.solve_seconds > time_limit
        note = (f"time_limit {time_limit:g} s not used: {solver} runs to its end "
                f"({plan.solve_seconds:.3g} s{', over the limit' if over else ''})")
        plan.metrics["time_limit_ignored"] = True
        plan.message = note if not plan.message else f"{plan.message}; {note}"
    return plan


def check_fits(instance: Instance, problem_name: str, solver: str | None = None) -> None:
    """Raise :class:`InputError` when ``instance`` does not pose ``problem_name``
    (e.g. Dorm's partition solver on an Optimus allocation instance)."""
    problem = get_problem(problem_name)
    why = problem.why_not(instance) if instance.jobs else None  # an empty instance poses every problem
    if why is None:
        return
    posed = infer_problem(instance)
    if posed == problem.name or get_problem(posed).why_not(instance) is not None:
        return  # not clearly another problem's instance: the problem's compile names the missing fields
    who = f'solver "{solver}" solves' if solver else "you asked for"
    default = get_problem(posed).default_solver
    names = [s.name for s in solvers(posed)]
    fits = ", ".join(([f"{default} (its default)"] if default in names else [])
                     + [n for n in names if n != default])  # the default first: long lists are cut short
    raise InputError(instance.source,
                     f'{who} the {problem.name} problem, but instance "{instance.name}" cannot pose it: {why}. '
                     f"It poses the {posed} problem, whose solvers are: {fits}")


def check_run_settings(time_limit: Any, seed: Any) -> None:
    """``time_limit``: None or a finite number of seconds >= 0 (0: the best plan
    available now, the heuristic incumbent; heuristics run to their end);
    ``seed``: None or an integer in [0, 2**32)."""
    from schedopt.deadline import check_time_limit

    check_time_limit(time_limit, "time_limit")
    if seed is not None and not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**32):
        raise InputError("seed", f"expected an integer in [0, 2**32), got {seed!r}")


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


def compare(instance: Instance, solvers_: Iterable[str] | None = None, *, time_limit: float | None = None,
            seed: int | None = None, problem: str | None = None,
            options: dict[str, dict[str, Any]] | None = None,
            progress: Callable[[int, str], None] | None = None, log: bool | logging.Logger = False) -> Comparison:
    """Run several solvers (default: every solver of ``problem``, by default
    :func:`infer_problem`) and check each plan. ``options``: per solver name,
    its options; ``progress(k, name)`` is called before the k-th solve."""
    instance = as_instance(instance)
    if problem is not None:
        check_fits(instance, get_problem(problem).name)
    if solvers_ is None:
        kind = get_problem(problem).name if problem else infer_problem(instance)
        names = [s.name for s in solvers(kind)]
        if not names:
            raise InputError("problem", f'no solver is registered for problem "{kind}"')
    else:
        names = list(solvers_)
        if not names:
            raise InputError("solvers", "no solver named; give one or more solver names")
    check_run_settings(time_limit, seed)
    options = options or {}
    for name in names:  # fail fast on an unknown name, a wrong problem or a bad option, before any solve
        check_fits(instance, solver_info(name).problem, name)
        get_solver(name, **options.get(name, {}))
    unused = sorted(set(options) - set(names))
    if unused:
        raise InputError("options", f"options given for solver(s) not compared: {', '.join(unused)}")
    rows = []
    for k, name in enumerate(names):
        if progress is not None:
            progress(k, name)
        plan = solve(instance, name, time_limit=time_limit, seed=seed, log=log, **options.get(name, {}))
        rows.append(CompareRow(name, plan, check(instance, plan)))
    return Comparison(instance.name, rows)


def warm_up(solvers_: Iterable[str] | None = None, *, instance: Instance | None = None) -> dict[str, float]:
    """Pay imports and first-call costs now, at a host's start-up, rather than in
    its first scheduling round: each named solver (default: every registered
    solver this environment can run) solves a tiny instance of its problem once,
    and a tiny typed one too when it solves typed clusters (their code paths are
    their own). ``instance``: one of the host's own (its first round's, say) that each
    named solver of the problem it poses and capable of it also solves once, so that
    what its size and its jobs' speed tables cost a first call (the tables' grids, shared
    by later instances that list the same points) is paid here too: name the solvers
    the host calls, an exact one solves it to the end. A solver with a ``warm_up()`` method has it
    called too (the exact allocation solvers run their backend's model once: the LP often proves a
    tiny instance before any model is built). Returns seconds per solver.
    Solvers that cannot run here are skipped."""
    import time

    from schedopt.testing.instances import kit

    names = list(solvers_) if solvers_ is not None else [i.name for i in solvers() if i.unavailable is None]
    own_instance = None if instance is None else as_instance(instance)
    own = None if own_instance is None else infer_problem(own_instance)
    spent: dict[str, float] = {}
    for name in names:
        info = solver_info(name)
        if info.unavailable is not None:
            continue
        t0 = time.perf_counter()
        try:
            problem_kit = kit(info.problem)
        except Exception:  # a problem without a testing kit: importing its solver is the warm-up
            solver = info.make()
        else:
            solver = info.make()
            solver.solve(problem_kit.tiny(0), seed=0)
            if info.accelerator_types and problem_kit.typed is not None:
                solver.solve(problem_kit.typed(0), seed=0)
        hook = getattr(solver, "warm_up", None)
        if hook is not None:  # what the tiny solves may not reach (an exact solver's backend model)
            hook()
        if own_instance is not None and info.problem == own and _models(info, own_instance):
            solver.solve(own_instance, seed=0)
        spent[name] = time.perf_counter() - t0
    return spent


def _models(info: Any, instance: Instance) -> bool:
    """Whether the solver ``info`` models what ``instance`` states (else :func:`solve` refuses it)."""
    try:
        info.refuse(instance)
    except InputError:
        return False
    return True
