"""The contract every solver meets, runnable on any solver: ``check_solver``
and the pytest helper ``parametrize_with_checks`` (in the spirit of
scikit-learn's ``check_estimator`` / ``parametrize_with_checks``).

A check is a function ``check(solver, kit)`` that raises
:class:`SolverCheckError` with a message naming the problem and showing the
instance; it returns normally when the solver passes.
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from schedopt.instance import Instance
from schedopt.io import dumps
from schedopt.plan import Plan, Status
from schedopt.testing.harness import SolverCheckError, Subject, fail, resolve, solve_checked
from schedopt.testing.instances import ProblemKit, kit

#: random tiny instances each feasibility check solves
TINY_SEEDS = range(5)
#: the time limit given in the time-limit check (s) and the slack allowed over it
TIME_LIMIT_S = 1.0
TIME_SLACK_S = 2.0


def decisions(plan: Plan) -> dict[str, Any]:
    """The parts of a plan a solver decides (not timings)."""
    return {"status": plan.status, "allocation": plan.allocation, "placement": plan.placement,
            "ps_assignment": plan.ps_assignment, "paused": sorted(plan.paused), "value": plan.objective.value,
            "admitted": plan.objective.admitted}


def served(plan: Plan) -> int:
    if plan.objective.admitted is not None:
        return int(plan.objective.admitted)
    return len(plan.allocation or plan.placement or {})


# --- the checks ------------------------------------------------------------

def check_feasible_plans(subject: Subject, k: ProblemKit) -> None:
    """Plans of random tiny instances pass schedopt.check."""
    for seed in TINY_SEEDS:
        solve_checked(subject, k.tiny(seed), seed=seed)


def check_integer_counts(subject: Subject, k: ProblemKit) -> None:
    """Every count in the plan is an integer >= 1 (a job with none is paused, not given 0)."""
    for seed in TINY_SEEDS:
        inst = k.tiny(seed)
        plan = solve_checked(subject, inst, seed=seed)
        tables = list((plan.allocation or {}).items())
        tables += [(f"{job}@{server}", counts) for job, where in (plan.placement or {}).items() for server, counts in where.items()]
        for label, counts in tables:
            for role, n in counts.items():
                if not (isinstance(n, int) and not isinstance(n, bool) and n >= 1):
                    raise fail(subject.solver, f"{label}.{role} = {n!r}: counts are integers >= 1", inst)


def check_deterministic(subject: Subject, k: ProblemKit) -> None:
    """The same instance and seed give the same plan."""
    for seed in TINY_SEEDS:
        inst = k.tiny(seed)
        a, b = (decisions(solve_checked(subject, inst, seed=7)) for _ in range(2))
        if a != b:
            diff = sorted(key for key in a if a[key] != b[key])
            raise fail(subject.solver, f"two solves with seed 7 differ in {', '.join(diff)}: not deterministic", inst)


def check_instance_not_mutated(subject: Subject, k: ProblemKit) -> None:
    """Solving leaves the instance as it was."""
    for seed in TINY_SEEDS:
        inst = k.tiny(seed)
        before = copy.deepcopy(inst.to_dict())
        solve_checked(subject, inst, seed=seed)
        if inst.to_dict() != before:
            raise fail(subject.solver, "changed the instance it was given", Instance.from_dict(before))


@contextlib.contextmanager
def _captured_fds() -> Iterator[list[str]]:
    """Capture what is written to file descriptors 1 and 2 (Python and C code alike)."""
    out: list[str] = []
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            with contextlib.redirect_stdout(_FdWriter(1)), contextlib.redirect_stderr(_FdWriter(2)):
                yield out
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            tmp.seek(0)
            out.append(tmp.read().decode(errors="replace"))


class _FdWriter:
    """A text stream that writes straight to a file descriptor."""

    def __init__(self, fd: int):
        self.fd = fd

    def write(self, text: str) -> int:
        os.write(self.fd, text.encode())
        return len(text)

    def flush(self) -> None:
        pass


def check_no_printing(subject: Subject, k: ProblemKit) -> None:
    """A solve writes nothing to stdout or stderr (log through Python logging instead)."""
    inst = k.tiny(0)
    with _captured_fds() as out:
        solve_checked(subject, inst, seed=0)
    text = out[0] if out else ""
    if text.strip():
        raise fail(subject.solver, f"printed {len(text)} characters during solve, e.g. {text.strip()[:200]!r}", inst)


def check_time_limit(subject: Subject, k: ProblemKit) -> None:
    """With time_limit = 1 s on a larger instance the solve returns within the limit plus 2 s."""
    inst = k.larger(0)
    t0 = time.perf_counter()
    plan = solve_checked(subject, inst, seed=0, time_limit=TIME_LIMIT_S)
    took = time.perf_counter() - t0
    if took > TIME_LIMIT_S + TIME_SLACK_S:
        raise fail(subject.solver, f"took {took:.2f} s with time_limit={TIME_LIMIT_S:g} s "
                                   f"(allowed {TIME_LIMIT_S + TIME_SLACK_S:g} s; status {plan.status.value})")


def check_empty_instance(subject: Subject, k: ProblemKit) -> None:
    """No jobs: a plan that serves nothing, with objective 0."""
    assert k.empty is not None
    inst = k.empty()
    plan = solve_checked(subject, inst)
    if not plan.has_solution or served(plan) != 0 or (plan.objective.value not in (None, 0.0)):
        raise fail(subject.solver, f"on no jobs: status {plan.status.value}, served {served(plan)}, "
                                   f"objective {plan.objective.value} (expected a solution serving none, value 0)", inst)


def check_oversubscribed(subject: Subject, k: ProblemKit) -> None:
    """More jobs than fit: the plan serves as many as can be, pauses the rest, and checks."""
    assert k.oversubscribed is not None
    inst, most = k.oversubscribed()
    plan = solve_checked(subject, inst)
    if served(plan) > most:
        raise fail(subject.solver, f"serves {served(plan)} jobs where at most {most} fit", inst)
    if served(plan) < most:
        raise fail(subject.solver, f"serves {served(plan)} jobs where {most} fit (a heuristic may, but this "
                                   f"instance is the simplest case: one job per free slot)", inst)


def check_unmeetable(subject: Subject, k: ProblemKit) -> None:
    """No job can be served: a plan (not an exception) serving none."""
    assert k.unmeetable is not None
    inst = k.unmeetable()
    plan = solve_checked(subject, inst)
    if served(plan) != 0:
        raise fail(subject.solver, f"serves {served(plan)} jobs where none fits", inst)
    if plan.status not in (Status.INFEASIBLE, Status.OPTIMAL, Status.HEURISTIC, Status.FEASIBLE):
        raise fail(subject.solver, f"status {plan.status.value} on an instance where no job fits", inst)


@dataclass(frozen=True)
class Tags:
    """A solver's capability flags, which select the checks it meets (as scikit-learn's
    estimator tags do): its registration's, else its class attributes' (False when absent)."""

    problem: str
    exact: bool = False
    time_limit: bool = False
    accelerator_types: bool = False
    quotas: bool = False
    restarts: bool = False
    objectives: bool = False


def tags_of(subject: Subject) -> Tags:
    from schedopt.registry import registered

    info = registered(subject.name)
    if info is not None and info.factory is type(subject.solver):
        return Tags(**info.tags)
    flag = lambda name: bool(getattr(subject.solver, name, False))  # noqa: E731
    return Tags(subject.problem, exact=flag("exact"), time_limit=flag("supports_time_limit"),
                accelerator_types=flag("accelerator_types"), quotas=flag("quotas"), restarts=flag("restarts"),
                objectives=flag("objectives"))


def supports_time_limit(subject: Subject) -> bool:
    """The solver's ``supports_time_limit`` flag (its registration's, else its class attribute's)."""
    return tags_of(subject).time_limit


