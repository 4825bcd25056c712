"""Plans: what every solver returns, and its file format.

A :class:`Plan` keeps *why a solve stopped* (:class:`Termination`) apart from
*what the answer is worth* (:class:`Status`), and carries the objective value,
a proven bound where the solver has one, the gap, the solver and the seconds.
Nothing here knows a problem: each problem's metrics and checker live in its
package, and :func:`schedopt.checking.check` dispatches on ``plan.problem``.
"""

from __future__ import annotations

import os
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from schedopt.errors import InputError
from schedopt.io import as_document, problems_from_validation, read_document, with_field_docs, write_document
from schedopt.tolerances import TINY

PLAN_SCHEMA = "schedopt/plan@1"


class Status(str, Enum):
    """What the plan is worth (the DESIGN.md ``status`` field)."""

    OPTIMAL = "optimal"  # proven optimal (within the solver's gap tolerance)
    FEASIBLE = "feasible"  # feasible, not proven optimal (e.g. stopped at a time limit)
    HEURISTIC = "heuristic"  # feasible, from a heuristic (bound, if any, from a relaxation)
    INFEASIBLE = "infeasible"  # no feasible plan exists (or none could run at all)
    TIME_LIMIT = "time_limit"  # stopped at the time limit with no feasible plan
    KEPT_PREVIOUS = "kept_previous"  # infeasible now, the previous placement is kept (Dorm)


class Termination(str, Enum):
    """Why the solve stopped."""

    OPTIMAL = "optimal"  # the optimality criteria were met
    COMPLETED = "completed"  # a heuristic ran to its end
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"  # the backend failed; see ``message``


class Objective(BaseModel):
    """A plan's objective: its value, the proven bound and the gap between them."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the objective, e.g. total_remaining_time (s), resource_utilization")
    sense: Literal["min", "max"] = Field("min", description="min or max")
    value: float | None = Field(None, description="the plan's objective value, recomputed by check")
    bound: float | None = Field(None, description="proven bound on the optimum (a lower bound for min), or null")
    gap: float | None = Field(None, description="|value - bound| / |value|, or null without a bound")
    admitted: int | None = Field(None, description="jobs given tasks (the first, lexicographic objective of allocation)")
    admitted_bound: int | None = Field(None, description="proven upper bound on admitted jobs")


class Proof(BaseModel):
    """The numbers that prove one bound, for :func:`schedopt.checking.check` to
    replay from the instance alone. Each problem declares the kinds it replays
    (``Problem.certificates``; docs/certificates.md has their formulas), e.g.
    ``lagrangian``: prices on the capacities (and on an admission row) whose
    Lagrangian value is the bound. ``backend``: proven by a MILP/CP-SAT
    backend's branch and bound, which nobody can replay: ``check`` reports it
    as not verified and names ``backend``."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="how the bound is proven: a kind the problem replays (lagrangian, lp-dual, ...) or backend")
    value: float | None = Field(None, description="the bound these numbers prove, in the plan's units (informative: check recomputes it)")
    prices: dict[str, float] | None = Field(None, description="resource -> price >= 0 (per unit of capacity)")
    admit: int | None = Field(None, description="lagrangian: the bound holds over plans admitting at least this many jobs")
    admit_price: float | None = Field(None, description="lagrangian: ν >= 0, the price of the admission row")
    job_prices: dict[str, float] | None = Field(None, description="knapsack-lagrangian: job id -> μ_j, the price of the job's one-configuration row (>= 0 with admit; any sign when every job runs)")
    pooled: str | None = Field(None, description="size-class-lagrangian (and a branch-lagrangian tree whose leaves carry class_prices): the resource whose use, summed over the types and floored, sorts configurations into size classes")
    class_prices: dict[str, float] | None = Field(None, description="size-class-lagrangian: size -> π_s (any sign), the price of the range every plan keeps its count of jobs of that size in (a branch-lagrangian leaf carries its own, beside its prices)")
    backend: str | None = Field(None, description="backend: who proved the bound (e.g. pyomo+highs, cp-sat)")
    tree: dict[str, Any] | None = Field(None, description="branch-lagrangian, pattern-branch: the branch tree, its leaves carrying prices (docs/certificates.md)")
    part_admit: list[int] | None = Field(None, description="pattern-lagrangian on a placement of independent parts (e.g. accelerator types): the bound holds over placements placing at least this many jobs in each part, parts in the order of their first job")
    part_admit_price: list[float] | None = Field(None, description="pattern-lagrangian: the price >= 0 of each part's admission row")
    fairness_price: float | None = Field(None, description="dorm-lagrangian: λ1 >= 0, the price of Dorm's fairness-loss budget (eq. 15)")
    adjustment_price: float | None = Field(None, description="dorm-lagrangian: λ2 >= 0, the price of Dorm's adjustment budget (eq. 16)")


