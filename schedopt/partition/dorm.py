"""The driver shared by Dorm's exact models: presets, budgets, Dorm's
infeasibility rule, and turning a backend's answer into a Plan."""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.deadline import Deadline, check_time_limit
from schedopt.errors import InputError
from schedopt.instance import Instance, Policy
from schedopt.partition.checker import check_partition
from schedopt.partition.lagrange import dorm_lagrangian
from schedopt.partition.relaxation import utilization_relaxation
from schedopt.partition.problem import (
    PartitionData,
    budgets,
    build_plan,
    compile_partition,
    container_shapes,
    drf_containers,
    first_fit,
)
from schedopt.packing import maximal_patterns
from schedopt.partition.colgen import Columns, generate_columns, round_columns
from schedopt.partition.model import (DormBackend, DormSolution, DormModel, decode_patterns, dff_cuts, fill_up,
                                      p2_feasible, pack_classes)
from schedopt.plan import Plan, Proof, Status, Termination
from schedopt.results import StageResult
from schedopt.tolerances import DORM_ROUND_GAP, IMPROVE_TOL, REPLAYABLE_GAP, improves

#: DESIGN.md presets: (θ1 fairness, θ2 adjustment)
PRESETS = {"dorm-1": (0.2, 0.1), "dorm-2": (0.1, 0.2), "dorm-3": (0.1, 0.1)}


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


#: under a time limit, the share the dorm-lagrangian bound's column generation may take
#: (before the backend, which gets what is left); in class mode only with at most MAX_SHAPES
#: container shapes: with Alibaba's 50-68 its knapsacks took the backend's time (200 apps on
#: 400 nodes: the backend then found no plan in 60 s)
LAGRANGE_SHARE = 0.25
#: ``mode: auto`` solves the per-server model up to this many (application, server) pairs
AUTO_PAIRS = 2000
#: class mode adds exact packing patterns when there are at most this many container
#: shapes and each class has at most this many maximal patterns
MAX_SHAPES = 24
MAX_PATTERNS = 3000
#: under a time limit, a class round takes at most this share of the time left (the
#: last round all of it), so a hard relaxation still leaves time to pack and re-solve
ROUND_SHARE = 0.5
#: with too many shapes to enumerate patterns, column generation takes at most this share
#: of the time limit; the restricted class model gets the rest but FINISH_SHARE (decoding
#: and filling up) and BOUND_SHARE (below)
COLGEN_SHARE = 0.6
FINISH_SHARE = 0.05
#: after a plan from generated patterns, the class relaxation runs for a tighter bound in
#: the time left (BOUND_SHARE of the limit is kept for it), if at least BOUND_MIN_SECONDS
BOUND_SHARE = 0.2
BOUND_MIN_SECONDS = 0.5
#: relative gap at which a class round stops: the packing loses far more, and the
#: time goes to the next rounds (the bound reported is still the backend's proven one)
ROUND_GAP = DORM_ROUND_GAP


def enumerate_patterns(d: PartitionData, classes: list[np.ndarray], shapes: np.ndarray) -> list[np.ndarray] | None:
    """Every maximal packing pattern (P_c, T) of each class, or None when there are
    more than MAX_SHAPES shapes or some class more than MAX_PATTERNS patterns."""
    if len(shapes) > MAX_SHAPES:
        return None
    patterns = []
    for servers in classes:
        pc = maximal_patterns(shapes, d.cap[servers[0]], limit=MAX_PATTERNS)
        if pc is None:
            return None
        patterns.append(pc)
    return patterns


