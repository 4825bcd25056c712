"""The problem contract and the problem registry.

Each problem is declared once, in its own package (``<package>/contract.py``),
as a :class:`Problem`: its name, objective(s) and sense, how it is recognised
from an instance, ``compile`` to its data, ``metrics`` and ``check`` of a plan,
its instance families for ``schedopt generate`` and the modules whose import
registers its solvers. :func:`discover` imports the built-in problem packages
and any other package's problems and solvers declared through the entry-point
groups ``schedopt.problems`` and ``schedopt.solvers``.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Callable, Literal

from schedopt.claims import Replay
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan

if TYPE_CHECKING:
    from schedopt.violations import Violation

#: the problem packages of this library, in the order their solvers are listed
BUILTIN_PROBLEM_MODULES = (
    "schedopt.allocation.contract",
    "schedopt.quality.contract",
    "schedopt.partition.contract",
    "schedopt.placement.contract",
)
#: modules that add solvers or families to problems declared elsewhere
BUILTIN_EXTENSION_MODULES = ("schedopt.learn.dl2", "schedopt.sim.workloads", "schedopt.sim.faithful")
PROBLEM_GROUP = "schedopt.problems"
SOLVER_GROUP = "schedopt.solvers"


@dataclass(frozen=True)
class Family:
    """An instance family for ``schedopt generate``.

    ``build(jobs, servers, rng, max_tasks, data_dir)`` returns the instance's
    ``resources``, ``servers`` and ``jobs`` (and, where the family has them,
    ``policy`` and ``allocation``) as plain data; the caller validates it."""

    name: str
    build: Callable[..., dict[str, Any]]
    description: str = ""


@dataclass(frozen=True)
class ObjectiveSpec:
    """One objective of a problem; several are lexicographic, first first."""

    name: str
    sense: Literal["min", "max"]


@dataclass
class Problem:
    """A scheduling problem: what it optimises and how a plan of it is judged.

    ``recognizes(instance)`` says whether an instance poses this problem when
    nobody names one; problems are tried by ``rank`` (lower first).
    ``compile(instance)`` returns the problem's arrays; ``metrics(instance, plan)``
    and ``check(instance, plan) -> list[Violation]`` recompute from the instance
    alone; ``objective_value(instance, plan)`` recomputes the plan's objective.
    ``solver_modules`` are imported to register the problem's solvers.
    ``rejects(instance)`` says, in one line, why an instance cannot be solved as
    this problem at all (a solver of this problem named for it is refused)."""

    name: str
    description: str
    objectives: tuple[ObjectiveSpec, ...]
    recognizes: Callable[[Instance], bool]
    compile: Callable[[Instance], Any]
    metrics: Callable[[Instance, Plan], dict[str, Any]]
    check: Callable[[Instance, Plan], "list[Violation]"]
    objective_value: Callable[[Instance, Plan], float]
    solver_modules: tuple[str, ...] = ()
    families: dict[str, Family] = field(default_factory=dict)
    rank: int = 50
    default_solver: str | None = None  # what ``solve(instance)`` uses when no solver is named
    #: why ``instance`` cannot pose this problem (one line), or None when it can; None: ``recognizes``
    rejects: Callable[[Instance], str | None] | None = None
    #: certificate kind -> its :class:`Replay` (the claim it proves, and the replay: code independent
    #: of the solvers', docs/certificates.md); a bare callable proves ``bound``
    certificates: dict[str, "Replay | Callable[[Instance, Plan, Any], float]"] = field(default_factory=dict)
    #: the instance as a plan's objective reads it, for a problem with several objectives
    #: (allocation: ``policy.objective`` set to the plan's ``objective.name``); ValueError
    #: naming the objectives it has when the plan names another. None: one objective
    objective_instance: Callable[[Instance, Plan], Instance] | None = None

    @property
    def lexicographic_admission(self) -> bool:
        """Whether the first objective is the admitted count (allocation, quality; placement's
        placed count): a plan
        pausing a job is optimal only if no plan admits more (docs/certificates.md)."""
        return bool(self.objectives) and self.objectives[0].name in ("admitted", "placed")

    def why_not(self, instance: Instance) -> str | None:
        """Why a solver of this problem cannot take ``instance`` (None: it can)."""
        if self.rejects is not None:
            return self.rejects(instance)
        return None if self.recognizes(instance) else f"it is not a {self.name} instance"



_PROBLEMS: dict[str, Problem] = {}
_FAMILIES: dict[str, tuple[str, Family]] = {}  # family -> (problem, family)
_lock = threading.RLock()
_state = {"discovered": False}
_SOLVER_PLUGINS: dict[str, type] = {}  # entry-point name -> solver class


def register_problem(problem: Problem) -> Problem:
    """Add ``problem`` to the registry (called by each problem's contract module)."""
    with _lock:
        if problem.name in _PROBLEMS and _PROBLEMS[problem.name] is not problem:
            raise RuntimeError(f"problem {problem.name!r} registered twice")
        _PROBLEMS[problem.name] = problem
        for fam in problem.families.values():
            _FAMILIES[fam.name] = (problem.name, fam)
    return problem


def add_family(problem: str, family: Family) -> None:
    """Add an instance family to a registered problem (e.g. simulation workloads)."""
    with _lock:
        if problem not in _PROBLEMS:  # a workload module imported before the registry: load the built-in problems
            for module in BUILTIN_PROBLEM_MODULES:
                importlib.import_module(module)
        if problem not in _PROBLEMS:
            raise KeyError(f"add_family: no problem {problem!r} is registered")
        _PROBLEMS[problem].families[family.name] = family
        _FAMILIES[family.name] = (problem, family)


def _load_entry_points(group: str) -> None:
    for ep in entry_points(group=group):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plugin must not break the library
            warnings.warn(f"schedopt: entry point {ep.name!r} ({ep.value}) of group {group} failed to load: {exc}",
                          RuntimeWarning, stacklevel=2)
            continue
        if isinstance(obj, Problem):
            register_problem(obj)
        elif group == SOLVER_GROUP and isinstance(obj, type):
            _SOLVER_PLUGINS[ep.name] = obj  # the registry registers them (it sits above this module)


def discover() -> None:
    """Import the built-in problems, their solvers and every installed plugin, once."""
    if _state["discovered"]:
        return
    with _lock:
        if _state["discovered"]:
            return
        for module in BUILTIN_PROBLEM_MODULES:
            importlib.import_module(module)
        _load_entry_points(PROBLEM_GROUP)
        for problem in list(_PROBLEMS.values()):
            for module in problem.solver_modules:
                importlib.import_module(module)
        for module in BUILTIN_EXTENSION_MODULES:
            importlib.import_module(module)
        _load_entry_points(SOLVER_GROUP)
        _state["discovered"] = True


def plugin_solver_classes() -> dict[str, type]:
    """The solver classes installed plugins declare (entry points of ``schedopt.solvers``),
    once :func:`discover` has run: the registry registers them."""
    discover()
    return dict(_SOLVER_PLUGINS)


def find_contract(name: str) -> Problem | None:
    """The problem called ``name`` with its contract only (its checker and certificate
    replays): the built-in problem packages and plugins' problems are loaded, no solver
    module is (what :func:`schedopt.checking.check` needs)."""
    with _lock:
        if name not in _PROBLEMS and not _state.get("contracts"):
            for module in BUILTIN_PROBLEM_MODULES:
                importlib.import_module(module)
            _load_entry_points(PROBLEM_GROUP)
            _state["contracts"] = True
        return _PROBLEMS.get(name)


def problems() -> list[Problem]:
    """Every registered problem, in recognition order."""
    discover()
    return sorted(_PROBLEMS.values(), key=lambda p: (p.rank, p.name))


def find_problem(name: str) -> Problem | None:
    discover()
    return _PROBLEMS.get(name)


def get_problem(name: str) -> Problem:
    """The problem called ``name``; an :class:`InputError` listing the known ones otherwise."""
    problem = find_problem(name)
    if problem is None:
        known = ", ".join(p.name for p in problems())
        raise InputError("problem", f'unknown problem "{name}"; known: {known}')
    return problem


def infer_problem(instance: Instance) -> str:
    """The problem an instance poses when nobody says: the first problem, by
    rank, that recognises it (``allocation`` recognises every instance)."""
    for problem in problems():
        if problem.recognizes(instance):
            return problem.name
    return "allocation"


def families() -> dict[str, tuple[str, Family]]:
    """Every instance family: name -> (problem, family)."""
    discover()
    return dict(_FAMILIES)
