"""Exact placement, shared by ``placement-milp`` (Pyomo + HiGHS) and
``placement-cpsat`` (OR-Tools CP-SAT), and a brute force for tiny instances.

Data per job j (DESIGN.md): p_j PS and w_j workers, model size S_j (MB),
bandwidths B_ps, B_worker (MB/s); per-unit transfer coefficients
c_ps = S/(p·B_ps) and c_w = S/(p·B_worker) (seconds per remote peer).
Per server k: capacity C_kr.

Variables: x_j (job placed), P_jk, W_jk (tasks of j on k), a_jk, b_jk (k hosts
a PS / a worker of j), T_j (seconds per step).

Lexicographic, in two solves (DESIGN.md): first maximise Σ_j x_j; then, with
Σ_j x_j held at that optimum, minimise the chosen objective:
``sum`` Σ_j T_j (default), ``max`` max_j T_j, or ``cross_pairs``
Σ_j (p_j·w_j·x_j - Σ_k P_jk·W_jk) (DLTAP's count).

Jobs already running (``previous``, old counts P°_jk, W°_jk) add a stage
between the two with ``moves="first"`` (default): minimise the moved tasks

    M = Σ_{j running} ( x_j·(min(p_j, ΣP°_j) + min(w_j, ΣW°_j)) - Σ_k (KP_jk + KW_jk) ),
    KP_jk <= P_jk, KP_jk <= P°_jk,  KW_jk <= W_jk, KW_jk <= W°_jk

(KP, KW: tasks kept in place), then minimise the objective with M held at
that minimum: tasks stay where they run unless moving them is needed to place
the most jobs. ``moves="ignore"`` re-places from scratch.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any, Literal, Protocol

import numpy as np

from schedopt.deadline import Deadline, check_time_limit
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.classes import ClassModel, build_class_model
from schedopt.placement.incremental import place_keeping
from schedopt.placement.price_guided import guided_place
from schedopt.placement.problem import (TOL, JobPlacement, PlacementData, build_plan, coefficients, compile_placement,
                                       cross_pairs, movement_metrics, objective_value, transfer_time_s)
from schedopt.claims import TooLargeToReplay
from schedopt.placement.relaxation import (MAX_CLASSES, Threshold, branch_certificate, minmax_bounds,
                                          pattern_certificates, solve_class_lp)
from schedopt.plan import Certificate, Plan, Proof, Status, Termination, relative_gap
from schedopt.results import StageResult
from schedopt.tolerances import BRANCH_TARGET_MARGIN, IMPROVE_TOL, OPTIMAL_GAP, TINY

Objective = Literal["sum", "max", "cross_pairs"]
OBJECTIVES = ("sum", "max", "cross_pairs")
MOVES = ("first", "ignore")
MODELS = ("auto", "classes", "servers")


#: a placement stage's solution: PS and worker counts per job and server, (P, W), each (J, S)
Counts = tuple[np.ndarray, np.ndarray]


class PlacementBackend(Protocol):
    def solve_stage(self, data: PlacementData, *, stage: str, objective: Objective, min_placed: int,
                    time_limit: float | None, seed: int | None, max_moved: int | None = None) -> StageResult[Counts]: ...

    def solve_classes(self, data: PlacementData, cm: ClassModel, *, stage: str, objective: Objective, min_placed: int,
                      time_limit: float | None, seed: int | None) -> StageResult[Counts]: ...


def dense_previous(data: PlacementData) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(P°, W°) (J, S) running tasks per server and base (J,) = min(p, ΣP°) +
    min(w, ΣW°), the most tasks of j that can stay; None when no job runs."""
    if data.prev is None:
        return None
    P0 = np.zeros((data.J, data.S), dtype=np.int64)
    W0 = np.zeros((data.J, data.S), dtype=np.int64)
    for j, old in enumerate(data.prev):
        if old is not None:
            P0[j, old[0]], W0[j, old[0]] = old[1], old[2]
    base = np.minimum(data.counts[:, 0], P0.sum(axis=1)) + np.minimum(data.counts[:, 1], W0.sum(axis=1))
    return P0, W0, base


