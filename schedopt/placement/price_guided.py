"""Price-guided placement: the class model's LP relaxation, rounded, then improved.

The aggregated class model (:mod:`schedopt.placement.classes`) is a
Gilmore-Gomory model: jobs choose *shapes* (parts (a, b) per server), servers
of a class are filled by packing *patterns*. Its LP relaxation is small and
tight, and it gives three things at once:

1. **Prices.** Its dual gives a price π_i >= 0 per item (a part's resource
   vector) and μ >= 0 on the placed-count row. They certify the bounds
   ``check`` replays from the instance alone (:mod:`schedopt.placement.certificates`:
   ``pattern-lp-dual`` for the placed count, ``pattern-lagrangian`` for the
   objective).
2. **A rounding.** Each job takes the shape its LP solution weighs most; the
   floors of the pattern counts give servers their patterns; parts go into the
   patterns' slots; what is left over (fractional jobs, uncovered parts) is
   placed best fit on the capacity left, cheapest shape first by the LP's
   reduced cost.
3. **A local search** (deterministic): a job is moved to a cheaper shape when
   the capacity left holds it; a paused job is placed when it fits; a split
   job gives way to a paused job that costs less; servers are emptied and
   refilled in pairs (a small exact neighbourhood: every shape of the jobs on
   the two servers).

Lexicographic like the exact solvers: the most jobs placed first (the LP's
placed-count bound says when that is proven), then the least Σ T_j (or
cross-node pairs). ``max`` T_j is a bottleneck (:func:`minmax_place`): the same
placement restricted to the shapes under a cost threshold, the least one whose
LP still places the count, which a ``pattern-threshold`` certificate bounds.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from schedopt.deadline import Deadline, check_time_limit
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.classes import ClassModel, build_class_model, decode, restrict
from schedopt.placement.incremental import place_keeping
from schedopt.placement.optimus import refined_place
from schedopt.placement.problem import (TOL, JobPlacement, PlacementData, build_plan, coefficients, compile_placement,
                                       cross_pairs, objective_value, transfer_time_s)
from schedopt.claims import TooLargeToReplay
from schedopt.placement.certificates import components
from schedopt.placement.relaxation import (MAX_CLASSES, ClassLp, Threshold, certified_bounds, class_milp,
                                           minmax_bounds, pattern_certificates, solve_class_lp, threshold_search)
from schedopt.plan import Plan, Status, Termination
from schedopt.registry import register
from schedopt.tolerances import IMPROVE_TOL, LP_ZERO, floor_count

OBJECTIVES = ("sum", "max", "cross_pairs")


# ---- the rounding and the search, on a dense (J, S) placement ------------------------------------

class Placement:
    """A placement under construction: ``P``, ``W`` (J, S) counts, ``free`` (S, R) capacity
    left (the checkers' slack included), each job's ``on`` (placed) and ``cost``."""

    def __init__(self, data: PlacementData, cm: ClassModel, objective: str, most_cost: float | None = None):
        self.data, self.cm, self.objective = data, cm, objective
        self.most_cost = most_cost  # no shape costing more (a max T_j threshold); None: any
        self.P = np.zeros((data.J, data.S), dtype=np.int64)
        self.W = np.zeros((data.J, data.S), dtype=np.int64)
        self.room = data.cap * (1 + TOL) + TOL  # what a server holds, the checkers' slack included
        self.free = self.room.copy()
        self.on = np.zeros(data.J, dtype=bool)
        self.cost = np.zeros(data.J)
        # best fit compares what is left in units of the largest server's capacity
        top = self.room.max(axis=0) if data.S else np.ones(data.cap.shape[1])
        self.scale = np.where(top > 0, 1.0 / np.maximum(top, TOL), 0.0)
        # each job's parts' vectors: part (a, b) -> a·d_ps + b·d_w
        self.part_vec = [{(a, b): a * data.demand[j, 0] + b * data.demand[j, 1] for a, b in cm.part_item[j]}
                         for j in range(data.J)]

    @property
    def placed(self) -> int:
        return int(self.on.sum())

    def total(self) -> float:
        return float(self.cost.sum())

    def job_cost(self, j: int) -> float:
        """Job j's cost recomputed from its counts per server (T_j or its cross-node pairs)."""
        on = np.flatnonzero(self.P[j] + self.W[j])
        p, w = int(self.data.counts[j, 0]), int(self.data.counts[j, 1])
        if self.objective == "cross_pairs":
            return float(cross_pairs(p, w, self.P[j, on], self.W[j, on]))
        return transfer_time_s(self.data.size_mb[j], p, w, self.P[j, on], self.W[j, on], *self.data.bw[j])

    def remove(self, j: int) -> tuple[np.ndarray, np.ndarray, float]:
        """Take job j out; returns what :meth:`restore` puts back."""
        on = np.flatnonzero(self.P[j] + self.W[j])
        old = np.stack([self.P[j, on], self.W[j, on]], axis=1)
        self.free[on] += old[:, :1] * self.data.demand[j, 0] + old[:, 1:] * self.data.demand[j, 1]
        self.P[j, on] = 0
        self.W[j, on] = 0
        cost = float(self.cost[j])
        self.on[j] = False
        self.cost[j] = 0.0
        return on, old, cost

    def restore(self, j: int, on: np.ndarray, old: np.ndarray, cost: float) -> None:
        self.free[on] -= old[:, :1] * self.data.demand[j, 0] + old[:, 1:] * self.data.demand[j, 1]
        self.P[j, on], self.W[j, on] = old[:, 0], old[:, 1]
        self.on[j] = True
        self.cost[j] = cost

    def put(self, j: int, s: int, servers: list[int]) -> None:
        """Shape s of job j onto ``servers`` (one per part; parts meeting on a server merge, which
        never costs more: the cost is recomputed from the counts)."""
        for (a, b), k in zip(self.cm.shapes[j][s], servers):
            self.P[j, k] += a
            self.W[j, k] += b
            self.free[k] -= self.part_vec[j][(a, b)]
        self.on[j] = True
        self.cost[j] = self.cm.cost[j][s] if len(set(servers)) == len(servers) else self.job_cost(j)

    def put_counts(self, j: int, servers: np.ndarray, ps: np.ndarray, workers: np.ndarray) -> None:
        self.P[j, servers] += ps
        self.W[j, servers] += workers
        self.free[servers] -= ps[:, None] * self.data.demand[j, 0] + workers[:, None] * self.data.demand[j, 1]
        self.on[j] = True
        self.cost[j] = self.job_cost(j)

    def fit(self, j: int, s: int) -> list[int] | None:
        """Servers for shape s of job j, best fit (largest part first, onto the server it leaves
        fullest; two parts never share a server), on the free capacity; None if it does not fit."""
        parts = self.cm.shapes[j][s]
        vecs = [self.part_vec[j][part] for part in parts]
        if len(parts) > 1 and np.any(sum(vecs) > self.free.sum(axis=0)):
            return None  # not even all free capacity pooled holds the job
        order = sorted(range(len(parts)), key=lambda i: -float(vecs[i] @ self.scale))
        taken: list[int] = []
        out = [0] * len(parts)
        for i in order:
            left = self.free - vecs[i]
            ok = (left >= 0).all(axis=1)
            if taken:
                ok[taken] = False
            cand = np.flatnonzero(ok)
            if not len(cand):
                return None
            k = int(cand[np.argmin(left[cand] @ self.scale)])
            taken.append(k)
            out[i] = k
        return out


def _round(pl: Placement, lp: ClassLp, rc: list[np.ndarray], clock: Deadline) -> None:
    """The LP's choice where its pattern floors hold it, then the rest best fit, the LP's heaviest jobs first."""
    data, cm = pl.data, pl.cm
    prefer = np.array([int(np.argmax(x)) if len(x) else -1 for x in lp.x])
    weight = np.array([float(x.sum()) for x in lp.x])
    # slots of the floored patterns: item -> list of servers (one entry per slot)
    slots: list[list[int]] = [[] for _ in range(len(cm.items))]
    for c, members in enumerate(cm.classes):
        k = 0
        for q, zq in enumerate(lp.z[c].tolist()):
            for _ in range(int(np.floor(zq + LP_ZERO))):
                if k >= len(members):
                    break
                for i in np.flatnonzero(cm.patterns[c][q]).tolist():
                    slots[i] += [int(members[k])] * int(cm.patterns[c][q][i])
                k += 1
    taken = [0] * len(cm.items)
    order = sorted(range(data.J), key=lambda j: (-weight[j], float(lp.x[j].max()) if len(lp.x[j]) else 0.0, j))
    rest = []
    for j in order:
        s = int(prefer[j])
        if s < 0 or lp.x[j][s] < 1 - LP_ZERO:
            rest.append(j)
            continue
        need: dict[int, int] = {}
        for part in cm.shapes[j][s]:
            need[cm.part_item[j][part]] = need.get(cm.part_item[j][part], 0) + 1
        if any(taken[i] + n > len(slots[i]) for i, n in need.items()):
            rest.append(j)
            continue
        servers = []
        for part in cm.shapes[j][s]:
            i = cm.part_item[j][part]
            servers.append(slots[i][taken[i]])
            taken[i] += 1
        # parts of one job that meet on a server merge (never a higher cost)
        pl.put(j, s, servers)
    # the jobs the LP places that the floored patterns miss: exactly, on the capacity left
    wanted = [j for j in rest if weight[j] > LP_ZERO]
    if wanted:
        _place_exactly(pl, wanted, clock)
    # the rest: heaviest in the LP first, then fewest tasks; shapes by reduced cost
    rest.sort(key=lambda j: (-weight[j], int(data.counts[j].sum()), j))
    for j in rest:
        if not pl.on[j]:
            _place_cheapest(pl, j, rc[j])


#: the exact repair's limits: jobs and server classes (HiGHS's MILP through SciPy, node-limited:
#: relaxation.MILP_NODES)
REPAIR_JOBS, REPAIR_CLASSES = 64, 40
#: a class model of at most this many columns (shapes and patterns) is solved whole as the last
#: repair, in at most this many branch-and-bound nodes
WHOLE_COLUMNS, WHOLE_NODES = 500, 50


def _place_exactly(pl: Placement, jobs: list[int], clock: Deadline, servers: np.ndarray | None = None) -> int:
    """Place ``jobs`` (at most :data:`REPAIR_JOBS`) on the capacity left (of ``servers`` only, when
    given), the most of them first and then at the least cost, by the class model's MILP over the
    servers grouped by what they have left. Returns how many were placed (0 when the model is too
    large or no solution is found)."""
    data = pl.data
    jobs = sorted(jobs)[:REPAIR_JOBS]
    left = np.maximum(pl.free - (pl.room - data.cap), 0.0)
    smallest = np.array([v for j in jobs for v in pl.part_vec[j].values()])
    holds = np.any(np.all(smallest[None, :, :] <= left[:, None, :] * (1 + TOL) + TOL, axis=2), axis=1)
    if servers is not None:
        holds &= np.isin(np.arange(data.S), servers)
    useful = np.flatnonzero(holds)
    if not len(useful):
        return 0
    idx = np.array(jobs, dtype=np.int64)
    sub = replace(data, jobs=[data.jobs[j] for j in jobs], roles=[data.roles[j] for j in jobs], counts=data.counts[idx],
                  demand=data.demand[idx], size_mb=data.size_mb[idx], bw=data.bw[idx], cap=left[useful],
                  servers=[data.servers[k] for k in useful], prev=None, bound_load=None)
    cm = build_class_model(sub, pl.objective, *coefficients(sub))
    if cm is None or len(cm.classes) > REPAIR_CLASSES:
        return 0
    if pl.most_cost is not None:
        cm = restrict(cm, pl.most_cost)
    chosen, z = class_milp(cm, clock)
    if chosen is None:
        return 0
    P, W = decode(sub, cm, chosen, z)
    placed = 0
    for i, j in enumerate(jobs):
        if chosen[i] is not None:
            on = np.flatnonzero(P[i] + W[i])
            pl.put_counts(j, useful[on], P[i, on], W[i, on])
            placed += 1
    return placed


def _place_cheapest(pl: Placement, j: int, rc: np.ndarray, below: float | None = None) -> bool:
    """Place job j in its first shape (by ``rc``, then cost) that fits; only shapes costing less than
    ``below`` when given. True if placed."""
    cost = pl.cm.cost[j]
    for s in np.lexsort((np.arange(len(cost)), cost, rc)).tolist():
        if below is not None and cost[s] >= below - IMPROVE_TOL * max(1.0, below):
            continue
        where = pl.fit(j, s)
        if where is not None:
            pl.put(j, s, where)
            return True
    return False


#: placing more jobs: neighbourhoods of this many servers (those with the most room), this many
#: paused jobs as candidates (the fewest tasks first), at most this many tries
COUNT_SERVERS, COUNT_GUESTS, COUNT_TRIES = 6, 8, 6


def _more_jobs(pl: Placement, job_part: np.ndarray, server_part: np.ndarray, targets: list[int], clock: Deadline) -> int:
    """In each independent part (:func:`~schedopt.placement.certificates.components`: a typed
    cluster's types) placing fewer jobs than its share of the LP allows (floored), neighbourhoods
    solved exactly for the count: its servers with the most room and the jobs on them, with its
    smallest paused jobs as candidates, refilled by the class model's MILP; kept when more jobs are
    placed. Returns how many more were placed."""
    data = pl.data
    gained = 0
    for c in range(len(targets)):
        servers = np.flatnonzero(server_part == c)
        for attempt in range(COUNT_TRIES):
            placed = int(pl.on[job_part == c].sum())
            if placed >= targets[c] or clock.expired() or not len(servers):
                break
            room = (pl.free[servers] * pl.scale).sum(axis=1)
            order = servers[np.argsort(-room, kind="stable")]
            group, hood = _neighbourhood(pl, order[attempt * COUNT_SERVERS // 2: attempt * COUNT_SERVERS // 2 + COUNT_SERVERS])
            paused = np.flatnonzero(~pl.on & (job_part == c)).tolist()
            guests = sorted(paused, key=lambda u: (int(data.counts[u].sum()), u))[:COUNT_GUESTS]
            if not guests or len(group) + len(guests) > REPAIR_JOBS:
                break
            before = pl.placed
            if _refill(pl, group, guests, hood, clock, lambda placed, cost: pl.placed > placed):
                gained += pl.placed - before
    return gained


def _neighbourhood(pl: Placement, servers: np.ndarray) -> tuple[list[int], np.ndarray]:
    """The jobs with a task on ``servers``, and ``servers`` grown by those jobs' other servers."""
    group = np.flatnonzero((pl.P[:, servers] + pl.W[:, servers]).sum(axis=1)).tolist()
    return group, np.union1d(servers, np.flatnonzero((pl.P[group] + pl.W[group]).sum(axis=0)))


def _refill(pl: Placement, group: list[int], guests: list[int], hood: np.ndarray, clock: Deadline,
            better: Callable[[int, float], bool]) -> bool:
    """Take ``group`` out and place it with ``guests`` (paused jobs) exactly on ``hood``; kept when
    all of ``group`` fits again and ``better(placed before, cost before)``, else everything is put back."""
    placed, cost = pl.placed, float(pl.cost.sum())
    saved = [(j, pl.remove(j)) for j in group]
    if _place_exactly(pl, group + guests, clock, hood) >= len(group) and better(placed, cost):
        return True
    for j in group + guests:
        if pl.on[j]:
            pl.remove(j)
    for j, old in saved:
        pl.restore(j, *old)
    return False


def _improve(pl: Placement, clock: Deadline, rounds: int, max_swaps: int, target: float, max_repairs: int
             ) -> dict[str, int]:
    """Deterministic passes until nothing changes (at most ``rounds``): fill, reshape, swap, regroup."""
    data, cm = pl.data, pl.cm
    counters = {"filled": 0, "reshaped": 0, "swapped": 0, "regrouped": 0, "repairs": 0}
    size = data.counts.sum(axis=1)
    signature = [data.demand[j].tobytes() for j in range(data.J)]
    swaps = 0
    for _ in range(rounds):
        changed = 0
        # fill: paused jobs, fewest tasks first, cheapest shape that fits. Free capacity only
        # shrinks here, so a job with as many tasks of each role as one that failed is not tried
        failed: dict[bytes, list[tuple[int, int]]] = {}
        for j in sorted(np.flatnonzero(~pl.on).tolist(), key=lambda j: (int(size[j]), j)):
            p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
            if any(p >= fp and w >= fw for fp, fw in failed.get(signature[j], ())):
                continue
            if _place_cheapest(pl, j, cm.cost[j]):
                counters["filled"] += 1
                changed += 1
            else:
                failed.setdefault(signature[j], []).append((p, w))
        # reshape: a costly job into a cheaper shape on the capacity left (its own freed)
        for j in np.argsort(-pl.cost, kind="stable").tolist():
            if pl.cost[j] <= 0 or clock.expired():
                break
            before = float(pl.cost[j])
            saved = pl.remove(j)
            if _place_cheapest(pl, j, cm.cost[j], below=before):
                counters["reshaped"] += 1
                changed += 1
            else:
                pl.restore(j, *saved)
        # swap: a split job gives way to a paused one that costs less (at most max_swaps tries)
        cheapest = np.array([float(c.min()) if len(c) else 0.0 for c in cm.cost])
        paused = sorted(np.flatnonzero(~pl.on).tolist(), key=lambda j: (cheapest[j], int(size[j]), j))
        for v in np.argsort(-pl.cost, kind="stable").tolist():
            if pl.cost[v] <= 0 or not paused or swaps >= max_swaps or clock.expired():
                break
            before = float(pl.cost[v])
            saved = pl.remove(v)
            done = False
            for u in paused:
                if cheapest[u] >= before - IMPROVE_TOL * max(1.0, before) or swaps >= max_swaps:
                    break
                swaps += 1
                if _place_cheapest(pl, u, cm.cost[u], below=before):
                    paused.remove(u)
                    if not _place_cheapest(pl, v, cm.cost[v]):  # v back in as well when room is left
                        paused.append(v)
                    counters["swapped"] += 1
                    changed += 1
                    done = True
                    break
            if not done:
                pl.restore(v, *saved)
        changed += _regroup(pl, counters, clock, target, max_repairs)
        if not changed or clock.expired():
            break
    return counters


#: a neighbourhood: a split job's servers and this many with the most room left, and this many
#: paused jobs as guests (a different set of jobs may place as many at a lower cost)
NEIGHBOUR_SERVERS, NEIGHBOUR_GUESTS = 3, 4
#: neighbourhoods are solved only while the cost is this far (relative) above the LP's bound
REPAIR_GAP = 1e-3


def _regroup(pl: Placement, counters: dict[str, int], clock: Deadline, target: float, budget: int) -> int:
    """Large neighbourhoods, solved exactly: for each split job, costliest first, its servers and the
    :data:`NEIGHBOUR_SERVERS` with the most room, emptied of every job they hold (and those jobs'
    other servers), refilled by the class model's MILP; kept when as many jobs are placed at a
    lower cost. Stops once the cost reaches ``target`` (the LP's bound) or after ``budget`` tries."""
    data = pl.data
    changed = 0
    cheapest = np.array([float(c.min()) if len(c) else 0.0 for c in pl.cm.cost])
    for v in np.argsort(-pl.cost, kind="stable").tolist():
        if pl.cost[v] <= 0 or clock.expired() or counters["repairs"] >= budget or \
                pl.total() <= target + REPAIR_GAP * max(1.0, abs(target)):
            break
        counters["repairs"] += 1
        room = (pl.free * pl.scale).sum(axis=1)
        spare = [k for k in np.argsort(-room, kind="stable").tolist() if not (pl.P[v, k] or pl.W[v, k])][:NEIGHBOUR_SERVERS]
        group, hood = _neighbourhood(pl, np.union1d(np.flatnonzero(pl.P[v] + pl.W[v]), np.array(spare, dtype=np.int64)))
        if len(group) > REPAIR_JOBS or len(hood) > 4 * NEIGHBOUR_SERVERS + 8:
            continue
        # paused jobs no larger than the group's largest may take a placed one's place
        largest = int(data.counts[group].sum(axis=1).max())
        paused = [u for u in np.flatnonzero(~pl.on).tolist() if int(data.counts[u].sum()) <= largest]
        guests = sorted(paused, key=lambda u: (cheapest[u], int(data.counts[u].sum()), u))[:NEIGHBOUR_GUESTS]
        if _refill(pl, group, guests, hood, clock,
                   lambda placed, cost: float(pl.cost.sum()) < cost - IMPROVE_TOL * max(1.0, cost)):
            counters["regrouped"] += 1
            changed += 1
    return changed


def _where(pl: Placement) -> list[JobPlacement | None]:
    out: list[JobPlacement | None] = []
    for j in range(pl.data.J):
        on = np.flatnonzero(pl.P[j] + pl.W[j])
        out.append((on, pl.P[j, on].copy(), pl.W[j, on].copy()) if pl.on[j] and len(on) else None)
    return out


def price_guided_place(data: PlacementData, objective: str, clock: Deadline, rounds: int = 4, max_swaps: int = 500,
                       repairs: int = 8, cm: ClassModel | None = None, most_cost: float | None = None
                       ) -> tuple[list[JobPlacement | None], dict[str, Any], tuple[ClassModel, ClassLp, ClassLp] | None]:
    """The placement, counters, and the class model with its two LPs (None when the class model
    does not apply: too many shapes or patterns; then nothing is placed and the caller falls back).
    ``cm``: the class model when the caller built it; ``most_cost``: only shapes costing at most
    this (a max T_j threshold; the returned model is the restricted one)."""
    if cm is None:
        cm = build_class_model(data, objective, *coefficients(data)) if data.J and data.S else None
    if cm is None:
        return [None] * data.J, {}, None
    if most_cost is not None:
        cm = restrict(cm, most_cost)
    first = solve_class_lp(cm, stage="place")
    if first is None:
        return [None] * data.J, {}, None
    # the count each independent part (a typed cluster's types) may reach: its LP share, floored
    job_part, server_part, n = components(data)
    share = np.bincount(job_part, weights=np.array([float(x.sum()) for x in first.x]), minlength=n)
    targets = [floor_count(float(v)) for v in share]
    most = min(floor_count(first.value), sum(targets))
    if len(set(server_part.tolist())) > 1:
        second = solve_class_lp(cm, stage="cost", part_of=job_part, part_min=targets)
    else:
        second = solve_class_lp(cm, stage="cost", min_placed=most)
    if second is None:
        return [None] * data.J, {}, None
    rc = [cm.cost[j] + cm.uses[j] @ second.pi for j in range(data.J)]
    pl = Placement(data, cm, objective, most_cost)
    _round(pl, second, rc, clock)
    rounded = (pl.placed, pl.total())
    gained = _more_jobs(pl, job_part, server_part, targets, clock) if pl.placed < most else 0
    target = second.value if pl.placed == most else 0.0  # the LP's bound holds for `most` placed jobs
    counters = _improve(pl, clock, rounds, max_swaps, target, repairs)
    counters["count_repaired"] = gained
    counters.update({"rounded_placed": rounded[0], "rounded_cost": rounded[1]})
    where = _where(pl)
    # a small instance, still short of the LP's count or above its bound: its whole class model is
    # a small neighbourhood (node-limited, so deterministic); kept when it places more, or as many
    # at a lower cost
    columns = sum(len(x) for x in cm.shapes) + sum(len(q) for q in cm.patterns)
    short = pl.placed < most or pl.total() > target + REPAIR_GAP * max(1.0, abs(target))
    if short and columns <= WHOLE_COLUMNS and not clock.expired():
        chosen, z = class_milp(cm, clock, WHOLE_NODES)
        if chosen is not None:
            P, W = decode(data, cm, chosen, z)
            whole = [None if c is None else (np.flatnonzero(P[j] + W[j]), P[j, np.flatnonzero(P[j] + W[j])],
                                              W[j, np.flatnonzero(P[j] + W[j])]) for j, c in enumerate(chosen)]
            better = (sum(w is not None for w in whole), -objective_value(data, whole, objective)) > \
                (pl.placed, -objective_value(data, where, objective) + IMPROVE_TOL * max(1.0, pl.total()))
            counters["whole_model"] = int(better)
            if better:
                where = whole
    return where, counters, (cm, first, second)


#: max T_j: placements restricted to a threshold's shapes tried, at most this many
THRESHOLD_TRIES = 4


def minmax_place(data: PlacementData, clock: Deadline, rounds: int = 4, max_swaps: int = 500, repairs: int = 8
                 ) -> tuple[list[JobPlacement | None], dict[str, Any], tuple[ClassModel, ClassLp, ClassLp] | None,
                            Threshold | None]:
    """max T_j as a bottleneck: the Σ T_j-guided placement places k jobs at max T_j = V; the
    threshold search (:func:`~schedopt.placement.relaxation.threshold_search`) finds the least
    shape cost c whose restricted LP still places k (every cost below it is proven too low by a
    replayable ``pattern-threshold`` certificate); the placement restricted to the shapes costing
    at most c is tried there, then bisected towards V while it falls short of k (at most
    :data:`THRESHOLD_TRIES` restricted placements). Returns the placement, counters, the whole
    class model with its LPs, and the threshold search (None when the class model does not apply)."""
    where, counters, lps = price_guided_place(data, "max", clock, rounds, max_swaps, repairs)
    if lps is None:
        return where, counters, None, None
    placed = sum(pl is not None for pl in where)
    value = objective_value(data, where, "max")
    thr = threshold_search(data, lps[0], placed, value)
    levels = np.concatenate([[0.0], thr.costs])  # level i + 1 is costs[i]; level 0 only what costs nothing
    top = int(np.searchsorted(levels, value * (1 - IMPROVE_TOL)))  # the levels below the plan's value
    lo, hi, tries = thr.first, top, 0  # level lo and below: short of k by the LP; level hi: the plan's own
    nxt = thr.first + 1
    while nxt < hi and tries < THRESHOLD_TRIES and not clock.expired():
        tries += 1
        trial, _, _ = price_guided_place(data, "max", clock, rounds, max_swaps, repairs, cm=lps[0],
                                         most_cost=float(levels[nxt]))
        if sum(pl is not None for pl in trial) >= placed:
            where, hi = trial, nxt
        else:
            lo = nxt
        nxt = (lo + 1 + hi) // 2 if hi - lo > 1 else hi
    counters.update({"threshold_tries": tries, "threshold_lps": thr.lps})
    return where, counters, lps, thr


def guided_place(d: PlacementData, objective: str, clock: Deadline, sort_by: int, rounds: int = 4,
                 max_swaps: int = 500, repairs: int = 8, metrics: dict[str, Any] | None = None
                 ) -> tuple[list[JobPlacement | None], tuple[ClassModel, ClassLp, ClassLp] | None, Threshold | None]:
    """``placement-lagrange``'s placement of ``d`` (:func:`price_guided_place`, or :func:`minmax_place`
    for max T_j), or ``optimus-placement``'s refined scheme where the class model does not apply
    (``metrics["fallback"]`` says so). Returns the placement, the class model with its LPs and the
    threshold search (None where they were not built); counters go into ``metrics``."""
    metrics = {} if metrics is None else metrics
    where, lps, thr = None, None, None
    if len(np.unique(d.cap, axis=0)) <= MAX_CLASSES:
        if objective == "max":
            where, counters, lps, thr = minmax_place(d, clock, rounds, max_swaps, repairs)
        else:
            where, counters, lps = price_guided_place(d, objective, clock, rounds, max_swaps, repairs)
        metrics.update(counters)
    if lps is None:
        metrics["fallback"] = "optimus-placement (refined)"
        where = refined_place(d, sort_by, clock=clock)[0]
    return where, lps, thr  # type: ignore[return-value]


@register("placement-lagrange", problem="placement", exact=False, backend="scipy+highs", supports_time_limit=True,
          accelerator_types=True)
class PlacementLagrange:
    """Price-guided placement: the class model's LP, rounded, a local search and exact repairs; certified bounds.

    ``objective``: "sum" (Σ T_j, default), "cross_pairs" or "max" (T_j's bottleneck: the least shape
    cost threshold whose restricted placement places as many jobs, :func:`minmax_place`).
    ``keep`` (default): running tasks stay where they run, as in ``optimus-placement``.
    ``bound`` (default): the placed count's and the objective's certified bounds (pattern
    certificates, docs/certificates.md). ``rounds``, ``max_swaps``, ``repairs``: the local search's
    limits (passes, swaps tried, neighbourhoods solved exactly)."""

    def __init__(self, *, objective: str = "sum", keep: bool = True, bound: bool = True, rounds: int = 4,
                 max_swaps: int = 500, repairs: int = 8):
        self.objective = objective
        self.keep = bool(keep)
        self.bound = bool(bound)
        self.rounds = int(rounds)
        self.max_swaps = int(max_swaps)
        self.repairs = int(repairs)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        clock = Deadline(time_limit)
        if self.objective not in OBJECTIVES:
            raise InputError(self.name, f'objective: "{self.objective}" is not one of {", ".join(OBJECTIVES)}')
        if min(self.rounds, self.max_swaps, self.repairs) < 0:
            raise InputError(self.name, "rounds, max_swaps and repairs must be >= 0")
        check_time_limit(time_limit, self.name)
        data = compile_placement(instance)
        sort_by = instance.resources.index("cpu") if "cpu" in instance.resources else 0
        metrics: dict[str, Any] = {}
        relaxed: list[tuple[ClassModel, ClassLp, ClassLp] | None] = [None]
        threshold: list[Threshold | None] = [None]

        def place(d: PlacementData) -> list[JobPlacement | None]:
            where, lps, thr = guided_place(d, self.objective, clock, sort_by, self.rounds, self.max_swaps,
                                           self.repairs, metrics)
            if d is data:
                relaxed[0], threshold[0] = lps, thr
            return where

        where, kept = place_keeping(data, place, self.keep)
        metrics.update(kept)
        options = {"objective": self.objective, "keep": self.keep, "bound": self.bound, "rounds": self.rounds,
                   "max_swaps": self.max_swaps, "repairs": self.repairs}
        admitted_bound = bound = cert = None
        placed_jobs = np.array([pl is not None for pl in where], dtype=bool)
        if self.bound and data.J:
            lps = relaxed[0]
            if self.objective == "max" and lps is not None:  # the threshold search's bound, or split-floor's
                try:
                    admitted_bound, bound, cert, info = minmax_bounds(
                        data, placed_jobs, threshold=threshold[0] if threshold[0] is not None and
                        threshold[0].k == int(placed_jobs.sum()) else None,
                        value=objective_value(data, where, "max"), cm=lps[0])
                    metrics.update(info)
                except TooLargeToReplay as exc:
                    metrics["certificate"] = f"none: too large to replay ({exc})"
            elif lps is None:  # placed incrementally: the bounds come from the whole instance, running
                # tasks free to move
                admitted_bound, bound, cert, info = certified_bounds(data, where, self.objective)
                metrics.update(info)
            else:
                try:
                    admitted_bound, bound, cert, info = pattern_certificates(data, lps[0], self.objective, placed_jobs,
                                                                             lps[1], lps[2])
                    metrics.update(info)
                except TooLargeToReplay as exc:  # a plan states no bound its checker cannot replay
                    metrics["certificate"] = f"none: too large to replay ({exc})"
        return build_plan(data, where, solver=self.name, status=Status.HEURISTIC, termination=Termination.COMPLETED,
                          started=clock.started, bound=bound, seed=seed, options=options, metrics=metrics,
                          objective=self.objective, admitted_bound=admitted_bound, certificate=cert)
