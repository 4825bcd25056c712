"""The lexicographic driver shared by the exact allocation models.

Stage 1 (only when not every job fits at its minimum): maximise the number of
admitted jobs. Stage 2: minimise Σ t_j among plans that admit at least that
many. A backend states the multiple-choice model once and solves either stage;
this module turns its answers into one Plan with status, bound and gap.

Anytime: the problem's heuristic plan is computed first and is the incumbent
every later phase must beat (it is the backends' solution hint, too); when the
time limit stops a phase, the best plan found so far comes back with the best
proven bound known (the LP relaxation's, or the backend's dual bound). So an
exact solver never returns fewer admitted jobs, or a worse Σ t_j among equal
counts, than the heuristic. ``time_limit`` bounds the whole call: the deadline
is checked between phases and each backend gets only what is left.

One driver for the one model (``model.py``): typed rows (a job's configurations
over all its types form one group) and plain ones (an instance without types,
queues or spread, whose rows are its jobs) go through the same phases. Where the
plain rows' cost is Q_j·step time, the dual prices them without listing their
configurations (``dual.py``); typed rows are listed (``AllocationModel.choices``).
"""

from __future__ import annotations


import time
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from schedopt.allocation.dual import PricingOracle, enumerate_within, price_kinds
from schedopt.allocation.greedy import greedy_allocate
from schedopt.allocation.lagrange import fix_by_reduced_cost, round_lp
from schedopt.allocation.relaxation import relax_in_price_space
from schedopt.allocation.model import AllocationModel, LpBound, admitted_bound, compile_model, lp_bound
from schedopt.allocation.plans import build_plan
from schedopt.allocation.price_guided import allocate_at_prices, dual_admission, minimum_counts
from schedopt.allocation.problem import (AllocationData, ChoiceSet, compile_allocation, count_minimal,
                                         enumerate_choices, fits, lagrangian_proof)
from schedopt.allocation.admission import admit as admit_by_rule, all_fit_at_minimum
from schedopt.allocation.typed import count_start, lp_guided_pass, typed_admission
from schedopt.deadline import Deadline, check_time_limit
from schedopt.gcpause import paused_gc
from schedopt.instance import Instance
from schedopt.plan import Plan, Proof, Status, Termination, relative_gap
from schedopt.tolerances import DUAL_FIXING_REL_TOL, LP_ZERO, MIP_REL_GAP, REPLAYABLE_GAP, floor_count, improves, worse
from schedopt.results import StageResult
from schedopt.allocation.size_classes import (COLD_CLASS_CONFIGURATIONS, MAX_CLASS_CONFIGURATIONS,
                                              class_rows, size_class_proof)
from schedopt.allocation.stage import (BOUND_ALLOWANCE_S, FINISH_SECONDS_PER_JOB, ExactBackend,
                                      no_plan_message, settled_bound)


#: measured cost of the LP bound per configuration left after pruning (s); the
#: driver does not start a phase the time left cannot pay for
LP_SECONDS_PER_CHOICE = 1.0e-6
#: measured cost of the price-space bound per job (s; 0.073 s at 4,000 jobs); the overrun allowed
#: for it is the drivers' BOUND_ALLOWANCE_S (stage.py): a plan stopped early still carries a certified bound
BOUND_SECONDS_PER_JOB = 2.5e-5
#: an incumbent within this relative gap of the LP bound is returned as optimal without the
#: stage-2 model: the MILP's own default relative gap (``optimus-milp``'s ``rel_gap``)
CLOSED_BY_LP_GAP = MIP_REL_GAP
#: measured cost of the price-space reduction per job (s; 1.24 s at 4,000 jobs: the dual,
#: the incumbent at its prices and the enumeration within the reduced-cost threshold)
REDUCE_SECONDS_PER_JOB = 3.0e-4
#: measured cost of enumerating and Pareto-pruning one configuration (s): 3.07 M take 0.55 s
ENUMERATE_SECONDS_PER_CONFIGURATION = 1.8e-7
#: measured cost of the bound over listed configurations (the LP by column generation and the
#: admission LP) per job (s; 0.77 s at 4,000 typed `gavel` jobs): a solve stopped before its LP
#: bound states one when the time left pays for it
LISTED_BOUND_SECONDS_PER_JOB = 2.0e-4
#: the driver improves its incumbent by prices and local search over its rows only when reduced-cost
#: fixing leaves more listed configurations than this (below, the stage model is small and the step
#: would cost more than it saves: 0.9 s on 1,000 rigid typed `gavel` jobs whose model has 3,000)
PRICED_INCUMBENT_ABOVE = 20_000
#: the exchange pass's moves, and paused jobs tried per pass, for the LP-guided start there (each
#: O(jobs · types); all of them cost about 20 s at 16,000 typed jobs)
GUIDED_EXCHANGE_MOVES = 200
#: the neighbourhood search (:func:`_neighbourhood`) is made when fixing leaves more configurations than
#: this (below, the stage model costs little more than the search's 5-10 ms: 0.1 s at 5,000) and the
#: jobs it frees have at most NEIGHBOURHOOD_MAX_CONFIGURATIONS (16,000 typed `gavel` jobs: 12-28)
NEIGHBOURHOOD_ABOVE = 5_000
NEIGHBOURHOOD_MAX_CONFIGURATIONS = 2_000