def moved_tasks(data: PlacementData, where: list[JobPlacement | None]) -> int:
    """M of a placement: tasks of placed running jobs that could have stayed and did not."""
    return movement_metrics(data, where)["moved_tasks"] if data.prev is not None else 0


def decode(P: np.ndarray, W: np.ndarray) -> list[JobPlacement | None]:
    """Per-job sparse placements from dense (J, S) counts; jobs with no task are paused."""
    where: list[JobPlacement | None] = []
    for j in range(P.shape[0]):
        servers = np.flatnonzero((P[j] > 0) | (W[j] > 0))
        where.append((servers, P[j, servers].astype(np.int64), W[j, servers].astype(np.int64)) if len(servers) else None)
    return where


def solve_placement_exact(backend: PlacementBackend, name: str, instance: Instance, *, objective: Objective,
                          time_limit: float | None, seed: int | None, options: dict[str, Any],
                          moves: str = "first", model: str = "auto") -> Plan:
    """The two-stage lexicographic solve, turned into a Plan (limits become statuses).

    Anytime: ``placement-lagrange``'s placement is the incumbent; a stage stopped
    by the time limit, or one that finds nothing better, returns the best
    placement found (most jobs placed, then the least objective) with the
    backend's bound when the placed count is proven maximal.

    ``model``: "classes" solves the aggregated class model
    (:mod:`schedopt.placement.classes`), "servers" the per-server model;
    "auto" (default) takes the class model unless running tasks are kept in
    place (``moves="first"`` with ``previous``) or its shapes or patterns are
    too many. ``metrics["model"]`` says which one ran."""
    clock = Deadline(time_limit)
    started = clock.started
    if objective not in OBJECTIVES:
        raise InputError(name, f'objective: "{objective}" is not one of {", ".join(OBJECTIVES)}')
    if moves not in MOVES:
        raise InputError(name, f'moves: "{moves}" is not one of {", ".join(MOVES)}')
    if model not in MODELS:
        raise InputError(name, f'model: "{model}" is not one of {", ".join(MODELS)}')
    check_time_limit(time_limit, name)
    data = compile_placement(instance)
    keep = moves == "first" and data.prev is not None  # the fewest-moved-tasks stage runs
    metrics: dict[str, Any] = {"objective_kind": objective}
    cm = None
    if model != "servers" and not keep and data.J:
        t_cm = time.perf_counter()
        cm = build_class_model(data, objective, *coefficients(data))
        metrics["class_model_seconds"] = time.perf_counter() - t_cm
        if cm is not None:
            metrics["class_model"] = cm.size
    metrics["model"] = "classes" if cm is not None else "servers"
    # with running jobs kept, the first stage (the most jobs placed, moves aside) is the same on the
    # class model, where servers of one capacity are alike: it proves the count there
    count_cm = cm
    if keep and model == "auto" and data.J:
        count_cm = build_class_model(data, objective, *coefficients(data))
        if count_cm is not None:
            metrics["model"] = "servers (the count on the class model)"

    def solve(stage: str, min_placed: int, max_moved: int | None = None) -> StageResult[Counts]:
        here = count_cm if stage == "place" else cm
        if here is not None:
            return backend.solve_classes(data, here, stage=stage, objective=objective, min_placed=min_placed,
                                         time_limit=left(), seed=seed)
        return backend.solve_stage(data, stage=stage, objective=objective, min_placed=min_placed, time_limit=left(),
                                   seed=seed, max_moved=max_moved)

    left, expired = clock.left, clock.expired

    searched: list[Threshold | None] = [None]  # the incumbent's threshold search (max T_j)

    def plan(where: list[JobPlacement | None], status: Status, term: Termination, bound: float | None = None,
             message: str | None = None, count_proven: bool = False) -> Plan:
        """The plan, its claims tied to proofs: the pattern certificates where they prove the
        stated bounds (the bound, when they prove it within OPTIMAL_GAP; the placed count,
        when they prove it the most), the backend's word otherwise."""
        placed = sum(pl is not None for pl in where)
        admitted_bound, cert = None, None
        if status == Status.OPTIMAL or bound is not None or count_proven:
            admitted_bound, bound, cert = _certified(data, count_cm, objective, where, bound, count_proven,
                                                     getattr(backend, "label", name), metrics, clock, searched[0],
                                                     proven=status == Status.OPTIMAL)
            if status == Status.OPTIMAL and placed < data.J and admitted_bound != placed:
                status = Status.FEASIBLE
                message = "the placed count is not proven the most"
        return build_plan(data, where, solver=name, status=status, termination=term, started=started, bound=bound,
                          seed=seed, options=options, metrics=metrics, message=message, objective=objective,
                          admitted_bound=admitted_bound, certificate=cert)

    def key(where: list[JobPlacement | None]) -> tuple[int, int, float]:
        return (-sum(pl is not None for pl in where), moved_tasks(data, where) if keep else 0,
                objective_value(data, where, objective))

    if data.J == 0:
        return plan([], Status.OPTIMAL, Termination.OPTIMAL, bound=0.0)
    # placement-lagrange's placement (incremental when jobs run): the incumbent; for max T_j its
    # threshold search over the whole instance is kept for the plan's bound
    sort_by = instance.resources.index("cpu") if "cpu" in instance.resources else 0

    def incumbent(d: PlacementData) -> list[JobPlacement | None]:
        where, _, thr = guided_place(d, objective, clock, sort_by)
        if d is data:
            searched[0] = thr
        return where

    best, _ = place_keeping(data, incumbent, keep)
    if expired():
        return plan(best, Status.FEASIBLE, Termination.TIME_LIMIT,
                    message="time limit reached before stage 1 (max placed jobs); the heuristic placement is returned")
    first = solve("place", 0)
    metrics.update(first.info)
    if first.solution is None and first.termination == Termination.INFEASIBLE and not any(pl is not None for pl in best):
        return plan([None] * data.J, Status.INFEASIBLE, first.termination, message="stage 1 (max placed jobs): infeasible")
    where1 = None if first.solution is None else decode(*first.solution)
    if where1 is not None and key(where1) < key(best):
        best = where1
    placed = sum(pl is not None for pl in best)
    if first.termination != Termination.OPTIMAL or expired():
        return plan(best, Status.FEASIBLE, Termination.TIME_LIMIT if first.termination != Termination.ERROR else first.termination,
                    message="stopped in stage 1 (max placed jobs): placed jobs not proven maximal; the best placement found is returned")
    max_moved = None
    if keep:
        mid = solve("moves", placed)
        metrics.update(mid.info)
        where_m = None if mid.solution is None else decode(*mid.solution)
        if where_m is not None and key(where_m) < key(best):
            best = where_m
        if mid.termination != Termination.OPTIMAL or expired():
            return plan(best, Status.FEASIBLE, Termination.TIME_LIMIT if mid.termination != Termination.ERROR else mid.termination,
                        message="stopped in the fewest-moved-tasks stage: moved tasks not proven minimal; "
                                "the best placement found is returned",
                        count_proven=sum(pl is not None for pl in best) == placed)
        max_moved = moved_tasks(data, best)
    second = solve("cost", placed, max_moved)
    metrics.update(second.info)
    where2 = None if second.solution is None else decode(*second.solution)
    found = where2 is not None and key(where2) <= key(best)
    if found:
        best = where2
    value = objective_value(data, best, objective)
    bound = second.bound
    if bound is not None:
        bound = max(min(bound, value), 0.0)  # a bound above the incumbent is rounding noise
    # the stage proven optimal: its placement, or the incumbent when that is no worse (the incumbent
    # meets the stage's rows, so the stage's optimum is no better than it)
    if second.termination == Termination.OPTIMAL and where2 is not None:
        bound = value if bound is None else bound
        gap = relative_gap(value, bound)
        if gap is not None and gap > OPTIMAL_GAP:  # optimal for the backend's (scaled) model only
            return plan(best, Status.FEASIBLE, Termination.OPTIMAL, bound=bound, count_proven=True,
                        message=f"optimal for the backend's scaled model; the proven gap on the true objective is {gap:.2g}")
        return plan(best, Status.OPTIMAL, Termination.OPTIMAL, bound=bound, count_proven=True)
    gap = relative_gap(value, bound)
    if gap is not None and gap <= IMPROVE_TOL:
        return plan(best, Status.OPTIMAL, Termination.OPTIMAL, bound=bound, count_proven=True)
    return plan(best, Status.FEASIBLE, second.termination if second.termination != Termination.OPTIMAL else Termination.TIME_LIMIT,
                bound=bound, count_proven=True, message=None if found else "stage 2 found no better placement in time; the best placement found is returned")


