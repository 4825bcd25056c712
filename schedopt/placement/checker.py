"""The checkers of the placement problem (Optimus §4.2, DLTAP), of the
ps-assignment problem (Optimus §5.3, Table 3) and of the placement part of a
joint (allocation + placement) plan, all from the instance alone."""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.checking import REL_TOL, Violation, check_paused, check_server_placement
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.assignment import assignment_metrics, ps_counts
from schedopt.placement.problem import OBJECTIVE_NAMES, compile_placement, placement_metrics
from schedopt.plan import Plan


def placement_where(data: Any, plan: Plan) -> list:
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


def check_joint_placement(instance: Instance, plan: Plan) -> list[Violation]:
    """A joint (allocation + placement) plan: its placement metrics recomputed."""
    out: list[Violation] = []
    reported = plan.metrics.get("placement")
    if not isinstance(reported, dict):
        return out
    try:
        data = compile_placement(instance.with_allocation(plan.allocation, plan.accelerators))
    except InputError as exc:
        out.append(Violation("placement", str(exc)))
        return out
    m = placement_metrics(data, placement_where(data, plan))
    for key in ("total_transfer_time_s", "max_transfer_time_s", "cross_node_pairs", "servers_used", "moved_tasks",
                "moved_jobs", "kept_tasks", "stopped_jobs"):
        if key in reported and abs(float(reported[key]) - float(m[key])) > REL_TOL * max(1.0, abs(float(m[key]))):
            out.append(Violation(f"metrics.placement.{key}", f"{reported[key]} != recomputed {m[key]}"))
    return out

def check_types(instance: Instance, plan: Plan) -> list[Violation]:
    """On a cluster whose servers name accelerator types, every task of a job runs on a server of
    the type given for it (``allocation_accelerators``)."""
    if not instance.has_types:
        return []
    given = instance.allocation_accelerators or {}
    kinds = [srv.accelerator for srv in instance.servers for _ in range(srv.count)]
    kind_of = dict(zip(instance.server_names, kinds))
    out = []
    for job_id, per_server in (plan.placement or {}).items():
        for server in per_server:
            if server in kind_of and job_id in given and kind_of[server] != given[job_id]:
                out.append(Violation(f"placement.{job_id}.{server}", f"server of type {kind_of[server]!r}; the job's tasks "
                                                                       f"run on type {given[job_id]!r}"))
    return out


def check_placement(instance: Instance, plan: Plan) -> list[Violation]:
    """Counts as the instance's allocation gives them, per-server capacity, and
    T_j / cross-node pairs recomputed (DESIGN.md's placement formulas)."""
    out: list[Violation] = []
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
        return out
    out += check_server_placement(instance, plan)
    out += check_types(instance, plan)
    if any(v.path.startswith(("allocation.", "placement.")) and "capacity" not in v.path for v in out):
        return out
    out += check_paused(plan, [j.id for j in instance.jobs if j.id not in plan.allocation], "jobs not placed")
    where = placement_where(data, plan)
    placed = np.array([w is not None for w in where], dtype=bool)
    m = placement_metrics(data, where)
    metric = {name: key for name, key in OBJECTIVE_NAMES.values()}.get(plan.objective.name)
    if metric is None:
        out.append(Violation("objective.name", f'"{plan.objective.name}" is not a placement objective'))
        return out
    value = float(m[metric])
    if plan.has_solution and (plan.objective.value is None or abs(plan.objective.value - value) > REL_TOL * max(1.0, value)):
        out.append(Violation("objective.value", f"reported {plan.objective.value} != recomputed {plan.objective.name} = {value:.9g}"))
    if plan.objective.admitted is not None and plan.objective.admitted != int(placed.sum()):
        out.append(Violation("objective.admitted", f"{plan.objective.admitted} != {int(placed.sum())} jobs placed"))
    for key in ("cross_node_pairs", "moved_tasks", "moved_jobs", "kept_tasks", "stopped_jobs"):
        if key in plan.metrics and plan.metrics[key] != m.get(key):
            out.append(Violation(f"metrics.{key}", f"{plan.metrics[key]} != recomputed {m.get(key)}"))
    return out

def check_ps_assignment(instance: Instance, plan: Plan) -> list[Violation]:
    """Every block of every job is covered exactly by its entries, on PS 0..p-1;
    the Table 3 metrics and the objective are recomputed."""
    out: list[Violation] = []
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
        return out
    metrics = assignment_metrics(instance, assigned)
    for key in ("max_size_difference", "max_request_difference", "total_requests"):
        if key in plan.metrics and plan.metrics[key] != metrics[key]:
            out.append(Violation(f"metrics.{key}", f"{plan.metrics[key]} != recomputed {metrics[key]}"))
    if plan.objective.value is not None and plan.objective.value != metrics["max_size_difference"]:
        out.append(Violation("objective.value", f"{plan.objective.value} != recomputed max size difference {metrics['max_size_difference']}"))
    return out


def placement_value(instance: Instance, plan: Plan) -> float:
    """The plan's placement objective (Σ T_j, max T_j or cross-node pairs, by its name)."""
    data = compile_placement(instance)
    metric = {name: key for name, key in OBJECTIVE_NAMES.values()}[plan.objective.name]
    return float(placement_metrics(data, placement_where(data, plan))[metric])


def placement_plan_metrics(instance: Instance, plan: Plan) -> dict[str, Any]:
    """T_j totals, cross-node pairs and servers used of the plan's placement."""
    data = compile_placement(instance)
    return placement_metrics(data, placement_where(data, plan))


def ps_assignment_value(instance: Instance, plan: Plan) -> float:
    """The largest difference in parameters held by two PS of one job (Table 3)."""
    return float(assignment_metrics(instance, plan.ps_assignment or {})["max_size_difference"])