#: a heuristic that grows a feasible start (job -> counts) into a plan (an incumbent for fixing)
Heuristic = Callable[[AllocationData, dict[int, tuple[int, int]]], dict[int, tuple[int, int]]]


def _optimus_greedy(data: AllocationData, start: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    return greedy_allocate(data, start)[0]


def _incumbent_config(model: AllocationModel, heuristic: Heuristic) -> dict[int, tuple[int, int]]:
    """The heuristic's plan {row: counts}: an admitted set at its minimums (on plain rows the
    heuristics' default admission; on typed rows the type-aware first pass, each job on the
    type where its minimum runs fastest, no exchange, or, when that admits fewer than the
    admission LP allows, the pass with the LP's jobs first if it admits more, then one-for-two
    trades while below the LP's count: stage 1 is skipped when the count meets the LP's), then
    grown (:func:`_grow`)."""
    if model.plain:
        start = admit_by_rule(model.rows)[1]
    else:
        start = count_start(model)[0]
    return _grow(model, start, heuristic) if start else {}


def _grow(model: AllocationModel, start: dict[int, tuple[int, int]], heuristic: Heuristic) -> dict[int, tuple[int, int]]:
    """A feasible plan ``start`` {row: counts} grown by the heuristic (eq. 9 from there: its jobs keep
    their rows and only gain tasks that fit), so reduced-cost fixing has a close incumbent."""
    rows = model.rows
    if not any(c0 < rows.hi[v, 0] or (rows.n_roles[v] == 2 and c1 < rows.hi[v, 1]) for v, (c0, c1) in start.items()):
        return start  # rigid jobs (or every job at its most already): nothing can grow
    if model.plain:
        return heuristic(rows, start)
    return greedy_allocate(rows, start, keep_running=False)[0]


def _reduce(model: AllocationModel, cs: ChoiceSet, row_of: np.ndarray, metrics: dict[str, Any],
            incumbents: list[dict[int, tuple[int, int]]], *, admit: int | None, clock: Deadline,
            backend: ExactBackend | None = None, seed: int | None = None,
            ) -> tuple[ChoiceSet, np.ndarray, LpBound, dict[int, tuple[int, int]]]:
    """Reduced-cost fixing (see :mod:`schedopt.allocation.lagrange`): keep only the
    listed configurations that can be in a plan no worse than the best incumbent.

    ``cs`` the configurations grouped by job, ``row_of`` each one's row; at least
    ``admit`` jobs must run (None: every job); ``incumbents`` are feasible plans
    {row: counts}, the first admitting ``admit`` (or all). Returns the reduced choices,
    their rows, the LP bound (its certificate: the capacity prices) and the best
    incumbent (the LP rounding's and, when many configurations survive, the priced one's
    included), improved by ``backend`` over the jobs the LP and it disagree on
    (:func:`_neighbourhood`) when it is not within the backends' gap of the LP bound."""
    t0 = time.perf_counter()
    first = incumbents[0] if incumbents else {}
    relaxed = lp_bound(model, cs, admit=admit, seed_columns=model.seed_columns(first, cs, row_of) or None)
    lag = relaxed.lp
    candidates = [c for c in incumbents if c and (admit is None or len(c) >= admit)]
    rounded = round_lp(model.by_job, cs, lag.x, admit=admit)
    if rounded is not None:
        candidates.append({int(row_of[k]): (int(cs.counts[k, 0]), int(cs.counts[k, 1])) for k in rounded})
    if not model.plain:  # the typed greedy's LP-guided pass: often the optimum, which the LP then proves
        guided, _ = lp_guided_pass(model, np.bincount(row_of, weights=lag.x, minlength=len(model.job)),
                              model.J if admit is None else admit)
        if guided and len(guided) >= (model.J if admit is None else admit):  # a plan reduced-cost fixing may use
            candidates.append(greedy_allocate(model.rows, guided, keep_running=False)[0])
    best = min(candidates, key=lambda c: (-len(c), model.rows.total_time_s(c)))
    keep = fix_by_reduced_cost(cs, lag, model.rows.total_time_s(best))
    if (backend is not None and best and int(keep.sum()) > NEIGHBOURHOOD_ABOVE
            and (relative_gap(model.rows.total_time_s(best), lag.bound) or 0.0) > CLOSED_BY_LP_GAP):
        better = _neighbourhood(model, backend, cs, row_of, lag.x, keep, best, admit=admit, clock=clock, seed=seed,
                                metrics=metrics)
        if better is not None:
            best = better
            keep = fix_by_reduced_cost(cs, lag, model.rows.total_time_s(best))
    if int(keep.sum()) > PRICED_INCUMBENT_ABOVE and model.rows.closed_form_cost and not clock.expired():
        # many configurations survive: optimus-lagrange's steps over the incumbent's rows (and over the
        # jobs the LP admits) give a closer incumbent, which fixes more
        starts = [best]
        if admit is not None:  # the jobs the LP admits first, each on the row holding most of its LP weight
            mass = np.bincount(row_of, weights=lag.x, minlength=len(model.job))
            starts.append(typed_admission(model, "aware", preference=-mass, moves=GUIDED_EXCHANGE_MOVES,
                                          scan=GUIDED_EXCHANGE_MOVES))
        best = _priced_incumbent(model, starts, clock=clock)
        metrics["incumbent_method"] = "heuristic, LP rounding, then prices and local search over its rows"
        keep = fix_by_reduced_cost(cs, lag, model.rows.total_time_s(best))
    reduced = cs.subset(keep)
    metrics.update({
        "lp_bound": lag.bound, "lp_rounds": lag.rounds, "lp_columns": lag.columns,
        "incumbent": model.rows.total_time_s(best), "after_fixing": int(reduced.K),
        "presolve_seconds": time.perf_counter() - t0,
    })
    return reduced, row_of[keep], relaxed, best


def _neighbourhood(model: AllocationModel, backend: ExactBackend, cs: ChoiceSet, row_of: np.ndarray, x: np.ndarray,
                   keep: np.ndarray, best: dict[int, tuple[int, int]], *, admit: int | None, clock: Deadline,
                   seed: int | None, metrics: dict[str, Any]) -> dict[int, tuple[int, int]] | None:
    """A better incumbent by relaxation-induced neighbourhood search (RINS; Danna, Rothberg and
    Le Pape 2005) over the multiple-choice model: every job on which the LP optimum ``x`` (over
    ``cs``, rows ``row_of``) and the incumbent ``best`` agree (both run it in the same configuration,
    or neither runs it) keeps what they give it; ``backend`` solves the stage model of the other jobs
    (their configurations fixing ``keep`` leaves, in the capacity the kept jobs leave, admitting as
    many as the incumbent does). Returns that plan with the kept jobs' when it costs less than ``best``;
    None when it does not, or when the freed jobs have more than NEIGHBOURHOOD_MAX_CONFIGURATIONS
    configurations (then the search would cost what the stage model does).

    Where the LP is nearly integral it is a small model: on 16,000 typed `gavel` jobs the LP splits
    4 jobs and agrees with the incumbent on all but 10 (28 configurations), and the plan it finds is
    within 4e-6 of the LP bound, against 8e-4 for the incumbent, so fixing keeps fewer configurations."""
    rows = model.rows
    J = len(cs.start) - 1
    mass = np.bincount(cs.job, weights=x, minlength=J)
    whole = np.flatnonzero(x >= 1 - LP_ZERO)  # the LP's one configuration of each job it runs whole
    lp_choice = np.full(J, -1, dtype=np.int64)
    lp_choice[cs.job[whole]] = whole
    at = model.indices(best, cs, row_of)
    if len(at) != len(best):
        return None  # an incumbent configuration the list does not hold (never for the driver's own)
    ours = np.full(J, -1, dtype=np.int64)
    ours[cs.job[at]] = at
    kept = ((ours >= 0) & (lp_choice == ours)) | ((ours < 0) & (mass <= LP_ZERO))
    free = ~kept
    columns = free[cs.job] & keep
    columns[ours[free & (ours >= 0)]] = True  # the incumbent's own configurations, whatever fixing says
    n_free = int(columns.sum())
    if n_free == 0 or n_free > NEIGHBOURHOOD_MAX_CONFIGURATIONS or clock.expired():
        return None
    fixed = ours[kept & (ours >= 0)]
    view = model.by_job
    residual = replace(view, cap=view.cap - cs.use[fixed].sum(axis=0))
    sub = cs.subset(columns)
    position = np.cumsum(columns) - 1  # each kept configuration's position in ``sub``
    every_job = admit is None
    started = time.perf_counter()
    result = backend.solve_stage(residual, sub, stage="time", every_job=every_job,
                                 min_admitted=0 if every_job else max(0, len(best) - len(fixed)),
                                 time_limit=clock.left(), seed=seed,
                                 hint=position[ours[free & (ours >= 0)]].tolist() or None)
    metrics.update({"neighbourhood_jobs": int(free.sum()), "neighbourhood_configurations": n_free,
                    "neighbourhood_seconds": time.perf_counter() - started})
    if result.solution is None:
        return None
    chosen = np.flatnonzero(columns)[result.solution]
    found = {int(row_of[k]): (int(cs.counts[k, 0]), int(cs.counts[k, 1])) for k in np.concatenate([fixed, chosen])}
    cost, before = rows.total_time_s(found), rows.total_time_s(best)
    if len(found) < len(best) or not improves(cost, before):
        return None  # never fewer jobs than the incumbent (the count comes first)
    metrics["neighbourhood_improved"] = before - cost
    return found


def _priced_incumbent(model: AllocationModel, starts: list[dict[int, tuple[int, int]]], *, clock: Deadline
                      ) -> dict[int, tuple[int, int]]:
    """The best of ``starts[0]`` and each start's rows allocated by ``optimus-lagrange``'s
    steps (rows fixed): dual prices, rounding, eq. 9 filling, local search until
    ``clock`` expires. Best: the most jobs, then the least Σ cost."""
    rows = model.rows
    minimums = minimum_counts(rows)

    def key(config: dict[int, tuple[int, int]]) -> tuple[int, float]:
        return -len(config), rows.total_time_s(config)

    best = starts[0]
    for start in starts:
        if not start or clock.expired():
            continue
        members = np.array(sorted(start), dtype=np.int64)
        if np.all(rows.hi[members] == rows.lo[members]):
            priced = start  # rigid rows: their counts are their only configuration
        else:
            priced = allocate_at_prices(rows, members, minimums, max_moves=2000, clock=clock, groups=model.job).config()
        if key(priced) < key(best):
            best = priced
    return best


def _count_minimal_choices(data: AllocationData, oracle: PricingOracle) -> ChoiceSet:
    """Each job's count-minimal configurations (stage 1): the lower bounds for the
    formula forms, the enumerated tables' minimal points for the others."""
    formula = np.setdiff1d(oracle.jobs, oracle.generic)
    generic = enumerate_choices(data, oracle.generic) if len(oracle.generic) else None
    if generic is not None:
        generic = generic.subset(count_minimal(generic))
    job = np.concatenate([formula, generic.job if generic is not None else np.zeros(0, dtype=np.int64)])
    counts = np.concatenate([data.lo[formula] * np.stack([np.ones(len(formula)), data.n_roles[formula] == 2], axis=1).astype(np.int64),
                             generic.counts if generic is not None else np.zeros((0, 2), dtype=np.int64)])
    cost = np.array([float(data.time_s(int(j), int(c[0]), int(c[1]))) for j, c in zip(formula.tolist(), counts[: len(formula)])])
    cost = np.concatenate([cost, generic.cost if generic is not None else np.zeros(0)])
    order = np.argsort(job, kind="stable")
    job, counts, cost = job[order], counts[order], cost[order]
    use = counts[:, 0, None] * data.demand[job, 0] + counts[:, 1, None] * data.demand[job, 1]
    start = np.concatenate([[0], np.cumsum(np.bincount(job, minlength=data.J))])
    return ChoiceSet(job=job, counts=counts, cost=cost, use=use, start=start, enumerated=len(job))


def _reduce_in_price_space(data: AllocationData, oracle: PricingOracle, metrics: dict[str, Any],
                           incumbents: list[dict[int, tuple[int, int]]], admit: int | None = None,
                           close_gap: float | None = None,
                           ) -> tuple[ChoiceSet | None, float, dict[int, tuple[int, int]], Proof]:
    """Reduced-cost fixing without enumerating: the dual's prices (``dual.py``),
    the best incumbent (``optimus-lagrange``'s allocation of the admitted set among
    them), then only the configurations k of job j with L + rc_k <= UB are listed
    (``enumerate_within``). Returns the choices, the bound L, the incumbent and L's
    proof; the choices are None when the incumbent is within ``close_gap`` of L
    (proven: nothing is listed)."""
    t0 = time.perf_counter()
    relaxed = relax_in_price_space(data, admit=admit, oracle=oracle, rel_tol=DUAL_FIXING_REL_TOL, max_iter=200)
    dual = relaxed.result
    candidates = [c for c in incumbents if c and (admit is None or len(c) >= admit)]
    minimums = minimum_counts(data)
    member_sets = {tuple(sorted(c)) for c in candidates}
    if admit is not None:  # the set the dual with the admission row proposes (as optimus-lagrange does)
        proposed = dual_admission(data, admit, minimums, oracle=oracle, dual=dual)
        if proposed is not None:
            member_sets.add(tuple(proposed.tolist()))
    everyone = tuple(oracle.jobs.tolist())
    for members in sorted(member_sets):
        # the dual just solved is the one over every job (no admission row): reused for that set
        solved = (oracle, dual) if admit is None and members == everyone else None
        candidates.append(allocate_at_prices(data, np.array(members, dtype=np.int64), minimums, max_moves=2000,
                                             solved=solved).config())
    best = min(candidates, key=lambda c: data.total_time_s(c))
    incumbent = data.total_time_s(best)
    slack = max(0.0, incumbent - dual.bound)
    priced, _, _ = oracle.price(dual.lam)
    if admit is None:
        threshold = priced + slack
    else:  # rc_k = (priced_k - ν) - min(0, priced_j - ν)
        threshold = slack + dual.nu + np.minimum(0.0, priced - dual.nu)
    if close_gap is not None and (gap := relative_gap(incumbent, relaxed.bound)) is not None and gap <= close_gap:
        # the prices prove the incumbent already: nothing to list (the caller returns it)
        metrics.update({"lp_bound": dual.bound, "lp_rounds": dual.iterations, "lp_method": "lagrangian-dual",
                        "incumbent": incumbent, "presolve_seconds": time.perf_counter() - t0})
        return None, relaxed.bound, best, relaxed.proof
    reduced = enumerate_within(oracle, dual.lam, np.where(np.isfinite(priced), threshold, -np.inf))
    metrics.update({
        "lp_bound": dual.bound, "lp_rounds": dual.iterations, "lp_method": "lagrangian-dual", "incumbent": incumbent,
        "after_fixing": int(reduced.K), "presolve_seconds": time.perf_counter() - t0,
    })
    return reduced, relaxed.bound, best, relaxed.proof


def warm_backend(backend: ExactBackend) -> None:
    """Build and solve ``backend``'s stage model once, on a tiny instance (its imports and first
    compilation: Pyomo's import alone takes 2.5 s), and the branch search once, for
    :func:`schedopt.warm_up`: a tiny instance's solve rarely reaches the model, its LP bound (or size
    classes) proving the heuristic's plan."""
    from schedopt.allocation.branching import warm_up_search
    from schedopt.testing.instances import random_tiny_instance

    model = compile_model(random_tiny_instance(0))
    _, cs, _ = model.choices
    backend.solve_stage(model.by_job, cs, stage="time", every_job=False, min_admitted=0, time_limit=None, seed=0)
    warm_up_search()  # the branch certificate's search, which an optimum only the backend proves runs


def solve_exact(backend: ExactBackend, name: str, instance: Instance, *, time_limit: float | None,
                seed: int | None, options: dict[str, Any],
                compile: Callable[[Instance], AllocationData] = compile_allocation,
                heuristic: Heuristic = _optimus_greedy, branch_proof: bool = True) -> Plan:
    """Solve the multiple-choice allocation model of ``instance`` (``compile`` turns a plain
    instance into arrays; typed, queued and spread ones take the typed rows) with
    ``backend``, anytime; ``heuristic`` grows the plain incumbent. ``branch_proof``: search a
    branch certificate for an optimum only the backend proves (docs/certificates.md).

    Python's cyclic collector is paused for the call (:mod:`schedopt.gcpause`): its full passes
    over the arrays, dicts and Pyomo objects of a large solve cost 0.8 s of 16,000 typed jobs'."""
    with paused_gc():
        return _solve_exact(backend, name, instance, time_limit=time_limit, seed=seed, options=options,
                            compile=compile, heuristic=heuristic, branch_proof=branch_proof)


def _solve_exact(backend: ExactBackend, name: str, instance: Instance, *, time_limit: float | None,
                 seed: int | None, options: dict[str, Any], compile: Callable[[Instance], AllocationData],
                 heuristic: Heuristic, branch_proof: bool) -> Plan:
    """:func:`solve_exact`'s body."""
    check_time_limit(time_limit, name)
    clock = Deadline(time_limit)
    started = clock.started
    model = compile_model(instance, compile)
    data, view = model.rows, model.by_job  # the rows; the job-level view the backends and the LP read
    clock.reserve(FINISH_SECONDS_PER_JOB * model.J)
    metrics: dict[str, Any] = {}
    left, expired = clock.left, clock.expired
    total = data.total_time_s

    def plan(config: dict[int, tuple[int, int]], status: Status, term: Termination, **kw: Any) -> Plan:
        return build_plan(model, solver=name, config=config, status=status, termination=term, started=started,
                          seed=seed, options=options, metrics=metrics, **kw)

    def config_of(chosen: list[int], choices: ChoiceSet, rows_of: np.ndarray) -> dict[int, tuple[int, int]]:
        return {int(rows_of[k]): (int(choices.counts[k, 0]), int(choices.counts[k, 1])) for k in chosen}

    def cheap_bound() -> tuple[float | None, Proof | None]:
        """The heuristics' certified bound for the incumbent's admitted count, when the
        problem's cost is Q_j·step time and the time left (or a small allowance) pays for it."""
        per_job = BOUND_SECONDS_PER_JOB if model.priced_in_closed_form else LISTED_BOUND_SECONDS_PER_JOB
        if not data.closed_form_cost or not (clock.affords_within_tolerance(per_job * model.J)
                                             or per_job * model.J <= BOUND_ALLOWANCE_S):
            return None, None
        admit = None if len(best) == model.J else len(best)
        if model.priced_in_closed_form:
            relaxed = relax_in_price_space(data, admit=admit)
            metrics["bound_method"] = "lagrangian-dual (stopped early)"
            return relaxed.bound, relaxed.proof
        _, cs_all, rows_all = model.choices
        listed = lp_bound(model, cs_all, admit=admit, seed_columns=model.seed_columns(best, cs_all, rows_all) or None)
        metrics["bound_method"] = "lagrangian (LP, column generation; stopped early)"
        return listed.bound, listed.proof

    if model.J == 0:
        return plan({}, Status.OPTIMAL, Termination.OPTIMAL, bound=0.0, admitted_bound=0,
                    proof=lagrangian_proof(data, np.zeros(data.R), names=model.resource_names))

    # the heuristic's plan: the incumbent every phase below must beat
    t0 = time.perf_counter()
    best = _incumbent_config(model, heuristic)
    metrics["heuristic_seconds"] = time.perf_counter() - t0

    # list the configurations, unless the time left cannot pay for it (in price space only
    # the jobs without a closed form are: tables and other forms)
    per_row = np.prod(np.maximum(data.hi - data.lo + 1, 1), axis=1)
    grid = int(per_row.sum())
    listed = int(per_row[price_kinds(data) < 0].sum()) if model.priced_in_closed_form else grid
    if best and not clock.affords(ENUMERATE_SECONDS_PER_CONFIGURATION * listed):
        metrics["stopped_in"] = f"before enumerating {listed:,} configurations"
        early_bound, early_proof = cheap_bound()
        return plan(best, Status.FEASIBLE, Termination.TIME_LIMIT, bound=early_bound, proof=early_proof,
                    message=f"time limit reached before enumerating {listed:,} configurations "
                            f"(about {ENUMERATE_SECONDS_PER_CONFIGURATION * listed:.2g} s); the heuristic's plan is returned")
    oracle: PricingOracle | None = None
    cs: ChoiceSet | None = None
    row_of = rows_cs = None
    if model.priced_in_closed_form:  # nothing listed: the jobs are priced (dual.py)
        oracle = PricingOracle(data)
        base, _, _ = oracle.price(np.zeros(data.R))
        candidates = int((oracle.owned & np.isfinite(base)).sum())
        metrics.update({"configurations": grid})
    else:
        rows_cs, cs, row_of = model.choices
        candidates = int(len(np.unique(cs.job)))
        metrics.update({"configurations": int(rows_cs.enumerated), "after_pruning": int(cs.K)})
    if candidates == 0:
        return plan({}, Status.INFEASIBLE, Termination.INFEASIBLE, admitted_bound=0,
                    message="no job can run: none has an allowed configuration that fits the cluster")

    def stopped(message: str, *, bound: float | None = None, admitted_bound: int | None = None,
                admit_proven: bool = False, term: Termination = Termination.TIME_LIMIT, note: str | None = None,
                proof: Proof | None = None) -> Plan:
        """The incumbent ``best``, proven optimal when it meets ``bound``."""
        metrics["stopped_in"] = message
        if bound is None and best:
            bound, proof = cheap_bound()
        gap = relative_gap(total(best), bound)
        kw = {"admitted_bound": admitted_bound, "admitted_proof": admitted_proof}
        if best and admit_proven and gap is not None and gap <= CLOSED_BY_LP_GAP:  # the incumbent meets the bound: proven
            return plan(best, Status.OPTIMAL, Termination.OPTIMAL, bound=bound, proof=proof, **kw)
        if not best:
            return plan({}, Status.TIME_LIMIT, Termination.TIME_LIMIT, message=f"time limit reached {message}; no plan",
                        **kw)
        return plan(best, Status.FEASIBLE, term, bound=bound, proof=proof,
                    message=note or f"time limit reached {message}; the best plan found is returned", **kw)

    backend_proof = Proof(kind="backend", backend=getattr(backend, "label", type(backend).__name__))
    admitted_proof: Proof | None = None  # read by stopped() when it is called

    every_job = candidates == model.J and (len(best) == model.J or (model.plain and all_fit_at_minimum(data)))
    k_min, most, admit_proven = model.J, model.J, True
    stage1_incumbent: dict[int, tuple[int, int]] = {}
    if not every_job:
        if expired():
            return stopped("before stage 1 (max admitted jobs)")
        # stage 1 needs only each row's count-minimal configurations: a job admitted in any
        # configuration fits in one of those too (demands are non-negative)
        if cs is not None:
            keep = count_minimal(rows_cs)  # type: ignore[arg-type]
            cs_min, rows_min = cs.subset(keep), row_of[keep]  # type: ignore[index]
        else:
            cs_min = _count_minimal_choices(data, oracle)  # type: ignore[arg-type]
            rows_min = cs_min.job
        metrics["admit_configurations"] = int(cs_min.K)
        hint = model.indices(model.minimum_configs(best), cs_min, rows_min) or None  # type: ignore[arg-type]
        count_proven = bool(best) and admitted_bound(model)[1] is not None and admitted_bound(model)[0] <= len(best)
        if count_proven:  # the admission LP's prices prove the incumbent admits the most jobs: no stage-1 model
            s1 = StageResult(Termination.OPTIMAL, None, info={"skipped": "the admission LP proves the incumbent's count"})
        elif not clock.affords(getattr(backend, "seconds_per_choice", 0.0) * cs_min.K):
            s1 = StageResult(Termination.TIME_LIMIT, None, info={"skipped": "too little time left to build the model"})
        else:
            ceiling, ceiling_proof = admitted_bound(model)
            s1 = backend.solve_stage(view, cs_min, stage="admit", every_job=False, min_admitted=0,
                                     time_limit=left(), seed=seed, hint=hint,
                                     max_admitted=ceiling if ceiling_proof is not None else None)
        metrics.update({f"admit_{k}": v for k, v in s1.info.items()})
        if s1.termination == Termination.INFEASIBLE and s1.solution is None and not best:
            return plan({}, Status.INFEASIBLE, s1.termination, message=no_plan_message("stage 1 (max admitted jobs)", s1))
        admit_proven = s1.termination == Termination.OPTIMAL and (s1.solution is not None or count_proven)
        if s1.solution is not None and len(s1.solution) > len(best):
            stage1_config = config_of(s1.solution, cs_min, rows_min)
        else:  # the heuristic admits as many (or the backend found nothing): start from its admitted set
            stage1_config = model.minimum_configs(best)  # type: ignore[assignment]
        k_min = len(stage1_config)
        count, count_proof = admitted_bound(model)  # a replayable proof when the LP's prices suffice
        if admit_proven:
            most = k_min
            admitted_proof = count_proof if count <= k_min and count_proof is not None else backend_proof
        elif s1.bound is not None and count_proof is None:  # no LP count: only the backend's bounds it
            most = max(k_min, floor_count(s1.bound))
            admitted_proof = backend_proof
        else:  # not proven: the LP's replayable count is stated, a backend's kept beside it
            most = max(k_min, count)
            admitted_proof = count_proof
            if s1.bound is not None:
                metrics["backend_admitted_bound"] = max(k_min, floor_count(s1.bound))
        if k_min == 0:
            return plan({}, Status.INFEASIBLE, Termination.INFEASIBLE, admitted_bound=most,
                        admitted_proof=admitted_proof, message="no job fits the cluster at its minimum")
        if len(best) < k_min:  # stage 1 admits more: its plan, grown by the heuristic, is the better incumbent
            best = _grow(model, stage1_config, heuristic)
        stage1_incumbent = stage1_config
        if expired():
            return stopped("after stage 1 (max admitted jobs)", admitted_bound=most)

    lp_x = lp_basis = None  # the LP's optimum over the listed configurations (model.choices), where listed, and its basis
    if cs is None:
        if expired() or not clock.affords(REDUCE_SECONDS_PER_JOB * model.J):
            return stopped(f"before the dual bound and reduced-cost fixing (about {REDUCE_SECONDS_PER_JOB * model.J:.2g} s "
                           f"for {model.J:,} jobs)", admitted_bound=most)
        incumbents = [best] if every_job or len(best) >= k_min else []
        if not every_job:
            incumbents.append(stage1_incumbent)
        cs, bound_lp, reduced_best, lp_proof = _reduce_in_price_space(  # type: ignore[arg-type]
            data, oracle, metrics, incumbents, admit=None if every_job else k_min,
            close_gap=CLOSED_BY_LP_GAP if admit_proven else None)
        row_of_reduced = cs.job if cs is not None else None
        if len(reduced_best) >= len(best) or cs is None:
            best = reduced_best
    else:
        if expired() or not clock.affords(LP_SECONDS_PER_CHOICE * cs.K):
            return stopped(f"before the LP bound (about {LP_SECONDS_PER_CHOICE * cs.K:.2g} s for {cs.K:,} configurations)",
                           admitted_bound=most)
        cs, row_of_reduced, relaxed, best = _reduce(model, cs, row_of, metrics, [best, stage1_incumbent],  # type: ignore[arg-type]
                                                    admit=None if every_job else k_min, clock=clock,
                                                    backend=backend, seed=seed)
        bound_lp, lp_proof = relaxed.bound, relaxed.proof
        lp_x, lp_basis = relaxed.lp.x, relaxed.lp.basis
    incumbent_gap = relative_gap(total(best), bound_lp) if best else None
    if admit_proven and (cs is None or (incumbent_gap is not None and incumbent_gap <= CLOSED_BY_LP_GAP)):
        # the LP's prices already prove the incumbent within the exact stage's own gap: no model to build
        metrics["stopped_in"] = "after the LP bound (the incumbent meets it)"
        return plan(best, Status.OPTIMAL, Termination.OPTIMAL, bound=bound_lp, admitted_bound=most,
                    proof=lp_proof, admitted_proof=admitted_proof)
    tightens = False  # whether the size classes' ranges cut the LP's optimum (then rows of the stage model)
    if (admit_proven and compile is compile_allocation and best and len(best) == k_min
            and incumbent_gap is not None and incumbent_gap > REPLAYABLE_GAP):
        # (closer, the stage model closes it sooner than the class LP at scale) the count row's gap in how
        # many jobs of each size fit: the LP with the size classes' ranges (size_classes.py) often has the
        # optimum itself as its optimum, and proves it; not solved where the LP keeps every class in range
        # (priced in closed form, with no LP optimum over listed configurations: small instances only)
        classes = size_class_proof(model, admit=None if every_job else k_min, lp_x=lp_x, lp_basis=lp_basis,
                                   max_configurations=MAX_CLASS_CONFIGURATIONS if lp_x is not None
                                   else COLD_CLASS_CONFIGURATIONS)
        if classes is not None:
            # the ranges lift the LP's bound: as rows of the stage model below they lift its relaxation too
            tightens = classes.bound - bound_lp > REPLAYABLE_GAP * max(1.0, abs(bound_lp))
            lp_plan = classes.plan
            if (lp_plan is not None and len(lp_plan) >= len(best) and fits(data.usage(lp_plan), 0.0, data.cap)
                    and improves(total(lp_plan), total(best))):
                best = lp_plan
                metrics["size_class_plan"] = "the LP with the size classes' ranges has an integral optimum: the incumbent"
            classes_gap = relative_gap(total(best), classes.bound)
            if classes_gap is not None and classes_gap <= CLOSED_BY_LP_GAP:
                metrics.update(classes.info)
                metrics["stopped_in"] = "after the size classes' bound (the incumbent meets it)"
                return plan(best, Status.OPTIMAL, Termination.OPTIMAL, bound=classes.bound, admitted_bound=most,
                            proof=classes.proof, admitted_proof=admitted_proof)
    build_s = getattr(backend, "seconds_per_choice", 0.0) * cs.K
    if expired() or not clock.affords(build_s):
        return stopped(f"after the LP bound (building the model would take about {build_s:.2g} s for {cs.K:,} configurations)",
                       bound=bound_lp, admitted_bound=most, admit_proven=admit_proven, proof=lp_proof)
    # the size classes' ranges for plans admitting k_min as rows of the stage model, where they lift the
    # LP's bound by more than REPLAYABLE_GAP (100 typed jobs under the average-JCT objective: HiGHS's root
    # 80-120 -> 20-25 ms); where the LP is nearly tight already they only cost (1,000 jobs: 93 -> 113 ms)
    rows_of_classes = class_rows(model, cs, admit=None if every_job else k_min) if tightens else None
    s2 = backend.solve_stage(view, cs, stage="time", every_job=every_job, min_admitted=k_min,
                             time_limit=left(), seed=seed, hint=model.indices(best, cs, row_of_reduced) or None,
                             classes=rows_of_classes)
    if rows_of_classes is not None:
        metrics["size_class_rows"] = len(rows_of_classes.lo)
    metrics.update(s2.info)
    # the LP's prices prove its bound; a higher bound only the backend's branch and bound proved,
    # stated only for an optimum the backend proves (settled_bound), else kept in the metrics
    if s2.bound is not None and s2.bound > bound_lp:
        metrics["backend_bound"] = s2.bound
    found = None if s2.solution is None else config_of(s2.solution, cs, row_of_reduced)
    best_cost = total(best)
    if (s2.termination == Termination.OPTIMAL and found is not None and s2.bound is not None and best
            and worse(total(found), best_cost)):
        # the model holds only configurations that can beat the incumbent (reduced-cost fixing against
        # it, to rounding): its optimum above the incumbent's cost proves the incumbent optimal
        found = best
        s2 = StageResult(s2.termination, s2.solution, s2.value, min(s2.bound, best_cost), s2.info)
        metrics["backend_note"] = "the backend's optimum over the configurations left is not below the incumbent"
    if found is None or worse(total(found), best_cost):
        if s2.termination == Termination.ERROR:
            metrics["backend_note"] = no_plan_message("stage 2 (min Σ cost)", s2)
        return stopped("in stage 2 (min Σ cost)", bound=bound_lp, admitted_bound=most, admit_proven=admit_proven,
                       proof=lp_proof,
                       term=s2.termination if s2.termination != Termination.OPTIMAL else Termination.TIME_LIMIT,
                       note="stage 2 (min Σ cost) did not improve on the incumbent in time; the incumbent is returned")
    proven = s2.termination == Termination.OPTIMAL and admit_proven
    status = Status.OPTIMAL if proven else Status.FEASIBLE
    term = s2.termination if admit_proven else Termination.TIME_LIMIT
    bound, proof = settled_bound(instance, total(found), len(found), lp_bound=bound_lp, lp_proof=lp_proof,
                                 stage=s2, backend_proof=backend_proof, proven=proven, clock=clock, metrics=metrics,
                                 branch=branch_proof and compile is compile_allocation,
                                 allowed_at_least=model.allowed_at_least,
                                 model=model if compile is compile_allocation else None)
    return plan(found, status, term, bound=bound, admitted_bound=most, proof=proof,
                admitted_proof=admitted_proof)