def _certified(data: PlacementData, cm: ClassModel | None, objective: Objective, where: list[JobPlacement | None],
               bound: float | None, count_proven: bool, backend: str, metrics: dict[str, Any],
               clock: Deadline, threshold: Threshold | None = None, proven: bool = True,
               ) -> tuple[int | None, float | None, Certificate | None]:
    """(admitted bound, bound, certificate) for an exact plan: pattern certificates from the class
    model's LP where they prove the claims, else the backend's proof of what it proved (for a
    plan not ``proven`` optimal, only when no pattern bound was found: the backend's tighter bound
    is then kept in ``metrics.backend_bound``).
    ``threshold``: a max T_j threshold search already made (used when it is for as many jobs)."""
    placed = sum(pl is not None for pl in where)
    value = objective_value(data, where, objective)
    count_bound = count_proof = pattern_bound = bound_proof = None
    if objective in ("sum", "cross_pairs") and data.J:
        if cm is None:
            cm = build_class_model(data, objective, *coefficients(data))
        if cm is not None:
            first = solve_class_lp(cm, stage="place")
            if first is not None:
                try:
                    count_bound, pattern_bound, cert, info = pattern_certificates(
                        data, cm, objective, np.array([pl is not None for pl in where], dtype=bool), first)
                except TooLargeToReplay:
                    cert, info = None, {"certificate": "too large to replay"}
                metrics.update(info)
                if cert is not None:
                    count_proof, bound_proof = cert.admitted_bound, cert.bound
                branched = _branch_proof(data, cm, objective, where, value, bound, pattern_bound, count_bound,
                                         metrics, clock)
                if branched is not None:
                    pattern_bound, bound_proof = branched
    elif objective == "max" and data.J and data.S:
        try:
            count_bound, pattern_bound, cert, info = minmax_bounds(
                data, np.array([pl is not None for pl in where], dtype=bool), value,
                threshold=threshold if threshold is not None and threshold.k == placed else None,
                cm=cm if cm is not None and len(cm.classes) <= MAX_CLASSES else None)
        except TooLargeToReplay:
            cert, info = None, {"certificate": "too large to replay"}
        metrics.update(info)
        if cert is not None:
            count_proof, bound_proof = cert.admitted_bound, cert.bound
    if count_bound is not None and count_bound != placed:
        count_bound = count_proof = None  # proves less than the backend did: the backend's word stands
    if count_bound is None and count_proven and placed < data.J:
        count_bound, count_proof = placed, Proof(kind="backend", backend=backend)
    if bound is not None:
        closes = pattern_bound is not None and relative_gap(value, pattern_bound) is not None and \
            relative_gap(value, pattern_bound) <= OPTIMAL_GAP  # type: ignore[operator]
        if closes:
            bound = min(pattern_bound, value)  # type: ignore[type-var]
            bound_proof = bound_proof.model_copy(update={"value": bound})  # type: ignore[union-attr]
        elif pattern_bound is not None and pattern_bound > bound:
            bound = pattern_bound
        elif pattern_bound is not None and bound_proof is not None and not proven:
            # stopped short of a proof: the replayable bound is stated, the backend's tighter one kept
            metrics["backend_bound"] = bound
            bound = pattern_bound
        else:
            bound_proof = Proof(kind="backend", backend=backend)
    elif pattern_bound is not None and bound_proof is not None:  # stopped before the backend bounded it:
        bound = min(pattern_bound, value)  # the class LP's replayable bound still holds
        bound_proof = bound_proof.model_copy(update={"value": bound})
    else:
        bound_proof = None
    if count_bound is None:
        count_proof = None
    cert = Certificate(bound=bound_proof, admitted_bound=count_proof) if (bound_proof or count_proof) else None
    return count_bound, bound, cert