class Certificate(BaseModel):
    """Proofs of a plan's bounds: ``bound`` proves ``objective.bound`` (and with
    it the gap and an "optimal" status), ``admitted_bound`` proves
    ``objective.admitted_bound``."""

    model_config = ConfigDict(extra="forbid")

    bound: Proof | None = Field(None, description="the proof of objective.bound")
    admitted_bound: Proof | None = Field(None, description="the proof of objective.admitted_bound")


_ATOMS = frozenset({str, bool, int, float, type(None)})


def plain(value: Any) -> Any:
    """``value`` as plain JSON data: mappings (string keys), lists, str, bool,
    int, float, None. Array types are recognised by their ``tolist`` (arrays and
    their scalars), so this module needs no array library."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:  # the common case, leaves without a call each: a plan's allocation and metrics
        return {(k if type(k) is str else str(k)): (v if type(v) in _ATOMS else plain(v)) for k, v in value.items()}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return plain(tolist())
    if isinstance(value, Enum):
        return plain(value.value)
    return value  # pydantic refuses what is left


def relative_gap(value: float | None, bound: float | None) -> float | None:
    """``|value - bound| / |value|`` (0 when both are 0; None when undefined)."""
    if value is None or bound is None:
        return None
    if value == 0:
        return 0.0 if abs(bound) <= TINY else None
    return abs(value - bound) / abs(value)


class Plan(BaseModel):
    """A solver's answer. Counts are per job and role; jobs left out are paused."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["schedopt/plan@1"] = Field(PLAN_SCHEMA, alias="schema", description="format tag")
    instance: str = Field(description="name of the instance solved")
    problem: str = Field("allocation", description="the registered problem the plan answers (schedopt.problems)")
    solver: str = Field(description="registered solver name")
    status: Status = Field(description="what the plan is worth: optimal, feasible, heuristic, infeasible, time_limit, kept_previous")
    termination: Termination = Field(description="why the solve stopped: optimal, completed, time_limit, infeasible, unbounded, error")
    objective: Objective = Field(description="value, bound, gap (and admitted jobs)")
    solve_seconds: float = Field(description="wall time of the solve, seconds")
    allocation: dict[str, dict[str, StrictInt]] = Field(default_factory=dict, description="job -> role -> tasks (for Dorm: containers)")
    placement: dict[str, dict[str, dict[str, StrictInt]]] | None = Field(None, description="job -> server -> role -> tasks")
    ps_assignment: dict[str, list[dict[str, StrictInt]]] | None = Field(None, description="job -> [{ps, block, size}, ...]: parameter blocks to parameter servers")
    accelerators: dict[str, str | None] | None = Field(None, description="job -> the accelerator type it runs on (clusters whose servers name types; null: servers without a type)")
    paused: list[str] = Field(default_factory=list, description="jobs given nothing")
    metrics: dict[str, Any] = Field(default_factory=dict, description="problem metrics (utilization, fairness loss, ...) and solver diagnostics")
    seed: int | None = Field(None, description="the seed the solve used")
    options: dict[str, Any] = Field(default_factory=dict, description="the solver options used")
    message: str | None = Field(None, description="why a plan is what it is (time limit, fallback), for people")
    certificate: Certificate | None = Field(None, description="the numbers that prove the bounds (docs/certificates.md); check replays them")

    @field_validator("metrics", "options", "allocation", "placement", "ps_assignment", mode="before")
    @classmethod
    def _plain_data(cls, value: Any) -> Any:
        """Metrics and options are plain JSON data: array scalars and arrays a
        solver leaves in them (``numpy.bool_``, ``float64``, arrays) become
        Python's bool, float, int and lists, so every plan can be written."""
        return plain(value)

    @property
    def has_solution(self) -> bool:
        return self.status in (Status.OPTIMAL, Status.FEASIBLE, Status.HEURISTIC, Status.KEPT_PREVIOUS)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> "Plan":
        if not isinstance(data, dict):
            raise InputError(source, f"expected a mapping at the top level, got {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InputError(source, problems_from_validation(exc)) from None


with_field_docs(Objective, Plan, Proof, Certificate)


def load_plan(path: str | os.PathLike[str]) -> Plan:
    return Plan.from_dict(read_document(path), source=str(path))


def save_plan(plan: Plan, path: str | os.PathLike[str]) -> None:
    write_document(path, plan.to_dict(), tidy=True)


def as_plan(value: Any) -> Plan:
    """``value`` as a :class:`Plan` (a Plan, a path, or a mapping; :func:`schedopt.io.as_document`)."""
    return as_document(value, Plan, load_plan, "plan")
