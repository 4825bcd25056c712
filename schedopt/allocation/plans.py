"""Plans of the one allocation model: :func:`build_plan`, the inverse of the
model's reduction ({row: (c0, c1)} → counts and a type per job, the objective,
the metrics and the certificates), which every allocation solver returns through;
:func:`heuristic_plan`, a heuristic's plan with its certified bounds
(:func:`plan_bounds`); and :func:`allocation_plan`, what an outside heuristic
returns to be compared, checked and certified like the built-in solvers."""

from __future__ import annotations

import math
import time
from typing import Any, NamedTuple

import numpy as np

from schedopt.allocation.certificates import configuration_count
from schedopt.allocation.knapsack import KNAPSACK_METHOD, knapsack_proof
from schedopt.allocation.metrics import allocation_metrics
from schedopt.allocation.model import (AllocationModel, LpBound, admitted_bound, cannot_run, compile_model, lp_bound)
from schedopt.allocation.problem import fits, lagrangian_proof, role_counts, settle_bounds
from schedopt.allocation.rows import accelerator_utilization, shared_flavor
from schedopt.allocation.size_classes import size_class_proof
from schedopt.errors import InputError
from schedopt.gcpause import paused_gc
from schedopt.instance import Instance
from schedopt.plan import Certificate, Objective, Plan, Proof, Status, Termination, relative_gap
from schedopt.tolerances import BOUND_NOISE, BRANCH_ABOVE_GAP, SETTLED_GAP, improves


def build_plan(model: AllocationModel, *, solver: str, config: dict[int, tuple[int, int]], status: Status,
               termination: Termination, started: float, bound: float | None = None,
               admitted_bound: int | None = None, proof: Proof | None = None, admitted_proof: Proof | None = None,
               seed: int | None = None, options: dict[str, Any] | None = None, metrics: dict[str, Any] | None = None,
               message: str | None = None) -> Plan:
    """A Plan from {row: (c0, c1)} (at most one row per job): counts and, on a cluster
    with types, the type per job. ``bound`` is a lower bound on Σ cost, ``proof`` the
    numbers that prove it (``Proof.value`` is filled in here, in the plan's sense);
    ``admitted_proof`` proves ``admitted_bound``. The cyclic collector is paused meanwhile."""
    with paused_gc():
        rows, instance = model.rows, model.instance
        assert len({int(model.job[v]) for v in config}) == len(config), "two types for one job"
        order = sorted(config)
        source = [instance.jobs[j] for j in model.job[order].tolist()]  # a typed row's job copy has the same id and roles
        allocation = {job.id: role_counts(job, *config[v]) for job, v in zip(source, order)}
        accelerators = {job.id: model.accelerator(v) for job, v in zip(source, order)} if instance.has_types else None
        has_plan = status not in (Status.INFEASIBLE, Status.TIME_LIMIT)
        cost = rows.total_time_s(config) if has_plan else None
        metrics = dict(metrics or {})
        bound, proof, admitted_proof = settle_bounds(cost=cost, bound=bound, proof=proof, admitted=len(config),
                                                     admitted_bound=admitted_bound, admitted_proof=admitted_proof,
                                                     jobs=model.J, metrics=metrics, sign=rows.sign)
        value = None if cost is None else rows.sign * cost + 0.0
        all_metrics = allocation_metrics(instance, allocation, accelerators,
                                         used=rows.usage(config) if model.plain else None)
        if accelerators is not None:
            all_metrics["utilization_by_accelerator"] = accelerator_utilization(instance, allocation, accelerators)
        if instance.queues:
            all_metrics["queue_usage"] = queue_usage(model, config)
        admitted = {int(model.job[v]) for v in config}
        paused = [j for j in range(model.J) if j not in admitted]
        never = cannot_run(model, paused) if paused else {}
        if never:
            all_metrics["cannot_run"] = never  # paused for good: no plan can ever run them
        all_metrics.update(metrics)
        return Plan(
            instance=instance.name, problem=rows.problem, solver=solver, status=status, termination=termination,
            objective=Objective(name=rows.objective_name, sense=rows.sense, value=value, bound=bound,
                                gap=relative_gap(value, bound), admitted=len(config), admitted_bound=admitted_bound),
            solve_seconds=time.perf_counter() - started, allocation=allocation, accelerators=accelerators,
            paused=[instance.jobs[j].id for j in paused], metrics=all_metrics, seed=seed, options=options or {},
            message=message,
            certificate=Certificate(bound=proof, admitted_bound=admitted_proof) if proof or admitted_proof else None,
        )


