"""Plans: what every solver returns, its file format, its metrics and the
independent checker.

A :class:`Plan` keeps *why a solve stopped* (:class:`Termination`) apart from
*what the answer is worth* (:class:`Status`), and carries the objective value,
a proven bound where the solver has one, the gap, the solver and the seconds.

:func:`check` recomputes the objective and every constraint from the instance
alone; it imports no solver.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.io import problems_from_validation, read_document, write_document

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
    model_config = ConfigDict(extra="forbid")

    name: str
    sense: Literal["min", "max"] = "min"
    value: float | None = None
    bound: float | None = None  # proven bound on the optimum, or None
    gap: float | None = None  # |value - bound| / |value|
    admitted: int | None = None  # primary objective (allocation): jobs admitted
    admitted_bound: int | None = None  # proven upper bound on admitted jobs


def relative_gap(value: float | None, bound: float | None) -> float | None:
    """``|value - bound| / |value|`` (0 when both are 0; None when undefined)."""
    if value is None or bound is None:
        return None
    if value == 0:
        return 0.0 if abs(bound) <= 1e-12 else None
    return abs(value - bound) / abs(value)


class Plan(BaseModel):
    """A solver's answer. Counts are per job and role; jobs left out are paused."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["schedopt/plan@1"] = Field(PLAN_SCHEMA, alias="schema")
    instance: str
    problem: str = "allocation"
    solver: str
    status: Status
    termination: Termination
    objective: Objective
    solve_seconds: float
    allocation: dict[str, dict[str, int]] = Field(default_factory=dict)
    placement: dict[str, dict[str, dict[str, int]]] | None = None
    ps_assignment: dict[str, list[dict[str, int]]] | None = None  # job -> [{ps, block, size}, ...]
    paused: list[str] = Field(default_factory=list)
    metrics: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    message: str | None = None

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


def load_plan(path: str | os.PathLike[str]) -> Plan:
    return Plan.from_dict(read_document(path), source=str(path))


def save_plan(plan: Plan, path: str | os.PathLike[str]) -> None:
    write_document(path, plan.to_dict())


# ---- objective and metrics, from the instance alone --------------------------------------

def remaining_time_s(instance: Instance, job_id: str, counts: dict[str, int]) -> float:
    """t_j = Q_j / f_j(p_j, w_j) in seconds (Optimus eq. 6); inf if not allowed."""
    job = instance.jobs[instance.job_index[job_id]]
    if job.speed is None or job.remaining_steps is None:
        return math.inf
    names = job.role_names
    c0 = counts[names[0]]
    c1 = counts[names[1]] if len(names) == 2 else 0
    step = float(job.speed.step_time_s(c0, c1))
    return job.remaining_steps * step if job.remaining_steps > 0 else 0.0


def predicted_reduction(instance: Instance, job_id: str, counts: dict[str, int]) -> float:
    """SLAQ's term Loss_j(a_j, t) - Loss_j(a_j, t + T): the predicted drop of the
    normalised loss over the horizon T = ``policy.horizon_s`` with a_j units of
    the job's (single) role; nan if the job lacks a curve or speed or the
    count is not allowed."""
    job = instance.jobs[instance.job_index[job_id]]
    if job.speed is None or job.loss_curve is None or len(job.roles) != 1:
        return math.nan
    step = float(job.speed.step_time_s(counts[job.role_names[0]], 0))
    if not math.isfinite(step) or step <= 0:
        return math.nan
    return float(job.loss_curve.reduction(instance.horizon_s / step))


def allocation_usage(instance: Instance, allocation: dict[str, dict[str, int]]) -> np.ndarray:
    """Σ_j (w_j·O_j + p_j·N_j), shape (resources,) (Optimus eq. 7's left side)."""
    used = np.zeros(len(instance.resources))
    for job_id, counts in allocation.items():
        job = instance.jobs[instance.job_index[job_id]]
        for role, n in counts.items():
            used += n * instance.vector(job.roles[role].demand)
    return used