def optimum_numbers(instance: Instance, problem: str) -> tuple[int | None, float | None]:
    """The exact optimum's (admitted count, value) of a tiny instance: brute force for
    allocation (typed rows, quota rows and restart costs included), else the problem's
    exact solver; (None, None) when the instance has no optimum."""
    if problem == "allocation":
        from schedopt.allocation.bruteforce import solve_bruteforce_typed

        admitted, total, _, _ = solve_bruteforce_typed(instance)
        return admitted, total
    opt = _optimum(instance, problem)
    if opt is None or not opt.has_solution:
        return None, None
    return opt.objective.admitted, opt.objective.value


def against_the_optimum(subject: Subject, tags: Tags, instance: Instance, seed: int) -> None:
    """The plan checks, is deterministic, is never better than the optimum, its bounds lie on the
    right side of it, and an exact solver's "optimal" plan is the optimum."""
    from schedopt.tolerances import REL_TOL

    plan = solve_checked(subject, instance, seed=seed)
    if decisions(solve_checked(subject, instance, seed=seed)) != decisions(plan):
        raise fail(subject.solver, f"two solves with seed {seed} gave different plans", instance)
    admitted, value = optimum_numbers(instance, subject.problem)
    obj = plan.objective
    if admitted is None or value is None or obj.admitted is None:
        return
    tol = REL_TOL * max(1.0, abs(value))
    if obj.admitted > admitted or (obj.admitted == admitted and admitted and obj.value is not None
                                   and obj.value < value - tol):
        raise fail(subject.solver, f"admits {obj.admitted} at {obj.value}: better than the optimum "
                                   f"({admitted} at {value:.9g})", instance)
    if obj.admitted_bound is not None and obj.admitted_bound < admitted:
        raise fail(subject.solver, f"admitted_bound {obj.admitted_bound} < the optimum's {admitted}", instance)
    if obj.bound is not None and obj.admitted == admitted and admitted and obj.bound > value + tol:
        raise fail(subject.solver, f"its bound {obj.bound:.9g} is above the optimum {value:.9g}", instance)
    if tags.exact and plan.status == Status.OPTIMAL and (
            obj.admitted != admitted or (admitted and obj.value is not None and abs(obj.value - value) > tol)):
        raise fail(subject.solver, f'"optimal" with {obj.admitted} at {obj.value}; the optimum is {admitted} at '
                                   f"{value:.9g}", instance)


