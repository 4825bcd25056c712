"""The solver registry: solvers are found by name, never by if/elif on strings.

A solver is a class registered with :func:`register`. Its constructor takes the
solver's options as keywords (validated here against the declared defaults);
its ``solve(instance, *, time_limit=None, seed=None) -> Plan`` does the work.

Solvers of other packages register the same way: the package declares an entry
point in the group ``schedopt.solvers`` naming either a module (importing it runs
its ``@register``) or a solver class, registered under the entry point's name
with its class attributes ``problem``, ``exact`` and ``backend``
(see docs/architecture.md).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from schedopt.errors import InputError, UnknownSolverError
from schedopt.instance import Instance
from schedopt.plan import Plan


class Solver(Protocol):
    name: str

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan: ...


@dataclass(frozen=True)
class SolverInfo:
    """A registered solver and its capability flags."""

    name: str
    problem: str  # allocation | quality | partition | placement | ps-assignment
    exact: bool  # proves optimality (given time)
    backend: str  # python, numpy, pyomo+highs, cp-sat, ...
    description: str
    factory: Callable[..., Solver] = field(repr=False)
    options: dict[str, Any] = field(default_factory=dict)  # option -> default
    supports_time_limit: bool = False

    def make(self, **options: Any) -> Solver:
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise InputError(f"solver {self.name}", f"unknown option(s) {unknown}; options: {known}")
        return self.factory(**options)


_REGISTRY: dict[str, SolverInfo] = {}


def register(name: str, *, problem: str, exact: bool, backend: str, supports_time_limit: bool = False) -> Callable[[type], type]:
    """Class decorator: register ``cls`` under ``name``. Options are the keyword
    arguments of ``cls.__init__`` with their defaults; the docstring's first line
    is the description."""

    def deco(cls: type) -> type:
        if name in _REGISTRY and _REGISTRY[name].factory is not cls:
            raise RuntimeError(f"solver {name!r} registered twice")
        params = inspect.signature(cls.__init__).parameters
        options = {
            p.name: p.default for p in params.values()
            if p.name != "self" and p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        doc = (cls.__doc__ or "").strip().splitlines()
        cls.name = name
        _REGISTRY[name] = SolverInfo(
            name=name, problem=problem, exact=exact, backend=backend,
            description=doc[0] if doc else "", factory=cls, options=options,
            supports_time_limit=supports_time_limit,
        )
        return cls

    return deco


def register_class(name: str, cls: type) -> None:
    """Register a solver class given by an entry point (unless its module's
    ``@register`` already did): ``problem`` is required; ``exact`` (False),
    ``backend`` ("python") and ``supports_time_limit`` (False) default."""
    if name in _REGISTRY or getattr(cls, "name", None) in _REGISTRY:
        return
    problem = getattr(cls, "problem", None)
    if not isinstance(problem, str):
        raise TypeError(f"solver class {cls.__qualname__} has no `problem` attribute naming its problem")
    register(name, problem=problem, exact=bool(getattr(cls, "exact", False)),
             backend=str(getattr(cls, "backend", "python")),
             supports_time_limit=bool(getattr(cls, "supports_time_limit", False)))(cls)


def _load_builtin() -> None:
    # The problem registry's discovery imports every problem package, its solvers and plugins.
    from schedopt.problems import discover

    discover()


def solver_info(name: str) -> SolverInfo:
    _load_builtin()
    if "+" in name:
        return _joint_info(name)
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownSolverError("--solver", f'unknown solver "{name}"; known: {known}') from None


def _joint_info(name: str) -> SolverInfo:
    """``ALLOCATION+PLACEMENT``: the two solvers in sequence (:mod:`schedopt.placement.joint`)."""
    from schedopt.placement.joint import Pipeline, check_parts

    parts = name.split("+")
    if len(parts) != 2:
        raise UnknownSolverError("--solver", f'"{name}": a joint solver names exactly two solvers, ALLOCATION+PLACEMENT')
    first, second = (solver_info(p) for p in parts)
    check_parts(name, first.problem, second.problem)
    return SolverInfo(name=name, problem=first.problem, exact=False, backend=f"{first.backend} then {second.backend}",
                      description=f"{first.name}, then {second.name} on its counts",
                      factory=lambda: Pipeline(name, first.make(), second.make()),
                      supports_time_limit=first.supports_time_limit or second.supports_time_limit)


def solvers(problem: str | None = None) -> list[SolverInfo]:
    """Registered solvers (optionally of one problem kind), sorted by problem and name."""
    _load_builtin()
    infos = [i for i in _REGISTRY.values() if problem is None or i.problem == problem]
    return sorted(infos, key=lambda i: (i.problem, not i.exact, i.name))


def get_solver(name: str, **options: Any) -> Solver:
    return solver_info(name).make(**options)
