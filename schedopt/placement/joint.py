"""Joint solves: allocation then placement (``optimus-greedy+optimus-placement``).

The allocation solver picks each job's counts; the placement solver puts those
counts on servers. The plan holds both: ``allocation`` and ``placement`` of
the jobs that were placed, the allocation objective recomputed over them, and
the placement's metrics under ``metrics.placement``. A job the allocation
admitted but the placement could not fit (capacity is per server, the
allocation only sums it) is paused, and the allocation's bound is dropped,
because it was proven for the admitted set.
"""

from __future__ import annotations

import time

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.allocation.metrics import allocation_metrics
from schedopt.plan import Plan, Status
from schedopt.problems import get_problem

ALLOCATION_PROBLEMS = ("allocation", "quality")


class Pipeline:
    """Allocation, then placement of the allocated counts."""

    def __init__(self, name: str, allocator, placer):
        self.name = name
        self.allocator = allocator
        self.placer = placer

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        first = self.allocator.solve(instance, time_limit=time_limit, seed=seed)
        if not first.has_solution:
            return first.model_copy(update={"solver": self.name})
        left = None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - started))
        second = self.placer.solve(instance.with_allocation(first.allocation), time_limit=left, seed=seed)
        placed = set((second.placement or {}).keys()) if second.has_solution else set()
        allocation = {j: c for j, c in first.allocation.items() if j in placed}
        obj = first.objective
        all_placed = len(allocation) == len(first.allocation)
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
            message = f"admitted by {self.allocator.name} but not placed by {self.placer.name}: {', '.join(dropped)}"
        metrics = {**first.metrics, **allocation_metrics(instance, allocation), "placement": second.metrics,
                   "placement_status": second.status.value}
        return Plan(instance=instance.name, problem=first.problem, solver=self.name, status=status,
                    termination=first.termination, objective=objective,
                    solve_seconds=time.perf_counter() - started, allocation=allocation,
                    placement={j: second.placement[j] for j in allocation} if second.placement is not None else {},
                    paused=[j.id for j in instance.jobs if j.id not in allocation], metrics=metrics, seed=seed,
                    options={"allocation": first.options, "placement": second.options}, message=message)


def check_parts(name: str, first_problem: str, second_problem: str) -> None:
    """A joint name is ``ALLOCATION_SOLVER+PLACEMENT_SOLVER``."""
    if first_problem not in ALLOCATION_PROBLEMS or second_problem != "placement":
        raise InputError("solver", f'"{name}": a joint solver is ALLOCATION+PLACEMENT (e.g. optimus-greedy+optimus-placement); '
                                     f"got a {first_problem} solver then a {second_problem} solver")

