"""The checker of count-allocation plans (Optimus eq. 5-8; shared by SLAQ's
quality problem, which differs only in its per-job term and sense)."""

from __future__ import annotations

import math

import numpy as np
from typing import Callable

from schedopt.allocation.metrics import allocation_metrics, allocation_usage, objective_term
from schedopt.allocation.certificates import CostGrid, TooLargeToReplay, first_job_that_fits, remaining_time_grid
from schedopt.allocation.objectives import OBJECTIVES
from schedopt.allocation.rows import accelerator_usage, queue_index, quota_rows, quota_use, resource_key
from schedopt.checking import REL_TOL, Violation, check_paused, check_server_placement
from schedopt.instance import Instance
from schedopt.placement.checker import check_joint_placement
from schedopt.plan import Plan, Status
from schedopt.tolerances import capacity_limit

#: (instance, job id, counts) -> the job's objective term; non-finite = configuration not allowed
JobTerm = Callable[[Instance, str, dict[str, int]], float]


def check_counts(instance: Instance, plan: Plan, *, term: JobTerm, formula: str, capacity_ref: str,
                 sense: str, cost: CostGrid) -> list[Violation]:
    """Counts within each role's bounds and allowed by the speed, capacity summed
    over the cluster, paused jobs, objective and metrics recomputed; a joint
    plan's placement is checked too."""
    out: list[Violation] = []
    alloc = plan.allocation
    if plan.objective.sense != sense:
        out.append(Violation("objective.sense", f'problem "{plan.problem}" is a {sense}imisation, the plan says {plan.objective.sense}'))
    if plan.status in (Status.INFEASIBLE, Status.TIME_LIMIT) and alloc:
        out.append(Violation("allocation", f"status {plan.status.value} but an allocation is given"))
    if plan.status == Status.INFEASIBLE:
        out += _check_infeasible_claim(instance, cost)
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
        if in_bounds and not math.isfinite(term(instance, job_id, counts)):
            out.append(Violation(path, f"configuration {counts} is not allowed by the job's speed ({job.speed.form if job.speed else 'none'})"))
    if any(v.path.startswith("allocation.") for v in out):
        return out  # the sums below need valid jobs and roles

    used = allocation_usage(instance, alloc)
    cap = instance.capacity_total
    for r, u, c in zip(instance.resources, used, cap):
        if u > capacity_limit(c):
            out.append(Violation(f"capacity.{r}", f"allocated {u:g} > capacity {c:g} ({capacity_ref})"))

    out += check_paused(plan, [j.id for j in instance.jobs if j.id not in alloc], "jobs without an allocation")

    obj = plan.objective
    if obj.admitted is not None and obj.admitted != len(alloc):
        out.append(Violation("objective.admitted", f"{obj.admitted} != {len(alloc)} jobs allocated"))
    if obj.admitted_bound is not None and obj.admitted_bound < len(alloc):
        out.append(Violation("objective.admitted_bound", f"bound {obj.admitted_bound} < {len(alloc)} jobs admitted"))
    if plan.has_solution:
        total = sum(term(instance, j, c) for j, c in alloc.items())
        if obj.value is None or abs(obj.value - total) > REL_TOL * max(1.0, abs(total)):
            out.append(Violation("objective.value", f"reported {obj.value} != recomputed {formula} = {total:.9g}"))
        metrics = allocation_metrics(instance, alloc, plan.accelerators)
        for key in ("admitted", "paused", "tasks", "restarts", "stopped"):
            if key in plan.metrics and plan.metrics[key] != metrics[key]:
                out.append(Violation(f"metrics.{key}", f"{plan.metrics[key]} != recomputed {metrics[key]}"))
        for r, u in metrics["utilization"].items():
            got = plan.metrics.get("utilization", {}).get(r)
            if got is not None and abs(got - u) > REL_TOL:
                out.append(Violation(f"metrics.utilization.{r}", f"{got} != recomputed {u:.6g}"))
    if plan.placement is not None:  # a joint (allocation + placement) plan
        placed = check_server_placement(instance, plan)
        out += placed
        if not placed:
            out += check_joint_placement(instance, plan)
    return out


def _check_infeasible_claim(instance: Instance, cost: CostGrid) -> list[Violation]:
    """A plan that says "infeasible" is wrong when some job fits the cluster (its type's
    capacity and its queue's quota) alone at an allowed configuration: admitting that
    job alone is a feasible plan."""
    try:
        job_id = first_job_that_fits(instance, cost)
    except TooLargeToReplay:
        return []
    if job_id is None:
        return []
    return [Violation("status", f'status infeasible, but job "{job_id}" fits the cluster (and its quota) alone at an '
                                f"allowed configuration: a plan admitting it is feasible")]


