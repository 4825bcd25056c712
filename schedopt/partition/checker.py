"""The checker of Dorm partition plans: P2's constraints (eq. 6-8, 15-16) and
the metrics of eq. 1-4, recomputed from the instance alone."""

from __future__ import annotations

import numpy as np

from schedopt.checking import REL_TOL, Violation, check_paused, check_server_placement
from schedopt.instance import Instance
from schedopt.partition.problem import budgets, compile_partition, partition_metrics, placement_matrix
from schedopt.plan import Plan, Status


def check_partition(instance: Instance, plan: Plan) -> list[Violation]:
    """Dorm P2 (eq. 6-8, 15-16) and metrics eq. 1-4, recomputed from the instance."""
    out: list[Violation] = []
    data = compile_partition(instance)
    obj = plan.objective
    if obj.sense != "max":
        out.append(Violation("objective.sense", f'problem "partition" is a maximisation, the plan says {obj.sense}'))
    if not plan.has_solution:
        if plan.allocation or plan.placement:
            out.append(Violation("allocation", f"status {plan.status.value} but containers are given"))
        return out
    if plan.placement is None:
        out.append(Violation("placement", "a partition plan places every container on a server"))
        return out
    out += check_server_placement(instance, plan)  # names, roles, totals vs allocation, per-server capacity (eq. 6)
    for app in plan.allocation:
        if app not in instance.job_index:
            out.append(Violation(f"allocation.{app}", f'unknown application "{app}"'))
    if any(v.path.startswith(("placement.", "allocation.")) and "capacity" not in v.path for v in out):
        return out
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
    out += check_paused(plan, [a for i, a in enumerate(data.apps) if n[i] == 0], "applications without containers")
    value = float(data.util @ n)
    if obj.value is None or abs(obj.value - value) > REL_TOL * max(1.0, abs(value)):
        out.append(Violation("objective.value", f"reported {obj.value} != recomputed Σ_k u_k = {value:.9g} (Dorm eq. 1)"))
    metrics = partition_metrics(data, x)
    for key in ("fairness_loss", "adjustment_overhead", "resource_utilization", "admitted", "paused", "containers"):
        got = plan.metrics.get(key)
        if got is not None and abs(float(got) - float(metrics[key])) > REL_TOL * max(1.0, abs(float(metrics[key]))):
            out.append(Violation(f"metrics.{key}", f"{got} != recomputed {metrics[key]:.6g}"))
    if "fairness_threshold" in plan.options and not kept:
        # a Dorm plan claims P2's constraints: every application at n_min or more, both budgets
        b1, b2 = budgets(data, float(plan.options["fairness_threshold"]), float(plan.options["adjustment_threshold"]))
        for i, app in enumerate(data.apps):
            if n[i] < data.n_min[i]:
                out.append(Violation(f"allocation.{app}", f"{n[i]} containers < n_min {data.n_min[i]} (Dorm eq. 8)"))
        if metrics["fairness_loss"] > b1 + REL_TOL:
            out.append(Violation("metrics.fairness_loss", f"{metrics['fairness_loss']:.6g} > budget ceil(θ1·2m) = {b1:g} (Dorm eq. 15)"))
        if metrics["adjustment_overhead"] > b2:
            out.append(Violation("metrics.adjustment_overhead", f"{metrics['adjustment_overhead']} > budget ceil(θ2·|A^t ∩ A^(t-1)|) = {b2} (Dorm eq. 16)"))
    return out


def partition_value(instance: Instance, plan: Plan) -> float:
    """Σ_k u_k: the utilisation Dorm maximises (eq. 1), from the plan's placement."""
    data = compile_partition(instance)
    return float(data.util @ placement_matrix(data, plan.placement or {}).sum(axis=1))


def partition_plan_metrics(instance: Instance, plan: Plan) -> dict:
    """Dorm's metrics (eq. 1-4) of the plan's placement."""
    data = compile_partition(instance)
    return partition_metrics(data, placement_matrix(data, plan.placement or {}))
