"""The driver shared by Dorm's exact models: presets, budgets, Dorm's
infeasibility rule, and turning a backend's answer into a Plan."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from schedopt.errors import InputError
from schedopt.instance import Instance, Policy
from schedopt.partition.problem import PartitionData, budgets, build_plan, compile_partition, drf_containers
from schedopt.plan import Plan, Status, Termination

#: DESIGN.md presets: (θ1 fairness, θ2 adjustment)
PRESETS = {"dorm-1": (0.2, 0.1), "dorm-2": (0.1, 0.2), "dorm-3": (0.1, 0.1)}


@dataclass
class DormModel:
    """What every backend needs: the arrays, ŝ's container counts and both budgets."""

    data: PartitionData
    fair: np.ndarray  # n̂_i from weighted DRF (A,)
    fairness_budget: float  # ceil(θ1·2m)
    adjustment_budget: int  # ceil(θ2·|A^t ∩ A^(t-1)|)

    def big_m(self) -> tuple[np.ndarray, np.ndarray]:
        """The smallest valid big-M of eq. 13 and eq. 14 per (i, j): x_ij can
        fall by at most x_ij^(t-1) and rise by at most ub_ij - x_ij^(t-1)."""
        down = self.data.prev.astype(np.int64)
        up = np.maximum(self.data.ub - self.data.prev, 0).astype(np.int64)
        return down, up


@dataclass
class BackendResult:
    termination: Termination
    x: np.ndarray | None  # (A, S) or None
    bound: float | None = None  # proven upper bound on Σ_k u_k
    info: dict[str, Any] = field(default_factory=dict)
    proven: bool = True  # False: the backend solved an approximation (optimal there, not proven here)


class DormBackend(Protocol):
    def solve_model(self, model: DormModel, *, time_limit: float | None, seed: int | None) -> BackendResult: ...


def thresholds(instance: Instance, preset: str | None, fairness_threshold: float | None,
               adjustment_threshold: float | None, solver: str) -> tuple[float, float]:
    """θ1, θ2: explicit options win, then the preset, then the instance's policy."""
    policy = instance.policy or Policy()
    t1, t2 = PRESETS[preset] if preset else (policy.fairness_threshold, policy.adjustment_threshold)
    t1 = t1 if fairness_threshold is None else fairness_threshold
    t2 = t2 if adjustment_threshold is None else adjustment_threshold
    for name, v in (("fairness_threshold", t1), ("adjustment_threshold", t2)):
        if not (isinstance(v, (int, float)) and 0 <= v <= 1):
            raise InputError(solver, f"{name}: expected a number in [0, 1], got {v!r}")
    return float(t1), float(t2)


def solve_dorm(backend: DormBackend, name: str, instance: Instance, *, theta: tuple[float, float],
               time_limit: float | None, seed: int | None, options: dict[str, Any]) -> Plan:
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and time_limit > 0):
        raise InputError(name, f"time_limit: expected a number of seconds > 0, got {time_limit!r}")
    started = time.perf_counter()
    data = compile_partition(instance)
    b1, b2 = budgets(data, *theta)
    model = DormModel(data=data, fair=drf_containers(data), fairness_budget=b1, adjustment_budget=b2)
    opts = {**options, "fairness_threshold": theta[0], "adjustment_threshold": theta[1]}
    metrics = {"fairness_budget": b1, "adjustment_budget": b2}
    if data.A == 0:
        return build_plan(data, np.zeros((0, data.S), dtype=np.int64), solver=name, status=Status.OPTIMAL,
                          termination=Termination.OPTIMAL, started=started, bound=0.0, seed=seed, options=opts,
                          metrics=metrics)
    if np.any(data.ub.sum(axis=1) < data.n_min):
        res = BackendResult(Termination.INFEASIBLE, None, info={"reason": "an application's n_min exceeds what the servers can hold"})
    else:
        res = backend.solve_model(model, time_limit=time_limit, seed=seed)
    metrics.update(res.info)
    if res.x is None:
        if res.termination == Termination.INFEASIBLE:
            # Dorm §IV-B: no feasible allocation -> keep the existing one
            return build_plan(data, data.prev.copy(), solver=name, status=Status.KEPT_PREVIOUS,
                              termination=Termination.INFEASIBLE, started=started, seed=seed, options=opts,
                              metrics=metrics, message="P2 is infeasible: the previous placement is kept (Dorm §IV-B)")
        status = Status.TIME_LIMIT if res.termination == Termination.TIME_LIMIT else Status.INFEASIBLE
        return build_plan(data, None, solver=name, status=status, termination=res.termination, started=started,
                          seed=seed, options=opts, metrics=metrics,
                          message=f"no plan: the backend stopped ({res.termination.value})")
    status = Status.OPTIMAL if res.termination == Termination.OPTIMAL and res.proven else Status.FEASIBLE
    return build_plan(data, res.x, solver=name, status=status, termination=res.termination, started=started,
                      bound=res.bound if res.proven else None, seed=seed, options=opts, metrics=metrics,
                      message=None if res.proven else "the backend solved a rounded model: optimality is not proven")