def _branch_proof(data: PlacementData, cm: ClassModel, objective: str, where: list[JobPlacement | None], value: float,
                  bound: float | None, pattern_bound: float | None, count_bound: int | None, metrics: dict[str, Any],
                  clock: Deadline) -> tuple[float, Proof] | None:
    """A ``pattern-branch`` proof of an optimum the backend proved and the class LP's prices do not
    (an integrality gap), searched within its node-LP budget (``relaxation.branch_nodes``: the same
    certificate on any machine; never past the solve's time limit); its count must be proven the most
    (or every job placed). None otherwise."""
    placed = sum(pl is not None for pl in where)
    gap = relative_gap(value, bound) if bound is not None else None
    if gap is None or gap > OPTIMAL_GAP or (placed < data.J and count_bound != placed):
        return None  # not an optimum the backend proved, or its count rests on the backend
    if pattern_bound is not None and (relative_gap(value, pattern_bound) or 0.0) <= OPTIMAL_GAP:
        return None  # the LP's prices prove it already
    left = clock.remaining()
    started = time.perf_counter()
    try:
        got = branch_certificate(data, cm, objective, np.array([pl is not None for pl in where], dtype=bool),
                                 value - BRANCH_TARGET_MARGIN * max(1.0, abs(value)),
                                 Deadline(left))
    except TooLargeToReplay:
        got = None
    metrics["branch_certificate"] = (f"a tree in {time.perf_counter() - started:.2f} s" if got is not None else
                                     f"none found in {time.perf_counter() - started:.2f} s: the backend's bound stands")
    return got