def queue_usage(model: AllocationModel, config: dict[int, tuple[int, int]]) -> dict[str, dict[str, float]]:
    """What each queue's admitted jobs use, per ``resource@flavor`` (Kueue's usage against its quotas;
    a resource the queue holds under a shared flavor, under that flavor)."""
    instance = model.instance
    out: dict[str, dict[str, float]] = {q.name: {} for q in instance.queues or []}
    flavors = instance.flavors
    queue_of = {q.name: q for q in instance.queues or []}
    for v, (c0, c1) in config.items():
        job = instance.jobs[int(model.job[v])]
        if job.queue is None:
            continue
        demand = instance.role_demand(job)
        use = c0 * demand[0] + (c1 * demand[1] if len(demand) == 2 else 0.0)
        f = flavors[int(model.kind[v])]
        queue = queue_of[job.queue]
        for r, amount in zip(instance.resources, use):
            if amount:
                key = f"{r}@{shared_flavor(instance, queue, r) or f}"
                out[job.queue][key] = out[job.queue].get(key, 0.0) + float(amount)
    return out


#: the search's second target when no tree proves the plan's value: within this share of it
#: (issue 50 §4: a certified bound within 1 % where the plan is)
BRANCH_WITHIN = 0.0099
#: a heuristic's quick certificate (``quick_tree``, the typed greedy's default): where the LP leaves
#: more than SETTLED_GAP, a tree of BRANCH_WITHIN below the plan's value within this many node LPs,
#: fewer over many configurations (QUICK_TREE_WORK / configurations; none below QUICK_TREE_LEAST).
#: On 80-100 rigid typed jobs on 108 GPUs such trees took 9-95 node LPs where the plan is within 1 %
QUICK_TREE_LPS = 100
QUICK_TREE_WORK = 40_000
QUICK_TREE_LEAST = 10
#: the most times one plan's tree search adopts an integral plan it meets below its target (each
#: at least BRANCH_WITHIN below the last where the target is, so few are ever met) and searches again
MAX_TREE_PLANS = 3


class PlanBounds(NamedTuple):
    """What :func:`plan_bounds` certifies: ``bound`` on Σ cost and its ``proof``, ``admitted_bound``
    and its ``admitted_proof``, ``metrics`` (how), and ``config``, the plan they are for: the one
    asked about, or a better one the tree search met (``metrics["plan_from_tree"]``)."""

    bound: float | None
    proof: Proof | None
    admitted_bound: int | None
    admitted_proof: Proof | None
    metrics: dict[str, Any]
    config: dict[int, tuple[int, int]]


