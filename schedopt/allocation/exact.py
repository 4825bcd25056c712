"""The lexicographic driver shared by the exact allocation models.

Stage 1 (only when not every job fits at its minimum): maximise the number of
admitted jobs. Stage 2: minimise Σ t_j among plans that admit at least that
many. A backend states the multiple-choice model once and solves either stage;
this module turns its answers into one Plan with status, bound and gap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from schedopt.allocation.greedy import greedy_allocate
from schedopt.allocation.lagrange import fix_by_reduced_cost, round_lp, solve_lp
from schedopt.allocation.problem import (
    AllocationData,
    ChoiceSet,
    admit_smallest_first,
    all_fit_at_minimum,
    count_minimal,
    fits,
    min_configuration,
    use_of,
    build_plan,
    compile_allocation,
    enumerate_choices,
)
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan, Status, Termination


@dataclass
class StageResult:
    """One backend solve. ``chosen`` is the list of chosen choice indices (or None)."""

    termination: Termination
    chosen: list[int] | None
    value: float | None = None  # the backend's objective (stage 1: admitted count)
    bound: float | None = None  # the backend's proven bound, in the same units
    info: dict[str, Any] = field(default_factory=dict)


class ExactBackend(Protocol):
    def solve_stage(
        self, data: AllocationData, cs: ChoiceSet, *, stage: str, every_job: bool,
        min_admitted: int, time_limit: float | None, seed: int | None,
    ) -> StageResult:
        """``stage`` is ``"admit"`` (max Σ x) or ``"time"`` (min Σ cost·x).
        ``every_job``: each job with choices takes exactly one; else at most one
        and at least ``min_admitted`` in total."""
        ...


def _no_plan_message(stage: str, result: StageResult) -> str:
    if result.termination == Termination.ERROR:
        detail = ", ".join(f"{k}={v}" for k, v in result.info.items() if "status" in k)
        return f"{stage}: the backend stopped with an error ({detail or 'no detail'}); no plan"
    return f"{stage} found no plan ({result.termination.value})"


def check_time_limit(time_limit: float | None, solver: str) -> None:
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and time_limit > 0):
        raise InputError(solver, f"time_limit: expected a number of seconds > 0, got {time_limit!r}")


#: a heuristic that grows a feasible start (job -> counts) into a plan (an incumbent for fixing)
Heuristic = Callable[[AllocationData, dict[int, tuple[int, int]]], dict[int, tuple[int, int]]]


def _optimus_greedy(data: AllocationData, start: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    return greedy_allocate(data, start)[0]


def _reduce(data: AllocationData, cs: ChoiceSet, metrics: dict[str, Any], heuristic: Heuristic,
            admit: int | None = None, stage1: list[int] | None = None) -> ChoiceSet:
    """Reduced-cost fixing (see :mod:`schedopt.allocation.lagrange`): keep only the
    configurations that can be in a plan no worse than the best incumbent.

    ``admit``/``stage1``: at least ``admit`` jobs must run; ``stage1`` is a
    feasible plan that does (choice indices), used to seed the LP and as an incumbent."""
    t0 = time.perf_counter()
    lag = solve_lp(data, cs, admit=admit, seed_columns=stage1)
    candidates = []
    if stage1 is not None:
        candidates.append(float(cs.cost[stage1].sum()))
    rounded = round_lp(data, cs, lag.x, admit=admit)
    if rounded is not None:
        candidates.append(float(cs.cost[rounded].sum()))
    # the greedy from the admitted set's minimum configurations, when they fit together
    admitted_jobs = sorted({int(cs.job[k]) for k in stage1}) if stage1 is not None else admit_smallest_first(data)[0]
    start = {j: c for j in admitted_jobs if (c := min_configuration(data, j)) is not None}
    used = sum((use_of(data, j, c) for j, c in start.items()), np.zeros(data.R))
    if len(start) == len(admitted_jobs) and fits(np.zeros(data.R), used, data.cap):
        config = heuristic(data, start)
        candidates.append(float(sum(data.time_s(j, *c) for j, c in config.items())))
    incumbent = min(candidates)
    reduced = cs.subset(fix_by_reduced_cost(cs, lag, incumbent))
    metrics.update({
        "lp_bound": lag.bound, "lp_rounds": lag.rounds, "lp_columns": lag.columns, "incumbent": incumbent,
        "after_fixing": int(reduced.K), "presolve_seconds": time.perf_counter() - t0,
    })
    return reduced


def solve_exact(backend: ExactBackend, name: str, instance: Instance, *, time_limit: float | None,
                seed: int | None, options: dict[str, Any],
                compile: Callable[[Instance], AllocationData] = compile_allocation,
                heuristic: Heuristic = _optimus_greedy) -> Plan:
    """Solve a multiple-choice allocation problem (``compile`` turns the instance
    into arrays; ``heuristic`` supplies an incumbent) with ``backend``."""
    check_time_limit(time_limit, name)
    started = time.perf_counter()
    deadline = None if time_limit is None else started + time_limit
    data = compile(instance)
    cs = enumerate_choices(data)
    candidates = int(len(np.unique(cs.job)))
    metrics: dict[str, Any] = {"configurations": int(cs.enumerated), "after_pruning": int(cs.K)}

    def left() -> float | None:
        return None if deadline is None else max(1e-3, deadline - time.perf_counter())

    def plan(config: dict[int, tuple[int, int]], status: Status, term: Termination, **kw: Any) -> Plan:
        return build_plan(data, solver=name, config=config, status=status, termination=term, started=started,
                          seed=seed, options=options, metrics=metrics, **kw)

    def config_of(chosen: list[int]) -> dict[int, tuple[int, int]]:
        return {int(cs.job[k]): (int(cs.counts[k, 0]), int(cs.counts[k, 1])) for k in chosen}

    if data.J == 0:
        return plan({}, Status.OPTIMAL, Termination.OPTIMAL, bound=0.0, admitted_bound=0)
    if candidates == 0:
        return plan({}, Status.INFEASIBLE, Termination.INFEASIBLE, admitted_bound=0,
                    message="no job can run: none has an allowed configuration that fits the cluster")

    every_job = candidates == data.J and all_fit_at_minimum(data)
    k_min, admitted_bound, admit_proven = data.J, data.J, True
    fallback: dict[int, tuple[int, int]] | None = None  # stage 1's plan
    if not every_job:
        # stage 1 needs only each job's count-minimal configurations: a job admitted in any
        # configuration fits in one of those too (demands are non-negative)
        cs_min = cs.subset(count_minimal(cs))
        metrics["admit_configurations"] = int(cs_min.K)
        s1 = backend.solve_stage(data, cs_min, stage="admit", every_job=False, min_admitted=0,
                                 time_limit=left(), seed=seed)
        metrics.update({f"admit_{k}": v for k, v in s1.info.items()})
        if s1.chosen is None:
            status = Status.INFEASIBLE if s1.termination == Termination.INFEASIBLE else Status.TIME_LIMIT
            return plan({}, status, s1.termination, message=_no_plan_message("stage 1 (max admitted jobs)", s1))
        fallback = {int(cs_min.job[k]): (int(cs_min.counts[k, 0]), int(cs_min.counts[k, 1])) for k in s1.chosen}
        k_min = len(s1.chosen)
        admit_proven = s1.termination == Termination.OPTIMAL
        admitted_bound = k_min if admit_proven else int(np.floor((s1.bound or candidates) + 1e-6))
        if k_min == 0:
            return plan({}, Status.INFEASIBLE, Termination.INFEASIBLE, admitted_bound=admitted_bound,
                        message="no job fits the cluster at its minimum")

    if every_job:
        cs = _reduce(data, cs, metrics, heuristic)
    else:
        cs = _reduce(data, cs, metrics, heuristic, admit=k_min, stage1=cs.indices_of(fallback))
    s2 = backend.solve_stage(data, cs, stage="time", every_job=every_job, min_admitted=k_min,
                             time_limit=left(), seed=seed)
    metrics.update(s2.info)
    if s2.chosen is None:
        if fallback is not None:  # stage 1's plan is feasible: keep it
            return plan(fallback, Status.FEASIBLE, s2.termination, admitted_bound=admitted_bound,
                        message="stage 2 (min Σ cost) found no plan in time; stage 1's plan is returned")
        status = Status.INFEASIBLE if s2.termination == Termination.INFEASIBLE else Status.TIME_LIMIT
        return plan({}, status, s2.termination, admitted_bound=admitted_bound,
                    message=_no_plan_message("stage 2 (min Σ cost)", s2))
    proven = s2.termination == Termination.OPTIMAL and admit_proven
    status = Status.OPTIMAL if proven else Status.FEASIBLE
    term = s2.termination if admit_proven else Termination.TIME_LIMIT
    return plan(config_of(s2.chosen), status, term, bound=s2.bound, admitted_bound=admitted_bound)