def _kit_against_the_optimum(subject: Subject, build: Callable[[int], Instance] | None) -> None:
    """:func:`against_the_optimum` on the kit case ``build`` at every tiny seed."""
    assert build is not None
    tags = tags_of(subject)
    for seed in TINY_SEEDS:
        against_the_optimum(subject, tags, build(seed), seed)


def check_typed_instances(subject: Subject, k: ProblemKit) -> None:
    """Tag ``accelerator_types``: on clusters with accelerator types, plans check and meet the optimum's sides."""
    _kit_against_the_optimum(subject, k.typed)


def check_quota_instances(subject: Subject, k: ProblemKit) -> None:
    """Tag ``quotas``: with tenants' queues and quotas, plans check (every quota row) and meet the optimum's sides."""
    _kit_against_the_optimum(subject, k.quotas)


def check_restart_instances(subject: Subject, k: ProblemKit) -> None:
    """Running jobs with restart costs: every solver's plans check (the objective charges the
    restarts) and meet the optimum's sides; with tag ``restarts`` an exact solver's optimum is it."""
    _kit_against_the_optimum(subject, k.restarts)


def check_objective_instances(subject: Subject, k: ProblemKit) -> None:
    """Under the problem's other objective (the average-JCT one) every solver's plans name it and
    check; with tag ``objectives`` (it decides by that objective) they meet the optimum's sides
    (brute force under that objective)."""
    assert k.objectives is not None
    tags = tags_of(subject)
    for seed in TINY_SEEDS:
        instance = k.objectives(seed)
        if instance.typed and not tags.accelerator_types:
            continue  # refused in one line (check refuses_types)
        plan = solve_checked(subject, instance, seed=seed)
        if plan.has_solution and plan.objective.name != instance.objective:
            raise fail(subject.solver, f"plan names objective {plan.objective.name!r}; the instance poses "
                                       f"{instance.objective!r}", instance)
        if tags.objectives:
            against_the_optimum(subject, tags, instance, seed)


def _refuses(subject: Subject, instance: Instance, what: str) -> None:
    """A solver that does not model ``what`` refuses an instance stating it: an InputError of one
    line (through ``schedopt.solve`` for a registered name; from ``solve`` for an object)."""
    from schedopt.errors import InputError
    from schedopt.registry import registered

    info = registered(subject.name)
    try:
        if info is not None and info.factory is type(subject.solver):
            info.refuse(instance)  # what schedopt.solve does at its door
        subject.solver.solve(instance, time_limit=None, seed=0)
    except InputError as exc:
        if "\n" in str(exc).strip():
            raise fail(subject.solver, f"refuses {what} in more than one line: {exc}", instance) from exc
        return
    except Exception as exc:
        raise fail(subject.solver, f"raised {type(exc).__name__} on {what} (expected an InputError): {exc}", instance) from exc
    raise fail(subject.solver, f"does not declare that it models {what}, yet solved an instance stating them: "
                               f"declare the flag, or refuse such instances", instance)