def solve_by_classes(backend: DormBackend, model: DormModel, classes: list[np.ndarray], *,
                     time_limit: float | None, seed: int | None, rounds: int = 12) -> StageResult[DormSolution]:
    """Counts first, packing second. P2 on the class relaxation gives a proven
    upper bound U (``PartitionData.aggregate``); its counts are packed onto the
    servers. If everything fits, the plan's utilization equals U: optimal. If
    containers are left out and the plan still meets P2, it is returned with
    the bound U (the gap is what packing lost). Otherwise each class that lost
    containers is shrunk by their demand and the relaxation solved again
    (still within the time limit); U stays the first round's bound.

    With exact packing patterns (few shapes: all maximal ones; many shapes and no
    previous containers: those column generation priced in, ``colgen``) the
    counts decode into servers exactly. With generated patterns the class model
    is restricted, so U is column generation's bound instead."""
    d = model.data
    clock = Deadline(time_limit)
    cap = d.aggregate(classes).cap.copy()
    info: dict[str, Any] = {"mode": "classes", "classes": len(classes)}
    # exact packing patterns per class: all maximal ones when the container shapes are few
    # enough to enumerate, else the ones column generation prices in (no previous containers)
    shapes, shape_of = container_shapes(d)
    patterns = enumerate_patterns(d, classes, shapes)
    generated: Columns | None = None
    if patterns is None and not d.prev.any():
        share = None if time_limit is None else COLGEN_SHARE * time_limit
        generated = generate_columns(model, classes, shapes, shape_of, time_limit=share, seed=seed,
                                     start=[first_fit(d, model.fair)])
        info.update(generated.info)
        if generated.feasible and any(len(p) for p in generated.patterns):
            patterns = generated.patterns
        else:
            generated = None
    cuts = dff_cuts(d, classes)  # valid for the whole classes: round 0 only (later rounds shrink capacity)
    info["packing_cuts"] = len(cuts)
    bound: float | None = None
    best: np.ndarray | None = None
    if generated is not None:  # the master LP rounded: a plan whatever the backend does in time
        rounded = round_columns(model, classes, generated, shape_of)
        if rounded is not None and p2_feasible(model, rounded):
            best = rounded
            info["lp_rounding_utilization"] = float(d.util @ rounded.sum(axis=1))
    term = Termination.ERROR
    for k in range(rounds):
        left = clock.remaining()
        if left is not None and left <= 0.05:
            term = Termination.TIME_LIMIT
            break
        if left is not None and generated is not None:
            # generated patterns decode exactly: one round, then fill up, then the class bound
            left = max(0.05, left - FINISH_SHARE * left - BOUND_SHARE * time_limit)
        elif left is not None and k < rounds - 1:
            left *= ROUND_SHARE  # keep time for packing and for the rounds after this one
        agg = d.aggregate(classes)
        agg.cap = cap
        res = backend.solve_model(DormModel(agg, model.fair, model.fairness_budget, model.adjustment_budget,
                                            patterns=patterns, shape_of=shape_of if patterns else None,
                                            class_size=[len(c) for c in classes] if patterns else None,
                                            class_cuts=cuts if k == 0 else None),
                                  time_limit=left, seed=seed, rel_gap=ROUND_GAP)
        info["patterns"] = None if patterns is None else int(sum(len(p) for p in patterns))
        info[f"round{k}_seconds"] = clock.spent()
        if k == 0:
            # with generated patterns the backend's bound is only the restricted model's:
            # the proven one is column generation's
            bound = res.bound if generated is None else (
                None if generated.bound is None else min(generated.bound, trivial_bound(d)))
            term = res.termination
            if res.solution is None and best is None:
                return StageResult(res.termination, bound=None if generated is None else bound,
                                   info={**info, **res.info})
        if res.solution is None:
            break
        counts = res.solution.x  # (A, classes)
        x = None
        if patterns is not None and res.solution.z is not None:
            x = decode_patterns(d, classes, counts, res.solution.z, patterns, shape_of)
        if x is None:
            x = pack_classes(d, classes, counts)
        lost = counts - np.stack([x[:, c].sum(axis=1) for c in classes], axis=1)
        info["rounds"] = k + 1
        if lost.sum() > 0:  # put what did not fit anywhere it fits, then use what is left
            x = fill_up(model, fill_up(model, x, targets=counts.sum(axis=1)))
        elif generated is not None:  # the restricted patterns may leave room: use it
            x = fill_up(model, x)
        if p2_feasible(model, x) and (best is None or d.util @ x.sum(axis=1) > d.util @ best.sum(axis=1)):
            best = x
        if lost.sum() == 0:
            break
        cap = cap - (lost.T.astype(float) @ d.demand)  # shrink each class by what did not fit
    if best is None:
        return StageResult(Termination.TIME_LIMIT if term == Termination.TIME_LIMIT else Termination.ERROR,
                           info={**info, "note": "no packing of the class counts met P2"})
    value = float(d.util @ best.sum(axis=1))

    def meets(b: float | None) -> bool:  # the plan's value reaches the proven bound b
        return b is not None and not improves(value, b)

    proven = term == Termination.OPTIMAL and meets(bound)
    if generated is not None and not proven:
        # the pattern LP's bound is fractional in n: the class relaxation (integer counts) can
        # close it, in the time left (without a limit: at most the time spent so far)
        spent = clock.spent()
        left = spent if time_limit is None else (1 - FINISH_SHARE) * (time_limit - spent) - 0.1
        if left > BOUND_MIN_SECONDS:
            res = backend.solve_model(DormModel(d.aggregate(classes), model.fair, model.fairness_budget,
                                                model.adjustment_budget, class_cuts=cuts),
                                      time_limit=left, seed=seed, rel_gap=ROUND_GAP)
            info["class_relaxation_bound"] = res.bound
            if res.bound is not None and res.termination != Termination.ERROR:
                bound = res.bound if bound is None else min(bound, res.bound)
                if meets(bound):  # a plan that meets a proven bound is optimal
                    proven, term = True, Termination.OPTIMAL
    if proven:
        note = None
    elif generated is not None:
        note = ("counts by server class on generated packing patterns, then filled up: the bound is "
                "column generation's (Farley's bound on the pattern LP)")
    else:
        note = "counts by server class, then packed: the bound is the class relaxation's"
    return StageResult(term, DormSolution(best), bound=bound, info=info, proven=proven, note=note)