def allocation_metrics(instance: Instance, allocation: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Admitted and paused counts, utilisation per resource (used / capacity)."""
    used = allocation_usage(instance, allocation)
    cap = instance.capacity_total
    util = {r: (float(u / c) if c > 0 else 0.0) for r, u, c in zip(instance.resources, used, cap)}
    return {
        "admitted": len(allocation),
        "paused": len(instance.jobs) - len(allocation),
        "tasks": int(sum(sum(c.values()) for c in allocation.values())),
        "utilization": util,
    }


# ---- the checker ------------------------------------------------------------------------

@dataclass(frozen=True)
class Violation:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


REL_TOL = 1e-6


def check(instance: Instance, plan: Plan) -> list[Violation]:
    """Recompute objective, metrics and every constraint of ``plan`` from
    ``instance`` alone. Returns the violations (empty when the plan is sound)."""
    out: list[Violation] = []
    if plan.instance != instance.name:
        out.append(Violation("instance", f'plan is for "{plan.instance}", instance is "{instance.name}"'))
    checker = _CHECKERS.get(plan.problem)
    if checker is None:
        out.append(Violation("problem", f'no checker for problem "{plan.problem}"'))
        return out
    checker(instance, plan, out)
    _check_objective_bound(plan, out)
    return out


def _check_objective_bound(plan: Plan, out: list[Violation]) -> None:
    obj = plan.objective
    if obj.value is None or obj.bound is None:
        if obj.gap is not None and obj.bound is None:
            out.append(Violation("objective.gap", "a gap is reported without a bound"))
        return
    slack = REL_TOL * max(1.0, abs(obj.value))
    if obj.sense == "min" and obj.bound > obj.value + slack:
        out.append(Violation("objective.bound", f"lower bound {obj.bound:.6g} exceeds the value {obj.value:.6g}"))
    if obj.sense == "max" and obj.bound < obj.value - slack:
        out.append(Violation("objective.bound", f"upper bound {obj.bound:.6g} is below the value {obj.value:.6g}"))
    expected = relative_gap(obj.value, obj.bound)
    if obj.gap is not None and expected is not None and abs(obj.gap - expected) > 1e-6:
        out.append(Violation("objective.gap", f"gap {obj.gap:.6g} != |value - bound| / |value| = {expected:.6g}"))
    if plan.status == Status.OPTIMAL and expected is not None and expected > 1e-4:
        out.append(Violation("status", f"status optimal with a gap of {expected:.3g}"))


@dataclass(frozen=True)
class _Objective:
    """How a count-allocation problem values a job: per-job term and its name."""

    term: Any  # (instance, job_id, counts) -> float; non-finite = not allowed
    formula: str
    capacity_ref: str
    sense: str


_ALLOCATION_OBJECTIVES = {
    "allocation": _Objective(remaining_time_s, "Σ Q_j/f_j", "Optimus eq. 7", "min"),
    "quality": _Objective(predicted_reduction, "Σ predicted loss reduction", "SLAQ: Σ_j a_j <= C", "max"),
}


def _check_allocation(instance: Instance, plan: Plan, out: list[Violation]) -> None:
    spec = _ALLOCATION_OBJECTIVES[plan.problem]
    alloc = plan.allocation
    if plan.objective.sense != spec.sense:
        out.append(Violation("objective.sense", f'problem "{plan.problem}" is a {spec.sense}imisation, the plan says {plan.objective.sense}'))
    if plan.status in (Status.INFEASIBLE, Status.TIME_LIMIT) and alloc:
        out.append(Violation("allocation", f"status {plan.status.value} but an allocation is given"))
    for job_id, counts in alloc.items():
        path = f"allocation.{job_id}"
        if job_id not in instance.job_index:
            out.append(Violation(path, f'unknown job "{job_id}"'))
            continue
        job = instance.jobs[instance.job_index[job_id]]
        if set(counts) != set(job.roles):
            out.append(Violation(path, f"roles {sorted(counts)} != the job's roles {sorted(job.roles)}"))
            continue
        in_bounds = True
        for role, n in counts.items():
            r = job.roles[role]
            if not (r.min <= n <= r.max_count):
                out.append(Violation(f"{path}.{role}", f"count {n} outside [{r.min}, {r.max_count}]"))
                in_bounds = False
        if in_bounds and not math.isfinite(spec.term(instance, job_id, counts)):
            out.append(Violation(path, f"configuration {counts} is not allowed by the job's speed ({job.speed.form if job.speed else 'none'})"))
    if any(v.path.startswith("allocation.") for v in out):
        return  # the sums below need valid jobs and roles

    used = allocation_usage(instance, alloc)
    cap = instance.capacity_total
    for r, u, c in zip(instance.resources, used, cap):
        if u > c + 1e-9 * max(1.0, c):
            out.append(Violation(f"capacity.{r}", f"allocated {u:g} > capacity {c:g} ({spec.capacity_ref})"))

    expected_paused = [j.id for j in instance.jobs if j.id not in alloc]
    if sorted(plan.paused) != sorted(expected_paused):
        out.append(Violation("paused", f"paused {sorted(plan.paused)} != jobs without an allocation {sorted(expected_paused)}"))

    obj = plan.objective
    if obj.admitted is not None and obj.admitted != len(alloc):
        out.append(Violation("objective.admitted", f"{obj.admitted} != {len(alloc)} jobs allocated"))
    if obj.admitted_bound is not None and obj.admitted_bound < len(alloc):
        out.append(Violation("objective.admitted_bound", f"bound {obj.admitted_bound} < {len(alloc)} jobs admitted"))
    if plan.has_solution:
        total = sum(spec.term(instance, j, c) for j, c in alloc.items())
        if obj.value is None or abs(obj.value - total) > REL_TOL * max(1.0, abs(total)):
            out.append(Violation("objective.value", f"reported {obj.value} != recomputed {spec.formula} = {total:.9g}"))
        metrics = allocation_metrics(instance, alloc)
        for key in ("admitted", "paused", "tasks"):
            if key in plan.metrics and plan.metrics[key] != metrics[key]:
                out.append(Violation(f"metrics.{key}", f"{plan.metrics[key]} != recomputed {metrics[key]}"))
        for r, u in metrics["utilization"].items():
            got = plan.metrics.get("utilization", {}).get(r)
            if got is not None and abs(got - u) > 1e-6:
                out.append(Violation(f"metrics.utilization.{r}", f"{got} != recomputed {u:.6g}"))
    if plan.placement is not None:
        _check_placement(instance, plan, out)
        _check_joint_placement(instance, plan, out)


def _check_placement(instance: Instance, plan: Plan, out: list[Violation]) -> None:
    names = {n: i for i, n in enumerate(instance.server_names)}
    load = np.zeros_like(instance.server_capacity)
    for job_id, per_server in (plan.placement or {}).items():
        path = f"placement.{job_id}"
        if job_id not in plan.allocation:
            out.append(Violation(path, "placed but not allocated"))
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
    over = load > instance.server_capacity + 1e-9
    for s, r in zip(*np.nonzero(over)):
        out.append(Violation(f"placement.capacity.{instance.server_names[s]}.{instance.resources[r]}",
                             f"load {load[s, r]:g} > capacity {instance.server_capacity[s, r]:g}"))


def _check_partition(instance: Instance, plan: Plan, out: list[Violation]) -> None:
    """Dorm P2 (eq. 6-8, 15-16) and metrics eq. 1-4, recomputed from the instance."""
    from schedopt.partition.problem import budgets, compile_partition, partition_metrics, placement_matrix

    data = compile_partition(instance)
    obj = plan.objective
    if obj.sense != "max":
        out.append(Violation("objective.sense", f'problem "partition" is a maximisation, the plan says {obj.sense}'))
    if not plan.has_solution:
        if plan.allocation or plan.placement:
            out.append(Violation("allocation", f"status {plan.status.value} but containers are given"))
        return
    if plan.placement is None:
        out.append(Violation("placement", "a partition plan places every container on a server"))
        return
    _check_placement(instance, plan, out)  # names, roles, totals vs allocation, per-server capacity (eq. 6)
    for app in plan.allocation:
        if app not in instance.job_index:
            out.append(Violation(f"allocation.{app}", f'unknown application "{app}"'))
    if any(v.path.startswith(("placement.", "allocation.")) and "capacity" not in v.path for v in out):
        return
    x = placement_matrix(data, plan.placement)
    n = x.sum(axis=1)
    kept = plan.status == Status.KEPT_PREVIOUS
    if kept and not np.array_equal(x, data.prev):
        out.append(Violation("placement", "status kept_previous but the placement is not the previous one"))
    for i, app in enumerate(data.apps):
        if n[i] > data.n_max[i]:
            out.append(Violation(f"allocation.{app}", f"{n[i]} containers > n_max {data.n_max[i]} (Dorm eq. 7)"))
        if 0 < n[i] < data.n_min[i] and not kept:
            out.append(Violation(f"allocation.{app}", f"{n[i]} containers < n_min {data.n_min[i]} (Dorm eq. 8)"))
    expected_paused = [a for i, a in enumerate(data.apps) if n[i] == 0]
    if sorted(plan.paused) != sorted(expected_paused):
        out.append(Violation("paused", f"paused {sorted(plan.paused)} != applications without containers {sorted(expected_paused)}"))
    value = float(data.util @ n)
    if obj.value is None or abs(obj.value - value) > REL_TOL * max(1.0, abs(value)):
        out.append(Violation("objective.value", f"reported {obj.value} != recomputed Σ_k u_k = {value:.9g} (Dorm eq. 1)"))
    metrics = partition_metrics(data, x)
    for key in ("fairness_loss", "adjustment_overhead", "resource_utilization", "admitted", "paused", "containers"):
        got = plan.metrics.get(key)
        if got is not None and abs(float(got) - float(metrics[key])) > 1e-6 * max(1.0, abs(float(metrics[key]))):
            out.append(Violation(f"metrics.{key}", f"{got} != recomputed {metrics[key]:.6g}"))
    if "fairness_threshold" in plan.options and not kept:
        # a Dorm plan claims P2's constraints: every application at n_min or more, both budgets
        b1, b2 = budgets(data, float(plan.options["fairness_threshold"]), float(plan.options["adjustment_threshold"]))
        for i, app in enumerate(data.apps):
            if n[i] < data.n_min[i]:
                out.append(Violation(f"allocation.{app}", f"{n[i]} containers < n_min {data.n_min[i]} (Dorm eq. 8)"))
        if metrics["fairness_loss"] > b1 + 1e-6:
            out.append(Violation("metrics.fairness_loss", f"{metrics['fairness_loss']:.6g} > budget ceil(θ1·2m) = {b1:g} (Dorm eq. 15)"))
        if metrics["adjustment_overhead"] > b2:
            out.append(Violation("metrics.adjustment_overhead", f"{metrics['adjustment_overhead']} > budget ceil(θ2·|A^t ∩ A^(t-1)|) = {b2} (Dorm eq. 16)"))


def _check_ps_assignment(instance: Instance, plan: Plan, out: list[Violation]) -> None:
    """Every block of every job is covered exactly by its entries, on PS 0..p-1;
    the Table 3 metrics and the objective are recomputed."""
    from schedopt.placement.paa import assignment_metrics, ps_counts

    counts = ps_counts(instance)
    assigned = plan.ps_assignment or {}
    if plan.objective.sense != "min":
        out.append(Violation("objective.sense", 'problem "ps-assignment" is a minimisation'))
    for job_id, p in counts.items():
        job = instance.jobs[instance.job_index[job_id]]
        entries = assigned.get(job_id)
        path = f"ps_assignment.{job_id}"
        if entries is None:
            out.append(Violation(path, "job has parameter blocks and PS but no assignment"))
            continue
        covered = [0] * len(job.param_blocks or [])
        for e, entry in enumerate(entries):
            if set(entry) != {"ps", "block", "size"}:
                out.append(Violation(f"{path}[{e}]", "an entry has exactly ps, block and size"))
                continue
            if not 0 <= entry["ps"] < p:
                out.append(Violation(f"{path}[{e}].ps", f"PS {entry['ps']} outside 0..{p - 1}"))
            if not 0 <= entry["block"] < len(covered):
                out.append(Violation(f"{path}[{e}].block", f"block {entry['block']} outside 0..{len(covered) - 1}"))
                continue
            if entry["size"] <= 0:
                out.append(Violation(f"{path}[{e}].size", "a slice has a positive size"))
            covered[entry["block"]] += entry["size"]
        for b, (got, want) in enumerate(zip(covered, job.param_blocks or [])):
            if got != want:
                out.append(Violation(f"{path}", f"block {b}: slices sum to {got}, the block has {want} parameters"))
    for job_id in assigned:
        if job_id not in counts:
            out.append(Violation(f"ps_assignment.{job_id}", "job has no parameter blocks or no PS count in the instance"))
    if any(v.path.startswith("ps_assignment") for v in out):
        return
    metrics = assignment_metrics(instance, assigned)
    for key in ("max_size_difference", "max_request_difference", "total_requests"):
        if key in plan.metrics and plan.metrics[key] != metrics[key]:
            out.append(Violation(f"metrics.{key}", f"{plan.metrics[key]} != recomputed {metrics[key]}"))
    if plan.objective.value is not None and plan.objective.value != metrics["max_size_difference"]:
        out.append(Violation("objective.value", f"{plan.objective.value} != recomputed max size difference {metrics['max_size_difference']}"))


def _placement_where(data: Any, plan: Plan) -> list:
    """The plan's placement as per-job (servers, PS per server, workers per server), None = not placed."""
    index = {s: k for k, s in enumerate(data.servers)}
    where = []
    for j, job_id in enumerate(data.jobs):
        if job_id not in (plan.placement or {}):
            where.append(None)
            continue
        items = list(plan.placement[job_id].items())
        servers = np.array([index[srv] for srv, _ in items], dtype=np.int64)
        pk = np.array([c.get("ps", 0) if data.roles[j][0] else 0 for _, c in items], dtype=np.int64)
        wk = np.array([c.get(data.roles[j][1], 0) for _, c in items], dtype=np.int64)
        where.append((servers, pk, wk))
    return where


def _check_joint_placement(instance: Instance, plan: Plan, out: list[Violation]) -> None:
    """A joint (allocation + placement) plan: its placement metrics recomputed."""
    from schedopt.errors import InputError
    from schedopt.placement.problem import compile_placement, placement_metrics

    reported = plan.metrics.get("placement")
    if not isinstance(reported, dict) or any(v.path.startswith("placement") for v in out):
        return
    try:
        data = compile_placement(instance.with_allocation(plan.allocation))
    except InputError as exc:
        out.append(Violation("placement", str(exc)))
        return
    m = placement_metrics(data, _placement_where(data, plan))
    for key in ("total_transfer_time_s", "max_transfer_time_s", "cross_node_pairs", "servers_used"):
        if key in reported and abs(float(reported[key]) - float(m[key])) > REL_TOL * max(1.0, abs(float(m[key]))):
            out.append(Violation(f"metrics.placement.{key}", f"{reported[key]} != recomputed {m[key]}"))


def _check_placement_problem(instance: Instance, plan: Plan, out: list[Violation]) -> None:
    """Counts as the instance's allocation gives them, per-server capacity, and
    T_j / cross-node pairs recomputed (DESIGN.md's placement formulas)."""
    from schedopt.placement.problem import OBJECTIVE_NAMES, compile_placement, placement_metrics

    data = compile_placement(instance)
    if plan.objective.sense != "min":
        out.append(Violation("objective.sense", 'problem "placement" is a minimisation'))
    given = instance.allocation or {}
    for job_id, counts in plan.allocation.items():
        if given.get(job_id) != counts:
            out.append(Violation(f"allocation.{job_id}", f"{counts} != the instance's allocation {given.get(job_id)}"))
    if plan.placement is None:
        if plan.allocation:
            out.append(Violation("placement", "placed jobs need a placement"))
        return
    _check_placement(instance, plan, out)
    if any(v.path.startswith(("allocation.", "placement.")) and "capacity" not in v.path for v in out):
        return
    expected_paused = [j.id for j in instance.jobs if j.id not in plan.allocation]
    if sorted(plan.paused) != sorted(expected_paused):
        out.append(Violation("paused", f"paused {sorted(plan.paused)} != jobs not placed {sorted(expected_paused)}"))
    where = _placement_where(data, plan)
    placed = np.array([w is not None for w in where], dtype=bool)
    m = placement_metrics(data, where)
    metric = {name: key for name, key in OBJECTIVE_NAMES.values()}.get(plan.objective.name)
    if metric is None:
        out.append(Violation("objective.name", f'"{plan.objective.name}" is not a placement objective'))
        return
    value = float(m[metric])
    if plan.has_solution and (plan.objective.value is None or abs(plan.objective.value - value) > REL_TOL * max(1.0, value)):
        out.append(Violation("objective.value", f"reported {plan.objective.value} != recomputed {plan.objective.name} = {value:.9g}"))
    if plan.objective.admitted is not None and plan.objective.admitted != int(placed.sum()):
        out.append(Violation("objective.admitted", f"{plan.objective.admitted} != {int(placed.sum())} jobs placed"))
    if "cross_node_pairs" in plan.metrics and plan.metrics["cross_node_pairs"] != m["cross_node_pairs"]:
        out.append(Violation("metrics.cross_node_pairs", f"{plan.metrics['cross_node_pairs']} != recomputed {m['cross_node_pairs']}"))


_CHECKERS = {"allocation": _check_allocation, "quality": _check_allocation, "partition": _check_partition,
             "ps-assignment": _check_ps_assignment, "placement": _check_placement_problem}