def check_refuses_types(subject: Subject, k: ProblemKit) -> None:
    """Without tag ``accelerator_types``: an instance with accelerator types is refused in one line."""
    assert k.typed is not None
    _refuses(subject, k.typed(0), "accelerator types")


def check_refuses_quotas(subject: Subject, k: ProblemKit) -> None:
    """Without tag ``quotas``: an instance with tenants' queues is refused in one line."""
    assert k.quotas is not None
    _refuses(subject, k.quotas(0), "tenants' queues and quotas")


_OPTIMA: dict[tuple[str, str], Plan | None] = {}


def _optimum(instance: Instance, problem: str) -> Plan | None:
    """The exact optimum of a kit instance (brute force or the problem's exact
    solver), cached; None when the instance has none (infeasible, or Dorm's
    P2 infeasible so the previous placement is kept)."""
    from schedopt.testing.gaps import GapError, reference_plan

    key = (problem, dumps(instance.to_dict(), ".json"))
    if key not in _OPTIMA:
        try:
            _OPTIMA[key] = reference_plan(instance, problem)[1]
        except GapError as exc:
            if not any(f"status {s}" in str(exc) for s in ("infeasible", "kept_previous")):
                raise
            _OPTIMA[key] = None
    return _OPTIMA[key]


def check_bound_valid(subject: Subject, k: ProblemKit) -> None:
    """Every bound the solver states lies on the right side of the exact optimum
    (brute force, or the problem's exact solver), its certificate replays, and
    its admitted bound is no less than the optimum's admitted count."""
    from schedopt.checking import REL_TOL

    if k.reference is None and subject.problem != "allocation":
        return  # no exact solver to compare with
    for seed in TINY_SEEDS:
        inst = k.tiny(seed)
        plan = solve_checked(subject, inst, seed=seed)  # schedopt.check replays the certificates
        obj = plan.objective
        if not plan.has_solution or (obj.bound is None and obj.admitted_bound is None):
            continue
        opt = _optimum(inst, subject.problem)
        if opt is None or not opt.has_solution or opt.objective.value is None:
            continue
        o = opt.objective.value
        if obj.admitted_bound is not None and opt.objective.admitted is not None and obj.admitted_bound < opt.objective.admitted:
            raise fail(subject.solver, f"admitted_bound {obj.admitted_bound} < the optimum's {opt.objective.admitted} "
                                       f"admitted jobs", inst)
        if obj.bound is None:
            continue
        tol = REL_TOL * max(1.0, abs(o))
        wrong = obj.bound > o + tol if obj.sense == "min" else obj.bound < o - tol
        if wrong:
            side = "lower" if obj.sense == "min" else "upper"
            raise fail(subject.solver, f"its {side} bound {obj.bound:.9g} is on the wrong side of the optimum "
                                       f"{o:.9g} (seed {seed})", inst)


def check_time_limit_unused(subject: Subject, k: ProblemKit) -> None:
    """A solver registered without time-limit support gives the same plan with and without a limit."""
    if supports_time_limit(subject):
        return
    inst = k.larger(0)
    a = decisions(solve_checked(subject, inst, seed=0))
    b = decisions(solve_checked(subject, inst, seed=0, time_limit=0.001))
    if a != b:
        diff = sorted(key for key in a if a[key] != b[key])
        raise fail(subject.solver, f"time_limit=0.001 changed {', '.join(diff)}, but the solver is registered without "
                                   f"time-limit support (supports_time_limit=False): register it with True", inst)


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[Subject, ProblemKit], None]
    needs: str | None = None  # the kit case it needs (skipped when the problem has none)
    #: the solver's tags it applies to (every solver when None)
    when: Callable[[Tags], bool] | None = None