def solve_dorm(backend: DormBackend, name: str, instance: Instance, *, theta: tuple[float, float],
               time_limit: float | None, seed: int | None, options: dict[str, Any], mode: str = "auto") -> Plan:
    check_time_limit(time_limit, name)
    clock = Deadline(time_limit)
    started = clock.started
    data = compile_partition(instance)
    b1, b2 = budgets(data, *theta)
    model = DormModel(data=data, fair=drf_containers(data), fairness_budget=b1, adjustment_budget=b2)
    if mode not in ("auto", "servers", "classes"):
        raise InputError(name, f'mode: expected "auto", "servers" or "classes", got {mode!r}')
    opts = {**options, "mode": mode, "fairness_threshold": theta[0], "adjustment_threshold": theta[1]}
    metrics = {"fairness_budget": b1, "adjustment_budget": b2}
    if data.A == 0:
        return build_plan(data, np.zeros((0, data.S), dtype=np.int64), solver=name, status=Status.OPTIMAL,
                          termination=Termination.OPTIMAL, started=started, bound=0.0, seed=seed, fair=model.fair,
                          options=opts, metrics=metrics, proof=utilization_relaxation(data)[1])
    classes = data.server_classes()
    by_classes = mode == "classes" or (mode == "auto" and len(classes) < data.S and data.A * data.S > AUTO_PAIRS)
    metrics["mode"] = "classes" if by_classes else "servers"
    impossible = bool(np.any(data.ub.sum(axis=1) < data.n_min))
    # anytime: weighted DRF packed first-fit is the incumbent when it meets P2's budgets. Under a
    # time limit it is built before the backend runs, so the backend gets only the time left;
    # without one, only when the backend has not proven optimality (below)
    incumbent = None if impossible or time_limit is None else _drf_incumbent(data, model, name, opts, started, seed)
    lagrangian = None
    priceable = not by_classes or len(container_shapes(data)[0]) <= MAX_SHAPES
    if not impossible and priceable:
        # class mode with many shapes keeps column generation's (Farley's) bound: there one server's
        # knapsack over the priced shapes is more than the replay can search
        share = None if time_limit is None else LAGRANGE_SHARE * time_limit
        lagrangian = dorm_lagrangian(data, theta, time_limit=share, bound_time_s=share or 0.0, seed=seed)
        if lagrangian is not None:
            metrics.update(lagrangian.info)
        else:
            metrics["lagrangian"] = "no LP solved within its share of the time limit: no dorm-lagrangian bound"
    left = clock.remaining()
    if impossible:
        res = StageResult(Termination.INFEASIBLE, info={"reason": "an application's n_min exceeds what the servers can hold"})
    elif left is not None and left <= 0.01:
        res = StageResult(Termination.TIME_LIMIT, info={"reason": "the time limit was spent before the backend could start"})
    elif by_classes:
        res = solve_by_classes(backend, model, classes, time_limit=left, seed=seed)
    else:
        res = backend.solve_model(model, time_limit=left, seed=seed)
    metrics.update(res.info)
    found = None if res.solution is None else res.solution.x
    backend_proved = found is not None and res.termination == Termination.OPTIMAL and res.proven
    proof = None
    if res.termination != Termination.INFEASIBLE:
        # the replayable bounds: the servers' packings and both budgets priced (dorm-lagrangian),
        # else the cluster total's relaxation. The backend's is stated instead only when it alone
        # proves the plan optimal (check --strict then names it) or, in class mode with more shapes
        # than the replay prices (no dorm-lagrangian attempted), when it is tighter; either way it
        # is kept in metrics.backend_bound. A plan the replay could price states a replayable
        # bound even when the backend's is tighter: its claims are then all checkable
        relaxed, relaxed_proof = utilization_relaxation(data)
        replayable = (relaxed, relaxed_proof)
        priced = lagrangian is not None and lagrangian.bound < relaxed
        if priced:
            replayable = (lagrangian.bound, lagrangian.proof)
        if res.bound is not None:
            metrics["backend_bound"] = res.bound
        if (backend_proved and not _meets(data, found, replayable[0])) or (
                not priceable and res.bound is not None and res.bound < replayable[0]):
            # class mode with many shapes: the backend's (or column generation's) is stated when tighter
            by = getattr(backend, "label", type(backend).__name__)
            if any(k.startswith("colgen_") for k in res.info):
                by += " (column generation: Farley's bound on the pattern LP)"
            proof = Proof(kind="backend", backend=by)
            metrics["bound_source"] = "the backend's proof (tighter than any replayable bound computed)"
        else:
            res.bound, proof = replayable
            metrics["bound_source"] = ("dorm-lagrangian: the servers' packings and both budgets priced"
                                       if proof.kind == "dorm-lagrangian" else
                                       "the relaxation over the cluster total (Lagrangian prices in the certificate)")
    def replayed_optimal(x: np.ndarray | None) -> bool:  # x meets the bound check replays
        return x is not None and proof is not None and proof.kind != "backend" and _meets(data, x, res.bound)

    proven_optimal = backend_proved or replayed_optimal(found)
    if res.termination == Termination.INFEASIBLE or proven_optimal:
        incumbent = None  # nothing beats a proven optimum, and nothing meets an infeasible P2
    elif time_limit is None:
        incumbent = _drf_incumbent(data, model, name, opts, started, seed)
    if incumbent is not None and (
            found is None or float(data.util @ incumbent.sum(axis=1)) > float(data.util @ found.sum(axis=1)) + IMPROVE_TOL):
        note = ("the backend found no plan in time" if found is None else "the backend's plan was worse")
        return build_plan(data, incumbent, solver=name,
                          status=Status.OPTIMAL if replayed_optimal(incumbent) else Status.FEASIBLE,
                          termination=res.termination if res.termination != Termination.OPTIMAL else Termination.TIME_LIMIT,
                          started=started, bound=res.bound, seed=seed, fair=model.fair, options=opts, metrics=metrics,
                          message=f"{note}: weighted DRF packed first-fit (within both budgets) is returned", proof=proof)
    if found is None:
        if res.termination == Termination.INFEASIBLE:
            # Dorm §IV-B: no feasible allocation -> keep the existing one
            return build_plan(data, data.prev.copy(), solver=name, status=Status.KEPT_PREVIOUS,
                              termination=Termination.INFEASIBLE, started=started, seed=seed, fair=model.fair,
                              options=opts,
                              metrics=metrics, message="P2 is infeasible: the previous placement is kept (Dorm §IV-B)")
        if res.termination == Termination.TIME_LIMIT and data.prev.any():
            # as Dorm does when it cannot decide: the running placement stays
            return build_plan(data, data.prev.copy(), solver=name, status=Status.KEPT_PREVIOUS,
                              termination=Termination.TIME_LIMIT, started=started, seed=seed, fair=model.fair,
                              options=opts, metrics=metrics,
                              message="no plan within the time limit: the previous placement is kept")
        status = Status.TIME_LIMIT if res.termination == Termination.TIME_LIMIT else Status.INFEASIBLE
        return build_plan(data, None, solver=name, status=status, termination=res.termination, started=started,
                          seed=seed, fair=model.fair, options=opts, metrics=metrics,
                          message=f"no plan: the backend stopped ({res.termination.value})")
    status = Status.OPTIMAL if proven_optimal else Status.FEASIBLE
    return build_plan(data, found, solver=name, status=status, termination=res.termination, started=started,
                      bound=res.bound, seed=seed, fair=model.fair, options=opts, metrics=metrics, message=res.note,
                      proof=proof)


