"""Joint solves: allocation then placement (``optimus-greedy+optimus-placement``).

The allocation solver picks each job's counts; the placement solver puts those
counts on servers. The plan holds both: ``allocation`` and ``placement`` of
the jobs that were placed, the allocation objective recomputed over them, and
the placement's metrics under ``metrics.placement``. A job the allocation
admitted but the placement could not fit (capacity is per server, the
allocation only sums it) is first retried at its minimum counts around the
jobs placed (which stay where they were put); if it still does not fit it is
paused. Either way the allocation's bound is dropped, because it was proven
for the admitted set and counts. Without the retry a job the placement cannot
fit at its allocated counts would be admitted and dropped again every round,
even alone on the cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schedopt.deadline import Deadline
from schedopt.errors import InputError, UnknownSolverError
from schedopt.instance import Instance
from schedopt.allocation.metrics import allocation_metrics
from schedopt.plan import Plan, Status
from schedopt.problems import get_problem

if TYPE_CHECKING:
    from schedopt.registry import SolverInfo

ALLOCATION_PROBLEMS = ("allocation", "quality")
#: bare options a joint solver passes to both parts that declare them
BOTH_PARTS = frozenset({"bound"})


class Pipeline:
    """Allocation, then placement of the allocated counts."""

    def __init__(self, name: str, allocator, placer):
        self.name = name
        self.allocator = allocator
        self.placer = placer

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        clock = Deadline(time_limit)
        first = self.allocator.solve(instance, time_limit=time_limit, seed=seed)
        if not first.has_solution:
            return first.model_copy(update={"solver": self.name})
        left = clock.left(0.01)
        second = self.placer.solve(instance.with_allocation(first.allocation, first.accelerators), time_limit=left, seed=seed)
        placed = set((second.placement or {}).keys()) if second.has_solution else set()
        shrunk: list[str] = []
        if second.has_solution and placed != set(first.allocation):
            second, shrunk = _retry_at_minimum(self, instance, first, second, placed, clock, seed)
            placed = set((second.placement or {}).keys())
        allocation = {j: (c if j not in shrunk else second.allocation[j]) for j, c in first.allocation.items() if j in placed}
        obj = first.objective
        all_placed = len(allocation) == len(first.allocation) and not shrunk
        if all_placed:
            objective, status = obj, first.status
            message = first.message
        else:
            kept = first.model_copy(update={"allocation": allocation})
            value = get_problem(first.problem).objective_value(instance, kept)
            objective = obj.model_copy(update={"value": value, "bound": None, "gap": None, "admitted": len(allocation),
                                               "admitted_bound": None})
            status = Status.HEURISTIC
            dropped = sorted(set(first.allocation) - placed)
            parts = []
            if shrunk:
                parts.append(f"placed at their minimum counts, as {self.placer.name} could not fit the allocated ones: "
                             f"{', '.join(sorted(shrunk))}")
            if dropped:
                parts.append(f"admitted by {self.allocator.name} but not placed by {self.placer.name}: {', '.join(dropped)}")
            message = "; ".join(parts)
        metrics = {**first.metrics, **allocation_metrics(instance, allocation, first.accelerators), "placement": second.metrics,
                   "placement_status": second.status.value}
        return Plan(instance=instance.name, problem=first.problem, solver=self.name, status=status,
                    termination=first.termination, objective=objective,
                    solve_seconds=clock.spent(), allocation=allocation,
                    placement={j: second.placement[j] for j in allocation} if second.placement is not None else {},
                    paused=[j.id for j in instance.jobs if j.id not in allocation], metrics=metrics, seed=seed,
                    accelerators={j: first.accelerators[j] for j in allocation if j in first.accelerators}
                    if first.accelerators is not None else None,
                    options={"allocation": first.options, "placement": second.options}, message=message)


def _minimum_counts(instance: Instance, job_id: str) -> dict[str, int]:
    job = instance.jobs[instance.job_index[job_id]]
    return {r: role.min for r, role in job.roles.items()}


def _retry_at_minimum(pipeline: "Pipeline", instance: Instance, first: Plan, second: Plan, placed: set[str], clock: Deadline,
                      seed: int | None) -> tuple[Plan, list[str]]:
    """Place the admitted jobs ``second`` left out at their minimum counts, the
    placed ones kept where ``second`` put them. Returns the better placement
    (more jobs placed) and the jobs placed at their minimum."""
    missing = [j for j in first.allocation if j not in placed]
    allocation = {j: (first.allocation[j] if j in placed else _minimum_counts(instance, j)) for j in first.allocation}
    if all(allocation[j] == first.allocation[j] for j in missing):
        return second, []  # already at their minimum: nothing to retry
    previous = {**(instance.previous or {}), **(second.placement or {})}
    retry = instance.with_allocation(allocation, first.accelerators).model_copy(update={"previous": previous})
    left = clock.left(0.01)
    third = pipeline.placer.solve(retry, time_limit=left, seed=seed)
    got = set((third.placement or {}).keys()) if third.has_solution else set()
    if len(got) <= len(placed) or not placed <= got:
        return second, []
    from schedopt.placement.checker import placement_plan_metrics
    # the metrics against the instance's own running placement, not the retry's
    real = instance.with_allocation({j: allocation[j] for j in got}, first.accelerators)
    metrics = {**third.metrics, **placement_plan_metrics(real, third)}
    return third.model_copy(update={"metrics": metrics, "allocation": {j: allocation[j] for j in got}}), \
        [j for j in missing if j in got]


def check_parts(name: str, first_problem: str, second_problem: str) -> None:
    """A joint name is ``ALLOCATION_SOLVER+PLACEMENT_SOLVER``."""
    if first_problem not in ALLOCATION_PROBLEMS or second_problem != "placement":
        raise InputError("solver", f'"{name}": a joint solver is ALLOCATION+PLACEMENT (e.g. optimus-greedy+optimus-placement); '
                                     f"got a {first_problem} solver then a {second_problem} solver")


def joint_info(name: str) -> SolverInfo:
    """``ALLOCATION+PLACEMENT``: the two solvers in sequence, as one registered-like
    solver (registered as the registry's composer by :mod:`schedopt.placement.contract`)."""
    from schedopt.registry import SolverInfo, solver_info

    parts = name.split("+")
    if len(parts) != 2:
        raise UnknownSolverError("solver", f'"{name}": a joint solver names exactly two solvers, ALLOCATION+PLACEMENT')
    first, second = (solver_info(p) for p in parts)
    check_parts(name, first.problem, second.problem)
    # options: PART.KEY for either part, or a bare KEY that only one part declares; ``bound``, which
    # means the same to both (their certified bounds), goes to both parts that declare it
    options = {f"{part.name}.{k}": v for part in (first, second) for k, v in part.options.items()}
    shared = (set(first.options) & set(second.options)) - BOTH_PARTS
    options.update({k: v for part in (second, first) for k, v in part.options.items() if k not in shared})

    def make(**given: Any) -> Pipeline:
        split: dict[str, dict[str, Any]] = {first.name: {}, second.name: {}}
        for key, value in given.items():
            part, dot, option = key.partition(".")
            if dot:
                split[part][option] = value
            else:
                for info in (first, second):
                    if key in info.options:
                        split[info.name][key] = value
        return Pipeline(name, first.make(**split[first.name]), second.make(**split[second.name]))

    return SolverInfo(name=name, problem=first.problem, exact=False, backend=f"{first.backend} then {second.backend}",
                      description=f"{first.name}, then {second.name} on its counts", factory=make, options=options,
                      supports_time_limit=first.supports_time_limit or second.supports_time_limit,
                      requires=tuple(dict.fromkeys(first.requires + second.requires)),
                      accelerator_types=first.accelerator_types and second.accelerator_types, quotas=first.quotas,
                      restarts=first.restarts, objectives=first.objectives)