def plan_bounds(model: AllocationModel, config: dict[int, tuple[int, int]], *, lp: LpBound | None = None,
                dual: Any = None, branch_budget_s: float | None = None, quick_tree: bool = False,
                adopt: bool = True) -> PlanBounds:
    """A plan's certified bounds: the admission LP's bound on the admitted count and, when
    the plan admits that many, the LP bound on Σ cost among plans admitting as many:
    the Lagrangian dual in price space (no configurations listed) where the model prices
    in closed form, else the LP over the listed configurations by column generation.
    ``lp``: an LP already solved, reused when its admission row matches; ``dual``: a
    :class:`~schedopt.allocation.dual.DualResult` over every job, reused when every job
    is admitted. On listed rows, where a gap above BRANCH_ABOVE_GAP is left and ``branch_budget_s``
    is given, a branch certificate (``branching.py``) of the plan's value, else of BRANCH_WITHIN
    below it, is searched for within that many seconds; without it, with ``quick_tree``, where the
    gap is above ``tolerances.SETTLED_GAP``, one of BRANCH_WITHIN below the value within
    QUICK_TREE_LPS node LPs, diving on for a better plan when it cannot prove (with ``adopt``).
    A search that meets an integral plan below its target (a node's LP optimum) makes it the
    plan and searches again for its value (at most MAX_TREE_PLANS times, within the budgets
    left; ``adopt`` false: the plan stays, the search ends). Where the gap is still above
    SETTLED_GAP, the knapsack bound (``knapsack.py``) is tried and stated when higher."""
    from schedopt.allocation.relaxation import from_dual, relax_in_price_space

    if model.J == 0:
        return PlanBounds(0.0, lagrangian_proof(model.rows, np.zeros(model.rows.R), names=model.resource_names), 0,
                          None, {}, config)
    if not config:
        return PlanBounds(None, None, None, None, {}, config)
    admitted_proof = None
    if len(config) < model.J:  # a bound on Σ t holds among plans admitting as many: prove no plan admits more
        count, admitted_proof = admitted_bound(model)
        most = max(count, len(config))
    else:
        most = model.J
    if most != len(config):
        return PlanBounds(None, None, most, admitted_proof, {}, config)
    admit = None if len(config) == model.J else len(config)
    if model.priced_in_closed_form:
        relaxed = from_dual(model.rows, dual, admit) if dual is not None and admit is None else \
            relax_in_price_space(model.rows, admit=admit)
        result = relaxed.result
        return PlanBounds(relaxed.bound, relaxed.proof, most, admitted_proof, {
            "bound_method": "lagrangian-dual", "bound_iterations": result.iterations, "bound_seconds": result.seconds,
            "bound_lp_gap": result.lp_gap}, config)
    if lp is None or lp.proof.admit != admit:
        _, cs, row_of = model.choices
        lp = lp_bound(model, cs, admit=admit, seed_columns=model.seed_columns(config, cs, row_of))
    value = model.rows.total_time_s(config)
    bound, proof, metrics = lp.bound, lp.proof, {"bound_method": "lagrangian (LP, column generation)"}
    within = value + BOUND_NOISE * max(1.0, abs(value))  # a bound above the plan's value proves nothing more
    gap = relative_gap(value, bound)
    if gap is not None and gap > BRANCH_ABOVE_GAP and (branch_budget_s is not None or quick_tree) and model.own_cost:
        # the count row's gap in how many jobs of each size fit: the size classes' ranges close it
        # where they cut (5 ms at 100 rigid typed jobs, against 30-40 node LPs of a tree)
        got = size_class_proof(model, admit=admit, lp_x=lp.lp.x, lp_basis=lp.lp.basis)
        if got is not None and adopt:  # the LP's integral optimum there is a plan, and may be a better one
            better = _fitting_better(model, config, value, got.plan)
            if better is not None:
                metrics["plan_from_size_classes"] = {"value_of_the_plan_given": float(value)}
                config, value = better
                within = value + BOUND_NOISE * max(1.0, abs(value))
        if got is not None and improves(bound, got.bound) and got.bound <= within:
            bound, proof = got.bound, got.proof
            metrics.update(got.info)
        gap = relative_gap(value, bound)
    tree = None  # the tree first (the knapsack's search costs about as much as a tree at 80-100 jobs and
    # rarely closes what a tree leaves)
    # the tree's search, when one is made: seconds, node LPs (None: the search's own budget), whether of
    # BRANCH_WITHIN below the value only, whether a hopeless search dives for a better plan
    search: tuple[float, int | None, bool, bool] | None = None
    if branch_budget_s is not None and gap is not None and gap > BRANCH_ABOVE_GAP and model.own_cost:
        search = (branch_budget_s, None, False, False)
    elif quick_tree and gap is not None and gap > SETTLED_GAP and model.own_cost:
        lps = min(QUICK_TREE_LPS, QUICK_TREE_WORK // max(1, configuration_count(model.instance)))
        if lps >= QUICK_TREE_LEAST:
            search = (math.inf, lps, True, adopt)
    adopted = 0
    while search is not None:
        budget_s, max_lps, within_only, dive = search
        found: dict[str, Any] = {}
        started = time.perf_counter()
        tree = _branch_bound(model.instance, value, admit, gap, budget_s, metrics, model.allowed_at_least,
                             max_node_lps=max_lps, within_only=within_only, found=found, dive_for_plan=dive)
        better = None if tree is not None or not adopt or adopted >= MAX_TREE_PLANS else \
            _better_plan(model, config, value, found.get("better_plan"))
        if better is None:
            break
        # the tree met an integral plan below the target: it is the plan now, and the search starts again
        # for its value with what the budgets leave
        adopted += 1
        first = metrics.get("plan_from_tree", {}).get("value_of_the_plan_given", float(value))
        metrics["plan_from_tree"] = {"plans_adopted": adopted, "value_of_the_plan_given": first}
        metrics.pop("branch_certificate", None)  # the search for the plan given, not for this one
        config, value = better
        within = value + BOUND_NOISE * max(1.0, abs(value))
        gap = relative_gap(value, bound)
        if gap is None or gap <= (SETTLED_GAP if within_only else BRANCH_ABOVE_GAP):
            break
        if max_lps is not None:
            max_lps -= int(found.get("node_lps", 0))
            if max_lps <= 0:
                break
        search = (budget_s - (time.perf_counter() - started), max_lps, within_only, dive)
    if tree is not None and improves(bound, tree[0]) and tree[0] <= within:
        bound, proof = tree
    if not relative_gap(value, bound) > SETTLED_GAP:  # certified within 1 %: no knapsack search
        return PlanBounds(bound, proof, most, admitted_proof, metrics, config)
    # the LP splits jobs across types and counts; the knapsack bound keeps each type's capacity whole
    started = time.perf_counter()
    got = knapsack_proof(model.instance, lp.proof, lp_bound=lp.bound, target=value)
    if got is not None and improves(bound, got[0]) and got[0] <= within:
        bound, proof = got
        metrics.update({"bound_method": KNAPSACK_METHOD, "bound_lp": lp.bound,
                        "bound_seconds": time.perf_counter() - started})
    return PlanBounds(bound, proof, most, admitted_proof, metrics, config)


def _fitting_better(model: AllocationModel, config: dict[int, tuple[int, int]], value: float,
                    other: dict[int, tuple[int, int]] | None) -> tuple[dict[int, tuple[int, int]], float] | None:
    """``other`` ({row: (c0, c1)}) and its Σ cost when it admits as many jobs as ``config``, fits the
    capacity rows and costs less than ``value`` by more than rounding; else None."""
    if not other or len(other) < len(config) or not fits(model.rows.usage(other), 0.0, model.rows.cap):
        return None
    cost = model.rows.total_time_s(other)
    return (other, cost) if math.isfinite(cost) and improves(cost, value) else None


def _better_plan(model: AllocationModel, config: dict[int, tuple[int, int]], value: float,
                 found: list[tuple[int, int, int, int]] | None) -> tuple[dict[int, tuple[int, int]], float] | None:
    """The tree's integral plan ``found`` ((job, type, c0, c1) each) as {row: (c0, c1)}, and its
    Σ cost, when it admits as many jobs as ``config``, fits the capacity rows and costs less than
    ``value`` by more than rounding; else None."""
    if not found or len(found) < len(config):
        return None
    rows = model.row_on[[j for j, _, _, _ in found], [t for _, t, _, _ in found]]
    if (rows < 0).any():
        return None
    better = {int(v): (c0, c1) for v, (_, _, c0, c1) in zip(rows.tolist(), found)}
    return None if len(better) != len(found) else _fitting_better(model, config, value, better)


def _branch_bound(instance: Instance, value: float, admit: int | None, gap: float, budget_s: float,
                  metrics: dict[str, Any], allowed_at_least: int = 0, *, max_node_lps: int | None = None,
                  within_only: bool = False, found: dict[str, Any] | None = None,
                  dive_for_plan: bool = False) -> tuple[float, Proof] | None:
    """A branch certificate of ``value`` (then, when none is found and the plan's ``gap`` is above
    BRANCH_WITHIN, of ``value`` less BRANCH_WITHIN; ``within_only``: that one only) within one
    search's node-LP budget in all (``max_node_lps``, None: the search's own; what the first target
    leaves goes to the second) and ``budget_s`` seconds (a time limit; inf: none); ``metrics`` says
    what was found (``allowed_at_least``: :attr:`AllocationModel.allowed_at_least`); ``found`` gets
    the node LPs the searches solved (``node_lps``) and an integral plan below a target a search met
    (``better_plan``, as :func:`branching.branch_proof`'s ``why``; ``dive_for_plan``: a hopeless search
    dives on for one, as there)."""
    from schedopt.allocation.branching import branch_proof  # the search, imported when a plan needs it

    started = time.perf_counter()
    targets = ([] if within_only else [value]) + ([value - BRANCH_WITHIN * abs(value)] if gap > BRANCH_WITHIN else [])
    why: dict[str, Any] = {}
    lps_left: int | None = max_node_lps  # None: the search's own budget
    for target in targets:
        left = budget_s - (time.perf_counter() - started)
        if left <= 0 or (lps_left is not None and lps_left <= 0):
            break
        why = {}
        got = branch_proof(instance, target, admit=admit, max_node_lps=lps_left, time_limit_s=left,
                           allowed_at_least=allowed_at_least, why=why, dive_for_plan=dive_for_plan)
        if found is not None:
            used = got[2]["branch_node_lps"] if got is not None else why.get("node_lps", 0)
            found["node_lps"] = found.get("node_lps", 0) + int(used)
            if "better_plan" in why:
                found["better_plan"] = why["better_plan"]
                break  # the caller adopts it and searches again
        if got is None and why.get("node_lp_budget") is not None:
            lps_left = int(why["node_lp_budget"]) - int(why["node_lps"])
        if got is not None:
            bound, proof, info = got
            metrics.update(info)
            metrics["bound_method"] = ("branch-lagrangian (the plan's value)" if target == value else
                                       f"branch-lagrangian (within {BRANCH_WITHIN:.2%} of the plan's value)")
            return bound, proof
    metrics["branch_certificate"] = (f"none found ({why.get('stopped', 'no budget')} after "
                                     f"{time.perf_counter() - started:.2f} s): the bound is the LP's or the knapsack's "
                                     "(bound_method)")
    return None


def heuristic_plan(model: AllocationModel, config: dict[int, tuple[int, int]], *, solver: str, started: float,
                   seed: int | None, options: dict[str, Any], metrics: dict[str, Any], bound: bool = True,
                   lp: LpBound | None = None, dual: Any = None, branch_budget_s: float | None = None,
                   quick_tree: bool = False, adopt: bool = True) -> Plan:
    """A heuristic's Plan of {row: (c0, c1)}, with the certified bounds when ``bound``
    (:func:`plan_bounds`; ``branch_budget_s``: seconds for a branch certificate where the LP
    leaves a gap; ``quick_tree``: a small one within 1 % without them; ``adopt``: a better plan such a
    search meets is the plan), each with its certificate (the prices) for ``schedopt check``
    to replay. An empty plan claims infeasibility only when no job can run alone (a
    heuristic may just not admit any)."""
    value_bound = proof = most = admitted_proof = None
    if bound:
        value_bound, proof, most, admitted_proof, more, config = plan_bounds(model, config, lp=lp, dual=dual,
                                                                              branch_budget_s=branch_budget_s,
                                                                              quick_tree=quick_tree, adopt=adopt)
        metrics = {**metrics, **more}
    status = Status.HEURISTIC if config or model.J == 0 or len(cannot_run(model)) < model.J else Status.INFEASIBLE
    return build_plan(model, solver=solver, config=config, status=status,
                      termination=Termination.COMPLETED if status == Status.HEURISTIC else Termination.INFEASIBLE,
                      started=started, bound=value_bound, admitted_bound=most, proof=proof,
                      admitted_proof=admitted_proof, seed=seed, options=options, metrics=metrics)


def allocation_plan(instance: Instance, allocation: dict[str, dict[str, int]], *, solver: str,
                    started: float | None = None, seed: int | None = None, options: dict[str, Any] | None = None,
                    metrics: dict[str, Any] | None = None, bound: bool = True,
                    accelerators: dict[str, str] | None = None) -> Plan:
    """A heuristic allocation plan for ``allocation`` (job id -> role -> count; jobs
    left out are paused), with the objective recomputed and, when ``bound``,
    the certified LP bounds on the admitted count and on Σ Q_j/f_j.
    ``started`` is the solve's ``time.perf_counter()`` start (now by default).
    On a cluster with accelerator types ``accelerators`` names each admitted job's
    type (job id -> type); queues' quotas and spread are rows of the same model."""
    t0 = time.perf_counter() if started is None else started
    model = compile_model(instance)
    config: dict[int, tuple[int, int]] = {}
    for job_id, counts in allocation.items():
        if job_id not in instance.job_index:
            raise InputError(solver, f'allocation names unknown job "{job_id}"')
        j = instance.job_index[job_id]
        names = instance.jobs[j].role_names
        if set(counts) != set(names):
            raise InputError(solver, f"allocation.{job_id}: roles {sorted(counts)} != the job's roles {sorted(names)}")
        c = (int(counts[names[0]]), int(counts[names[1]]) if len(names) == 2 else 0)
        kind = (accelerators or {}).get(job_id)
        if instance.has_types and kind is None:
            raise InputError(solver, f"accelerators.{job_id}: the cluster has accelerator types; name the job's "
                                     f"(accelerators={{job id: type}})")
        row = next((v for v in range(int(model.job_start[j]), int(model.job_start[j + 1]))
                    if model.plain or model.accelerator(v) == kind), None)
        if row is None:
            raise InputError(solver, f'accelerators.{job_id}: the job has no speed on "{kind}"')
        config[row] = c
    return heuristic_plan(model, config, solver=solver, started=t0, seed=seed, options=options or {},
                          metrics=metrics or {}, bound=bound)