def _meets(data: PartitionData, x: np.ndarray, bound: float | None) -> bool:
    """The placement x's utilization is within REPLAYABLE_GAP of the proven ``bound``: x is optimal
    (the dorm-lagrangian bound carries λ1·REL_TOL of the checker's slack on the fairness budget,
    a few 1e-8 above an optimum it proves)."""
    if bound is None:
        return False
    value = float(data.util @ x.sum(axis=1))
    return bound <= value + REPLAYABLE_GAP * max(1.0, abs(value))


def trivial_bound(data: PartitionData) -> float:
    """Σ_k min(1, Σ_i n_max_i·d_ik / C_k): each resource's utilization is at most
    1 and at most what every application at n_max would use. An upper bound on
    Σ_k u_k (Dorm eq. 1)."""
    total = data.cap.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        most = np.where(total > 0, (data.n_max[:, None] * data.demand).sum(axis=0) / np.where(total > 0, total, 1.0), 0.0)
    return float(np.minimum(most, 1.0).sum())


def _drf_incumbent(data: PartitionData, model: DormModel, name: str, opts: dict[str, Any], started: float,
                   seed: int | None) -> np.ndarray | None:
    """The best of two packings of weighted DRF's whole-container counts that
    satisfies P2 (n_min, n_max, both budgets, capacity), or None: first-fit of the
    DRF counts, and first-fit of every application's n_min before the rest of its
    DRF count (so fragmentation cannot starve an application below n_min)."""
    fair = model.fair
    x_direct = first_fit(data, fair)
    x_min = first_fit(data, np.minimum(data.n_min, fair).astype(np.int64) if fair.sum() else data.n_min)
    load = x_min.T @ data.demand  # (S, R)
    x_two = x_min + first_fit(data, np.maximum(fair - x_min.sum(axis=1), 0), load=load)
    best = None
    for x in (x_direct, x_two):
        trial = build_plan(data, x, solver=name, status=Status.FEASIBLE, termination=Termination.TIME_LIMIT,
                           started=started, seed=seed, fair=fair, options=opts)
        if not check_partition(data.instance, trial) and (best is None or data.util @ x.sum(axis=1) > data.util @ best.sum(axis=1)):
            best = x
    return best
