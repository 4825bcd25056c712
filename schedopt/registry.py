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
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from schedopt.errors import FieldProblem, InputError, UnknownSolverError
from schedopt.instance import Instance
from schedopt.io import did_you_mean
from schedopt.plan import Plan
from schedopt.problems import plugin_solver_classes


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
    requires: tuple[str, ...] = ()  # optional backends it needs (schedopt.backends.deps.REQUIREMENTS)
    accelerator_types: bool = False  # solves instances whose servers name accelerator types (or jobs' spread)
    quotas: bool = False  # honours tenants' queues and their quota rows (Kueue's ClusterQueues)
    restarts: bool = False  # weighs running jobs' restart cost in its decisions (else the objective still charges it)
    objectives: bool = False  # decides by the instance's allocation objective (policy.objective) and takes `objective`

    @property
    def tags(self) -> dict[str, Any]:
        """The capability flags the contract checks key on (``schedopt.testing``)."""
        return {"problem": self.problem, "exact": self.exact, "time_limit": self.supports_time_limit,
                "accelerator_types": self.accelerator_types, "quotas": self.quotas, "restarts": self.restarts,
                "objectives": self.objectives}

    @property
    def unavailable(self) -> str | None:
        """Why this solver cannot run in this environment (None: it can)."""
        from schedopt.backends.deps import why_unavailable

        for requirement in self.requires:
            why = why_unavailable(requirement)
            if why is not None:
                return why
        return None

    def refuse(self, instance: Instance) -> None:
        """Refuse, in one line (an :class:`InputError`), an instance that states what this solver
        does not model (its flags): accelerator types or spread-dependent speed, tenants' queues."""
        if (instance.has_types or any(job.spread is not None for job in instance.jobs)) and not self.accelerator_types:
            able = ", ".join(s.name for s in solvers(self.problem) if s.accelerator_types) or "none"
            raise InputError("solver", f'{self.name} does not model accelerator types or spread-dependent speed, and '
                                       f'instance "{instance.name}" states them (servers[].accelerator, jobs[].spread); '
                                       f"solvers that do: {able}")
        if instance.queues and not self.quotas:
            able = ", ".join(s.name for s in solvers(self.problem) if s.quotas) or "none"
            raise InputError("solver", f'{self.name} does not model tenants\' queues and quotas, and instance '
                                       f'"{instance.name}" states them (queues, jobs[].queue); solvers that do: {able}')

    def make(self, **options: Any) -> Solver:
        from schedopt.backends.deps import require

        for requirement in self.requires:
            require(requirement, f"solver {self.name}")
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise InputError(f"solver {self.name}", [
                FieldProblem(f"option {k}", f"unknown option{did_you_mean(k, sorted(self.options))}; options: {known}")
                for k in unknown])
        problems = [p for key, value in options.items() if (p := option_problem(key, value, self.options[key]))]
        if problems:
            raise InputError(f"solver {self.name}", [FieldProblem(f"option {k}", m) for k, m in problems])
        return self.factory(**options)


#: ranges of the options several solvers share: name -> (low, high, integer)
OPTION_RANGES: dict[str, tuple[float, float, bool]] = {
    "rel_gap": (0.0, 1.0, False),
    "threads": (1, 64, True),
    "workers": (1, 64, True),
    "priority_factor": (0.0, 1.0, False),
    "weight_dltap": (0.0, 1e6, False),
}


def option_problem(key: str, value: Any, default: Any) -> tuple[str, str] | None:
    """Why ``value`` is not acceptable for option ``key`` (whose default is
    ``default``), or None. Types follow the default; shared options have ranges."""
    def is_number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    if isinstance(default, bool):
        if not isinstance(value, bool):
            return key, f"expected true or false, got {value!r}"
    elif isinstance(default, int) and key not in OPTION_RANGES:
        if not (is_number(value) and float(value).is_integer()):
            return key, f"expected an integer, got {value!r}"
    elif isinstance(default, float) and key not in OPTION_RANGES:
        if not is_number(value):
            return key, f"expected a number, got {value!r}"
    elif isinstance(default, str) and not isinstance(value, str):
        return key, f"expected a string, got {value!r}"
    if key in OPTION_RANGES:
        low, high, integer = OPTION_RANGES[key]
        if not is_number(value) or (integer and not float(value).is_integer()) or not low <= value <= high:
            kind = "an integer" if integer else "a number"
            return key, f"expected {kind} in [{low:g}, {high:g}], got {value!r}"
    return None