def _term_on_types(plan: Plan) -> JobTerm:
    """The job's objective term (t_j, or its weighted form) at its speed on the type the plan
    gives it (its plain speed without types)."""
    types = plan.accelerators or {}
    return lambda instance, job_id, counts: objective_term(instance, job_id, counts, types.get(job_id))


def check_allocation(instance: Instance, plan: Plan) -> list[Violation]:
    """Optimus eq. 5-8: bounds, allowed configurations, capacity, Σ Q_j/f_j; on a
    cluster with accelerator types, each job's type and each type's capacity."""
    out = check_accelerators(instance, plan)
    out += check_quotas(instance, plan)
    return out + check_counts(instance, plan, term=_term_on_types(plan), formula="Σ Q_j/f_j",
                              capacity_ref="Optimus eq. 7", sense="min", cost=remaining_time_grid)


def check_accelerators(instance: Instance, plan: Plan) -> list[Violation]:
    """Typed clusters (issue 34): every admitted job names a type of the cluster it
    can run on, no paused job names one, and each type's resources hold what its
    jobs use. An untyped instance takes no types."""
    types = plan.accelerators or {}
    if not instance.has_types:
        return [Violation("accelerators", "the instance's servers name no accelerator types")] if types else []
    out: list[Violation] = []
    known = instance.accelerators
    for job_id in plan.allocation:
        if job_id not in types:
            out.append(Violation(f"accelerators.{job_id}", "an admitted job on a typed cluster needs its type"))
        elif types[job_id] not in known:
            out.append(Violation(f"accelerators.{job_id}", f"unknown type {types[job_id]!r}; the cluster has {known}"))
        elif job_id in instance.job_index and instance.speed_on(job := instance.jobs[instance.job_index[job_id]], types[job_id]) is None:
            allowed = job.allowed_flavors
            out.append(Violation(f"accelerators.{job_id}", f"the job has no speed on {types[job_id]!r}" if allowed is None or
                                 types[job_id] in allowed else f"{types[job_id]!r} is not among the job's allowed_flavors {allowed}"))
    for job_id in types:
        if job_id not in plan.allocation:
            out.append(Violation(f"accelerators.{job_id}", "a type for a job the plan does not admit"))
    if out or any(j not in instance.job_index for j in plan.allocation):
        return out
    used = accelerator_usage(instance, plan.allocation, types)
    cap = instance.accelerator_capacity
    for t, kind in enumerate(known):
        for r, name in enumerate(instance.resources):
            if used[t, r] > capacity_limit(cap[t, r]):
                out.append(Violation(f"capacity.{resource_key(name, kind)}",
                                     f"allocated {used[t, r]:g} > capacity {cap[t, r]:g} of the {kind or 'untyped'} servers"))
    return out


def check_quotas(instance: Instance, plan: Plan) -> list[Violation]:
    """Each queue's and each cohort's quota rows (``allocation/rows.py``) hold what the
    plan's jobs use, each on its type (the cluster's one flavor without types)."""
    if not instance.queues or not plan.allocation:
        return []
    rows = quota_rows(instance)
    kinds = {kind: t for t, kind in enumerate(instance.accelerators)}
    types = plan.accelerators or {}
    index = queue_index(instance)
    used = np.zeros(rows.Q)
    for job_id, counts in plan.allocation.items():
        if job_id not in instance.job_index:
            continue
        job = instance.jobs[instance.job_index[job_id]]
        t = kinds.get(types.get(job_id)) if instance.has_types else 0
        if t is None or job.queue is None:
            continue
        use = sum((n * instance.vector(job.roles[r].demand) for r, n in counts.items() if r in job.roles),
                  np.zeros(len(instance.resources)))
        used += quota_use(rows, index[job.queue], t, use[None, :])[0]
    return [Violation(f"queues.{name}", f"its queues use {u:g} > the quota's {c:g}")
            for name, u, c in zip(rows.names, used, rows.rhs) if u > capacity_limit(c)]


def plan_objective(instance: Instance, plan: Plan) -> Instance:
    """``instance`` with the allocation objective the plan names (``allocation/objectives.py``);
    ValueError for a name the problem does not have."""
    if plan.objective.name not in OBJECTIVES:
        raise ValueError(f"unknown objective {plan.objective.name!r}; the allocation problem has {', '.join(OBJECTIVES)}")
    return instance.with_objective(plan.objective.name)


def allocation_value(instance: Instance, plan: Plan) -> float:
    """Σ_j c_j over the plan's admitted jobs, each at its type's speed: t_j = Q_j / f_j(p_j, w_j)
    (Optimus eq. 5-6), or its weighted form when the plan names the average-JCT objective."""
    if plan.objective.name in OBJECTIVES:  # else the instance's own (the checker reports the unknown name)
        instance = plan_objective(instance, plan)
    term = _term_on_types(plan)
    return float(sum(term(instance, j, c) for j, c in plan.allocation.items()))