CHECKS: tuple[Check, ...] = (
    Check("feasible_plans", check_feasible_plans),
    Check("integer_counts", check_integer_counts),
    Check("deterministic", check_deterministic),
    Check("instance_not_mutated", check_instance_not_mutated),
    Check("no_printing", check_no_printing),
    Check("time_limit", check_time_limit),
    Check("bound_valid", check_bound_valid),
    Check("time_limit_unused", check_time_limit_unused, when=lambda t: not t.time_limit),
    Check("empty_instance", check_empty_instance, needs="empty"),
    Check("oversubscribed", check_oversubscribed, needs="oversubscribed"),
    Check("unmeetable", check_unmeetable, needs="unmeetable"),
    Check("typed_instances", check_typed_instances, needs="typed", when=lambda t: t.accelerator_types),
    Check("refuses_types", check_refuses_types, needs="typed", when=lambda t: not t.accelerator_types),
    Check("quota_instances", check_quota_instances, needs="quotas", when=lambda t: t.quotas),
    Check("refuses_quotas", check_refuses_quotas, needs="quotas", when=lambda t: not t.quotas),
    Check("restart_instances", check_restart_instances, needs="restarts"),
    Check("objective_instances", check_objective_instances, needs="objectives"),
)


def applicable(subject: Subject, k: ProblemKit) -> list[Check]:
    """The checks the solver's tags select, among those whose kit case the problem has."""
    tags = tags_of(subject)
    return [c for c in CHECKS if (c.needs is None or getattr(k, c.needs) is not None)
            and (c.when is None or c.when(tags))]


def known_deviations(subject: Subject) -> dict[str, str]:
    """The checks a solver declares it fails on purpose, with why (its class attribute
    ``contract_deviations``: check name -> reason), like scikit-learn's ``_xfail_checks``:
    a baseline faithful to a system that behaves otherwise. They must still fail
    (a deviation that stops failing is reported), so the declaration cannot go stale."""
    return dict(getattr(subject.solver, "contract_deviations", {}) or {})


def check_solver(solver: Any, *, problem: str | None = None, checks: Iterable[str] | None = None,
                 kit_: ProblemKit | None = None) -> list[str]:
    """Run the contract checks on ``solver`` (a registered name or an object
    with ``solve``); raises :class:`SolverCheckError` listing every failure.
    Returns the names of the checks that ran. ``checks`` limits them by name."""
    subject = resolve(solver, problem)
    k = kit_ or kit(subject.problem)
    wanted = set(checks) if checks is not None else None
    if wanted is not None:
        unknown = wanted - {c.name for c in CHECKS}
        if unknown:
            raise ValueError(f"unknown checks: {', '.join(sorted(unknown))}; known: {', '.join(c.name for c in CHECKS)}")
    ran, failures = [], []
    deviations = known_deviations(subject)
    for c in applicable(subject, k):
        if wanted is not None and c.name not in wanted:
            continue
        ran.append(c.name)
        try:
            c.run(subject, k)
        except SolverCheckError as exc:
            if c.name not in deviations:
                failures.append(f"[{c.name}] {exc}")
        else:
            if c.name in deviations:
                failures.append(f"[{c.name}] declared a deviation ({deviations[c.name]}) but passes: remove the declaration")
    if failures:
        raise SolverCheckError(f"{len(failures)} of {len(ran)} checks failed for {subject.name} "
                               f"(problem {subject.problem}):\n\n" + "\n\n".join(failures))
    return ran


def parametrize_with_checks(solvers: Iterable[Any], *, problem: str | None = None) -> Any:
    """A ``pytest.mark.parametrize("solver, check", ...)`` over every solver
    and every check that applies to it; ids read ``name-check``. Use with
    ``def test_contract(solver, check): check(solver)``."""
    import pytest

    from schedopt.registry import solver_info

    params = []
    for s in solvers:
        if isinstance(s, str):  # a solver this environment cannot run is skipped, saying why
            why = solver_info(s).unavailable
            if why is not None:
                params.append(pytest.param(None, None, id=f"{s}-unavailable", marks=pytest.mark.skip(reason=why)))
                continue
        subject = resolve(s, problem)
        k = kit(subject.problem)
        deviations = known_deviations(subject)
        for c in applicable(subject, k):
            marks = [pytest.mark.xfail(reason=deviations[c.name], raises=SolverCheckError, strict=True)] \
                if c.name in deviations else []
            params.append(pytest.param(subject, _Bound(c, k), id=f"{subject.name}-{c.name}", marks=marks))
    return pytest.mark.parametrize("solver, check", params)


@dataclass(frozen=True)
class _Bound:
    """A check with its kit: call it with the subject."""

    check: Check
    kit: ProblemKit

    def __call__(self, subject: Any) -> None:
        self.check.run(subject if isinstance(subject, Subject) else resolve(subject), self.kit)

    def __repr__(self) -> str:
        return self.check.name