_REGISTRY: dict[str, SolverInfo] = {}


def register(name: str, *, problem: str, exact: bool, backend: str, supports_time_limit: bool = False,
             requires: tuple[str, ...] = (), accelerator_types: bool = False, quotas: bool = False,
             restarts: bool = False, objectives: bool = False) -> Callable[[type], type]:
    """Class decorator: register ``cls`` under ``name``. Options are the keyword
    arguments of ``cls.__init__`` with their defaults; the docstring's first line
    is the description. The flags say what it models (:class:`SolverInfo`); the API
    refuses an instance that states what the solver does not model."""

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
        cls.supports_time_limit = supports_time_limit
        cls.accelerator_types, cls.quotas, cls.restarts, cls.objectives = accelerator_types, quotas, restarts, objectives
        _REGISTRY[name] = SolverInfo(
            name=name, problem=problem, exact=exact, backend=backend,
            description=doc[0] if doc else "", factory=cls, options=options,
            supports_time_limit=supports_time_limit, requires=tuple(requires), accelerator_types=accelerator_types,
            quotas=quotas, restarts=restarts, objectives=objectives,
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
             supports_time_limit=bool(getattr(cls, "supports_time_limit", False)),
             accelerator_types=bool(getattr(cls, "accelerator_types", False)), quotas=bool(getattr(cls, "quotas", False)),
             restarts=bool(getattr(cls, "restarts", False)), objectives=bool(getattr(cls, "objectives", False)))(cls)


def _load_builtin() -> None:
    # The problem registry's discovery imports every problem package, its solvers and plugins;
    # the solver classes plugins declare by entry point are registered here.
    for name, cls in plugin_solver_classes().items():
        register_class(name, cls)


def solver_info(name: str) -> SolverInfo:
    _load_builtin()
    if "+" in name:
        return _composed_info(name)
    try:
        return _REGISTRY[name]
    except KeyError:
        hint = did_you_mean(name, sorted(_REGISTRY))
        if hint:
            raise UnknownSolverError("solver", f'unknown solver "{name}"{hint}') from None
        raise UnknownSolverError("solver", f'unknown solver "{name}"; known: {", ".join(sorted(_REGISTRY))}') from None


#: composers of solver names with a "+" (``ALLOCATION+PLACEMENT``), registered by the problem
#: packages that define them (the placement package registers its allocation-then-placement pipeline)
_COMPOSERS: list[Callable[[str], SolverInfo]] = []


def register_composer(compose: Callable[[str], SolverInfo]) -> None:
    """Let ``compose(name)`` describe solver names that join two solvers with "+"."""
    if compose not in _COMPOSERS:
        _COMPOSERS.append(compose)


def _composed_info(name: str) -> SolverInfo:
    if not _COMPOSERS:
        raise UnknownSolverError("solver", f'"{name}": no package composes solvers with "+"')
    return _COMPOSERS[0](name)


def registered(name: str) -> SolverInfo | None:
    """The registration of ``name`` (None when no solver is registered under it)."""
    _load_builtin()
    return _REGISTRY.get(name)


def solvers(problem: str | None = None) -> list[SolverInfo]:
    """Registered solvers (optionally of one problem kind), sorted by problem and name."""
    _load_builtin()
    infos = [i for i in _REGISTRY.values() if problem is None or i.problem == problem]
    return sorted(infos, key=lambda i: (i.problem, not i.exact, i.name))


def get_solver(name: str, **options: Any) -> Solver:
    return solver_info(name).make(**options)