# ---- brute force (tests) -------------------------------------------------------------------------

def _splits(n: int, k: int) -> list[tuple[int, ...]]:
    """Every way to put n identical tasks on k servers."""
    return [c for c in itertools.product(range(n + 1), repeat=k) if sum(c) == n]


def solve_bruteforce(instance: Instance, objective: Objective = "sum",
                     max_combinations: int = 2_000_000) -> tuple[int, float, list[JobPlacement | None]]:
    """The lexicographic optimum by enumeration: (placed jobs, objective, placement)."""
    data = compile_placement(instance)
    options: list[list[tuple[np.ndarray, np.ndarray, float, np.ndarray] | None]] = []
    for j in range(data.J):
        p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
        opts: list[tuple[np.ndarray, np.ndarray, float, np.ndarray] | None] = [None]
        for pk in _splits(p, data.S):
            for wk in _splits(w, data.S):
                P, W = np.array(pk), np.array(wk)
                load = P[:, None] * data.demand[j, 0] + W[:, None] * data.demand[j, 1]
                if np.any(load > data.cap * (1 + TOL) + TOL):
                    continue
                val = float(cross_pairs(p, w, P, W)) if objective == "cross_pairs" else \
                    transfer_time_s(data.size_mb[j], p, w, P, W, *data.bw[j])
                opts.append((P, W, val, load))
        options.append(opts)
    size = math.prod(len(o) for o in options)
    if size > max_combinations:
        raise ValueError(f"brute force over {size} combinations exceeds max_combinations={max_combinations}")
    best: tuple[int, float] = (-1, math.inf)
    best_where: list[JobPlacement | None] = []
    for combo in itertools.product(*options):
        load = sum((o[3] for o in combo if o is not None), np.zeros_like(data.cap, dtype=float))
        if np.any(load > data.cap * (1 + TOL) + TOL):
            continue
        vals = [o[2] for o in combo if o is not None]
        placed = len(vals)
        val = max(vals, default=0.0) if objective == "max" else float(sum(vals))
        if placed > best[0] or (placed == best[0] and val < best[1] - TINY):
            best = (placed, val)
            best_where = [None if o is None else (np.arange(data.S), o[0], o[1]) for o in combo]
    return best[0], best[1], best_where
