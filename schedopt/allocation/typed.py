"""Accelerator types in the allocation problem (issue 34; DESIGN.md "Accelerator types").

A server may name its accelerator type; a job runs on one type at a time, at
its speed on that type (``Job.speed_by_accelerator``, else ``Job.speed``). The
multiple-choice model of Optimus eq. 5-8 then chooses, per job, a type τ and
counts (p, w):

    minimize   Σ_j Q_j / f_{j,τ_j}(p_j, w_j)
    subject to Σ_{j: τ_j = τ} (w_j·O_j^r + p_j·N_j^r) <= C_{τ,r}   for all τ, r
               at most one (τ, p, w) per job (exactly one when every job fits)

with C_{τ,r} the capacity of resource r summed over the servers of type τ.
An instance without types, queues or spread takes the untyped arrays (``problem.py``);
both share a job's time (``jobtime.py``), the LP bound (``relaxation.py``), the backends'
stage results and the rule for the bound an exact plan states (``stage.py``). This
module's exact driver, repair and admission LP are still its own (issue 49 §1: the
untyped driver's pricing without enumeration has no typed counterpart yet).

The arrays: each (job, type) pair the job can run on is a *row* of an ordinary
:class:`AllocationData` whose resources are the pairs (type, resource)
(named ``r@type``; ``r`` for servers without a type), so every row-wise routine
(the configurations, their pruning, eq. 9's greedy) applies as is. A job's rows
are contiguous; its configurations over all its types form one group of the
multiple-choice model, which is what the LP, the reduced-cost fixing and the
exact backends work on (:attr:`TypedData.by_job`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from schedopt.allocation.admission import minimum_use
from schedopt.allocation.greedy import greedy_allocate
from schedopt.allocation.milp import HighsBackend
from schedopt.allocation.price_guided import (REPAIR_MAX_NODES, REPAIR_REL_GAP, allocate_at_prices, least_reduced_cost,
                                              minimum_counts, repair_neighbourhood)
from schedopt.allocation.relaxation import relax_by_columns
from schedopt.allocation.stage import (BOUND_ALLOWANCE_S, FINISH_SECONDS_PER_JOB, ExactBackend, StageResult,
                                      settled_bound)
from schedopt.allocation.lagrange import fix_by_reduced_cost, round_lp, solve_lp
from schedopt.allocation.metrics import allocation_metrics
from schedopt.allocation.rows import accelerator_utilization, capacity_vector, quota_rows, typed_resource_names, wide_use
from schedopt.allocation.problem import (AllocationData, ChoiceSet, count_minimal, enumerate_choices, inverse_capacity,
                                         settle_bounds, with_objective_terms)
from schedopt.deadline import NO_LIMIT, Deadline, check_time_limit
from schedopt.errors import FieldProblem, InputError
from schedopt.instance import Instance
from schedopt.plan import Certificate, Objective, Plan, Proof, Status, Termination, relative_gap
from schedopt.tolerances import IMPROVE_TOL, capacity_limit, floor_count, improves, worse

#: how a heuristic picks a job's type: the one where its minimum configuration runs
#: fastest ("aware"), or the first type in the cluster's order with room ("blind",
#: what a scheduler that does not know types ends up doing)
TYPE_CHOICES = ("aware", "blind")


@dataclass
class TypedData:
    """One typed allocation instance as arrays.

    ``rows``: one row per (job, type) pair, V rows, resources expanded to T·R;
    ``job`` (V,) the job of each row; ``kind`` (V,) its type's index in
    ``instance.accelerators``; ``job_start`` (J+1,) offsets of each job's rows.
    """

    instance: Instance
    rows: AllocationData
    job: np.ndarray
    kind: np.ndarray
    job_start: np.ndarray

    @property
    def J(self) -> int:
        return len(self.instance.jobs)

    @property
    def by_job(self) -> AllocationData:
        """The job-level view the multiple-choice routines read (J, R, cap, the jobs' names)."""
        return replace(self.rows, jobs=list(self.instance.jobs))

    @cached_property
    def minimum(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each row's minimum configuration (V, 2), whether it can run (V,), its use
        (V, T·R) and its time t at that minimum (V,; inf where it cannot run)."""
        rows = self.rows
        mins, ok, use = minimum_use(rows)
        t_min = np.array([float(rows.time_s(v, int(mins[v, 0]), int(mins[v, 1]))) if ok[v] else math.inf
                          for v in range(len(use))])
        return mins, ok & np.isfinite(t_min), use, t_min

    @cached_property
    def choices(self) -> tuple[ChoiceSet, ChoiceSet, np.ndarray]:
        """The rows' enumerated, pruned configurations, the same regrouped by job
        (:meth:`group_choices`) and each one's row: enumerated once per instance."""
        rows_cs = enumerate_choices(self.rows)
        cs, row_of = self.group_choices(rows_cs)
        return rows_cs, cs, row_of

    @cached_property
    def row_on(self) -> np.ndarray:
        """Each job's row on each type (J, types), -1 where it cannot run there."""
        feasible = self.minimum[1]
        out = np.full((self.J, len(self.instance.accelerators)), -1, dtype=np.int64)
        ok = np.flatnonzero(feasible)
        out[self.job[ok], self.kind[ok]] = ok
        return out

    @staticmethod
    def indices(config: dict[int, tuple[int, int]], choices: ChoiceSet, row_of: np.ndarray) -> list[int]:
        """The positions in ``choices`` (rows ``row_of``) of {row: (c0, c1)}'s configurations that are there."""
        if not config or not len(row_of):
            return []
        n_rows = max(int(row_of.max()), max(config)) + 1
        want = np.full((n_rows, 2), -1, dtype=np.int64)  # each row's wanted counts (-1: not in config)
        for v, c in config.items():
            want[v] = c
        hits = np.flatnonzero(np.all(choices.counts == want[row_of], axis=1))
        rows, first = np.unique(row_of[hits], return_index=True)  # each row's first matching configuration
        at = dict(zip(rows.tolist(), hits[first].tolist()))
        return [at[v] for v in config if v in at]

    def seed_columns(self, config: dict[int, tuple[int, int]], choices: ChoiceSet, row_of: np.ndarray) -> list[int]:
        """Columns that keep the LP's first master feasible for a plan ``config``: its
        configurations still in ``choices`` and each row's minimum one (never pruned:
        nothing uses fewer tasks; and it uses no more than the plan's)."""
        mins = self.minimum[0]
        least = {v: (int(mins[v, 0]), int(mins[v, 1])) for v in config}
        return sorted(set(self.indices(config, choices, row_of)) | set(self.indices(least, choices, row_of)))

    def total_s(self, config: dict[int, tuple[int, int]]) -> float:
        """Σ t over a plan {row: (c0, c1)}, seconds."""
        return float(sum(self.rows.time_s(v, *c) for v, c in config.items()))

    def accelerator(self, v: int) -> str | None:
        return self.instance.accelerators[int(self.kind[v])]

    def group_choices(self, rows_cs: ChoiceSet) -> tuple[ChoiceSet, np.ndarray]:
        """The rows' configurations regrouped by job (one group per job, over all its
        types), and each configuration's row (K,)."""
        cs = ChoiceSet(job=self.job[rows_cs.job], counts=rows_cs.counts, cost=rows_cs.cost, use=rows_cs.use,
                       start=rows_cs.start[self.job_start], enumerated=rows_cs.enumerated)
        return cs, rows_cs.job.copy()


def compile_typed(instance: Instance) -> TypedData:
    """The rows of a typed instance; raises :class:`InputError` when a job lacks
    remaining steps or a speed on every type of the cluster."""
    kinds = instance.accelerators
    problems: list[FieldProblem] = []
    jobs, job_of, kind_of, start = [], [], [], [0]
    for i, job in enumerate(instance.jobs):
        if job.remaining_steps is None:
            problems.append(FieldProblem(f"jobs[{i}].remaining_steps", "required by the allocation problem"))
        if job.speed is None and not job.speed_by_accelerator:
            problems.append(FieldProblem(f"jobs[{i}].speed", "required by the allocation problem (or speed_by_accelerator)"))
        for t, kind in enumerate(kinds):
            speed = instance.speed_on(job, kind)
            if speed is None:
                continue
            jobs.append(instance.job_on(job, kind))
            job_of.append(i)
            kind_of.append(t)
        start.append(len(jobs))
    if problems:
        raise InputError(instance.source, problems)
    V = len(jobs)
    job_of_a, kind_a = np.array(job_of, dtype=np.int64), np.array(kind_of, dtype=np.int64)
    n_roles = np.array([len(j.roles) for j in jobs], dtype=int)
    lo = np.zeros((V, 2), dtype=np.int64)
    hi = np.zeros((V, 2), dtype=np.int64)

    cap = capacity_vector(instance)
    quotas = quota_rows(instance)
    demand = np.zeros((V, 2, len(cap)))
    for v, job in enumerate(jobs):
        for k, rname in enumerate(job.role_names):
            role = job.roles[rname]
            lo[v, k], hi[v, k] = role.min, role.max_count
        per_task = instance.role_demand(job)  # (roles, R)
        demand[v, : len(job.roles)] = wide_use(instance, int(job_of_a[v]), int(kind_a[v]), per_task, quotas)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(demand > 0, demand / cap, 0.0).max(axis=2) if len(cap) else np.zeros((V, 2))
    running = np.full((V, 2), -1, dtype=np.int64)
    restart = np.zeros(V)
    for v, job in enumerate(jobs):  # each row's running counts (another type's rows: none matches, job_on)
        counts = instance.running_counts(job)
        if counts is not None:
            names = job.role_names
            running[v] = (counts[names[0]], counts[names[1]] if len(names) == 2 else 0)
            restart[v] = instance.restart_cost_s(job)
    paying = bool(np.any((running[:, 0] >= 0) & (restart > 0)))
    rows = AllocationData(instance=instance, jobs=jobs, n_roles=n_roles, lo=lo, hi=hi, demand=demand,
                          Q=np.array([float(j.remaining_steps or 0.0) for j in jobs]), cap=cap, share=share,
                          arrival=np.array([j.arrival for j in jobs]),
                          running=running if paying else None, restart_s=restart if paying else None)
    rows = with_objective_terms(rows, instance, job_of_a)
    return TypedData(instance=instance, rows=rows, job=job_of_a, kind=kind_a, job_start=np.array(start, dtype=np.int64))


def typed_cannot_run(data: TypedData) -> dict[str, str]:
    """Jobs no plan can ever run, with the reason: on no type does an allowed
    configuration fit that type's whole capacity (or the job has no speed on any type)."""
    from schedopt.allocation.problem import min_configuration, use_of

    names = typed_resource_names(data.instance)
    limit = capacity_limit(data.rows.cap)
    out: dict[str, str] = {}
    for j, job in enumerate(data.instance.jobs):
        rows = range(int(data.job_start[j]), int(data.job_start[j + 1]))
        why = []
        for v in rows:
            c = min_configuration(data.rows, v)
            if c is None:
                why.append(f"{data.accelerator(v)}: no allowed configuration")
                continue
            over = np.flatnonzero(use_of(data.rows, v, c) > limit)
            if not len(over):
                break
            r = int(over[0])
            why.append(f"{data.accelerator(v)}: needs {use_of(data.rows, v, c)[r]:g} {names[r]} at its least, "
                       f"the type has {data.rows.cap[r]:g}")
        else:
            out[job.id] = "; ".join(why) or "no speed on any accelerator type of the cluster"
    return out


# ---- the heuristic --------------------------------------------------------------------------

def typed_admission(data: TypedData, choice: str = "aware", preference: np.ndarray | None = None,
                    limit: int | None = None, exchange: bool = True) -> dict[int, tuple[int, int]]:
    """Each admitted job's row and minimum configuration {row: (c0, c1)}. Jobs in
    order of the smallest dominant share of their minimum over their types (ties
    by arrival, then order: the most jobs first, as DESIGN.md's admission), each
    on the type ``choice`` picks among those its minimum still fits: the lowest
    ``preference`` (V,) of its rows, by default its time at that minimum ("aware"),
    or the first in the cluster's order ("blind"). With a ``preference``, jobs it ranks
    best on some type come first, and admission stops at ``limit`` jobs."""
    rows = data.rows
    mins, feasible, use, t_min = data.minimum
    inv = inverse_capacity(rows.cap)
    share = (use * inv).max(axis=1) if rows.R else np.zeros(len(use))
    key = np.full(data.J, math.inf)
    for j in range(data.J):
        s = slice(int(data.job_start[j]), int(data.job_start[j + 1]))
        f = feasible[s]
        if f.any():
            key[j] = share[s][f].min()
    arrival = np.array([job.arrival for job in data.instance.jobs])
    if preference is None:
        order = np.lexsort((np.arange(data.J), arrival, key))
    else:  # the jobs the preference ranks best on some type first (the LP's integral jobs), then by share
        first = np.array([preference[int(data.job_start[j]):int(data.job_start[j + 1])].min(initial=math.inf)
                          for j in range(data.J)])
        order = np.lexsort((np.arange(data.J), arrival, key, first))
    free = capacity_limit(rows.cap).astype(float)
    chosen: dict[int, tuple[int, int]] = {}
    for j in order.tolist():
        if limit is not None and len(chosen) >= limit:
            break
        if not math.isfinite(key[j]):
            continue
        vs = [v for v in range(int(data.job_start[j]), int(data.job_start[j + 1]))
              if feasible[v] and np.all(use[v] <= free)]
        if not vs:
            continue
        rank = t_min if preference is None else preference
        v = min(vs, key=lambda r: (rank[r], t_min[r], r)) if choice == "aware" else vs[0]
        free = free - use[v]
        chosen[v] = (int(mins[v, 0]), int(mins[v, 1]))
    if choice == "aware" and exchange:
        chosen = _exchange(data, chosen, free)
    return chosen


#: most improving moves and swaps of :func:`_exchange` (each O(jobs · types))
EXCHANGE_MOVES = 2000


def _exchange(data: TypedData, chosen: dict[int, tuple[int, int]], free: np.ndarray) -> dict[int, tuple[int, int]]:
    """Local search at the minimum configurations, never fewer jobs: move an admitted
    job to a type where it runs faster and fits, admit a paused job that now fits,
    or swap a paused job in for a costlier admitted one whose room (on any type) it fits in (the swap saving the
    most for each paused job, cheapest paused job first). Moves first, then swaps,
    until neither improves or ``EXCHANGE_MOVES`` are made."""
    mins, feasible, use, t_min = data.minimum
    job_rows = [range(int(data.job_start[j]), int(data.job_start[j + 1])) for j in range(data.J)]
    row_of_job = {int(data.job[v]): v for v in chosen}
    free = free.copy()
    fastest = np.full(data.J, math.inf)  # each job's least time at its minimum over the types it may run on
    np.minimum.at(fastest, data.job, np.where(feasible, t_min, math.inf))
    moves = 0
    improved = True
    while improved and moves < EXCHANGE_MOVES:
        improved = False
        for j in sorted(row_of_job, key=lambda j: -t_min[row_of_job[j]]):  # move to a faster type with room
            v = row_of_job[j]
            if not fastest[j] < t_min[v] - IMPROVE_TOL:
                continue  # on its fastest type already
            room = free + use[v]
            better = [u for u in job_rows[j] if feasible[u] and t_min[u] < t_min[v] - IMPROVE_TOL and np.all(use[u] <= room)]
            if better:
                u = min(better, key=lambda r: (t_min[r], r))
                free = room - use[u]
                row_of_job[j] = u
                moves += 1
                improved = True
        moves, free, swapped = _trade_types(data, row_of_job, free, moves)
        improved |= swapped
        paused = [j for j in range(data.J) if j not in row_of_job and math.isfinite(fastest[j])]
        state: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None  # rebuilt after each change
        for p in sorted(paused, key=lambda j: fastest[j]):
            if state is None:
                admitted = np.array(sorted(row_of_job), dtype=np.int64)
                a_rows = np.array([row_of_job[a] for a in admitted.tolist()], dtype=np.int64)
                state = (admitted, a_rows, t_min[a_rows], free[None, :] + use[a_rows])
            admitted, a_rows, a_cost, room = state  # room (A, T·R): what each admitted job's leaving frees
            if not len(admitted):
                break
            direct = [u for u in job_rows[p] if feasible[u] and np.all(use[u] <= free)]
            if direct:  # room freed by the moves: admit it outright (one more job)
                u = min(direct, key=lambda r: (t_min[r], r))
                free = free - use[u]
                row_of_job[p] = u
                moves += 1
                improved = True
                state = None
                continue
            best: tuple[float, int, int] | None = None  # (saving, row of p, index into admitted)
            for u in job_rows[p]:
                if not feasible[u]:
                    continue
                dearer = np.flatnonzero(a_cost > t_min[u] + IMPROVE_TOL)  # the room test only where it saves
                ok = dearer[np.all(use[u][None, :] <= room[dearer], axis=1)]
                if len(ok):
                    i = int(ok[np.argmax(a_cost[ok])])  # the costliest admitted job it can replace (the first of ties)
                    saving = float(a_cost[i] - t_min[u])
                    if best is None or saving > best[0]:
                        best = (saving, u, i)
            if best is not None:
                _, u, i = best
                a = int(admitted[i])
                free = room[i] - use[u]
                del row_of_job[a]
                row_of_job[p] = u
                moves += 1
                improved = True
                state = None
            if moves >= EXCHANGE_MOVES:
                break
    return {v: (int(mins[v, 0]), int(mins[v, 1])) for v in row_of_job.values()}


def _trade_types(data: TypedData, row_of_job: dict[int, int], free: np.ndarray, moves: int) -> tuple[int, np.ndarray, bool]:
    """Two admitted jobs on different types trade types when the trade fits and
    lowers Σ t at their minimum configurations (the costliest job first, its best
    trade); ``row_of_job`` is updated in place. Returns (moves, free, whether any)."""
    _, _, use, t_min = data.minimum
    row_on = data.row_on
    jobs = np.array(sorted(row_of_job, key=lambda j: -t_min[row_of_job[j]]), dtype=np.int64)
    rows = np.array([row_of_job[j] for j in jobs.tolist()], dtype=np.int64)  # kept in step with row_of_job
    if len(jobs) > TRADE_SCAN_JOBS:
        return _trade_types_ranked(data, row_of_job, jobs, rows, free, moves)
    traded = False
    for i in range(len(jobs)):
        if moves >= EXCHANGE_MOVES:
            break
        va = int(rows[i])
        ta = int(data.kind[va])
        tb = data.kind[rows]
        ua = row_on[jobs[i], tb]  # job i's row on each other job's type
        ub = row_on[jobs, ta]  # each other job's row on job i's type
        ok = (tb != ta) & (ua >= 0) & (ub >= 0)
        if not ok.any():
            continue
        idx = np.flatnonzero(ok)
        vb, ua, ub = rows[idx], ua[idx], ub[idx]
        saving = t_min[va] + t_min[vb] - t_min[ua] - t_min[ub]
        gains = np.flatnonzero(saving > IMPROVE_TOL * max(1.0, t_min[va]))  # the room test only where it saves
        if not len(gains):
            continue
        idx, vb, ua, ub, saving = idx[gains], vb[gains], ua[gains], ub[gains], saving[gains]
        after = free[None, :] + use[va][None, :] + use[vb] - use[ua] - use[ub]
        good = np.all(after >= 0, axis=1)
        if not good.any():
            continue
        k = int(np.argmax(np.where(good, saving, -np.inf)))
        free = after[k]
        b = int(idx[k])
        rows[i], rows[b] = ua[k], ub[k]
        row_of_job[int(jobs[i])], row_of_job[int(jobs[b])] = int(ua[k]), int(ub[k])
        moves += 1
        traded = True
    return moves, free, traded


#: above this many admitted jobs, :func:`_trade_types` ranks each job's partners instead of scanning all
TRADE_SCAN_JOBS = 1000
#: partners ranked per pair of types (the ones a trade saves most with, as the pass starts)
TRADE_PARTNERS = 256


def _trade_types_ranked(data: TypedData, row_of_job: dict[int, int], jobs: np.ndarray, rows: np.ndarray,
                        free: np.ndarray, moves: int) -> tuple[int, np.ndarray, bool]:
    """:func:`_trade_types` in O(jobs · types² · TRADE_PARTNERS): a trade of job a (on τa) with b (on τb)
    saves (t_a,τa − t_a,τb) + (t_b,τb − t_b,τa), the second part b's alone, so each job's partners on τb
    are the TRADE_PARTNERS jobs on τb with the largest second part when the pass starts (ties by
    position). Partners that have moved since are skipped; jobs moved onto τb during the pass wait for
    the next one (``_exchange`` repeats the pass while it improves)."""
    _, _, use, t_min = data.minimum
    row_on = data.row_on
    kind = data.kind
    n_types = len(data.instance.accelerators)
    positions = np.arange(len(jobs))
    ranked: dict[tuple[int, int], np.ndarray] = {}
    for tb in range(n_types):
        on_tb = positions[kind[rows] == tb]
        for ta in range(n_types):
            if ta == tb or not len(on_tb):
                continue
            ub = row_on[jobs[on_tb], ta]
            has = on_tb[ub >= 0]
            g = t_min[rows[has]] - t_min[row_on[jobs[has], ta]]
            ranked[tb, ta] = has[np.lexsort((has, -g))][:TRADE_PARTNERS]
    traded = False
    for i in range(len(jobs)):
        if moves >= EXCHANGE_MOVES:
            break
        va = int(rows[i])
        ta = int(kind[va])
        tol = IMPROVE_TOL * max(1.0, t_min[va])
        best: tuple[float, int, int, int, np.ndarray] | None = None  # (saving, position, ua, ub, free after)
        for tb in range(n_types):
            ua = int(row_on[jobs[i], tb])
            cand = ranked.get((tb, ta))
            if tb == ta or ua < 0 or cand is None or not len(cand):
                continue
            vb = rows[cand]
            ub = row_on[jobs[cand], ta]
            ok = (kind[vb] == tb) & (ub >= 0) & (cand != i)
            saving = t_min[va] - t_min[ua] + t_min[vb] - t_min[np.where(ub >= 0, ub, 0)]
            ok &= saving > tol
            if not ok.any():
                continue
            sel = np.flatnonzero(ok)
            after = free[None, :] + use[va][None, :] + use[vb[sel]] - use[ua] - use[ub[sel]]
            good = np.all(after >= 0, axis=1)
            if not good.any():
                continue
            g = sel[good]
            k = int(np.lexsort((cand[g], -saving[g]))[0])  # the largest saving, then the first position
            pick = (float(saving[g][k]), int(cand[g][k]), ua, int(ub[g][k]), after[np.flatnonzero(good)[k]])
            if best is None or (pick[0], -pick[1]) > (best[0], -best[1]):
                best = pick
        if best is None:
            continue
        _, b, ua, ubk, free = best
        rows[i], rows[b] = ua, ubk
        row_of_job[int(jobs[i])], row_of_job[int(jobs[b])] = ua, ubk
        moves += 1
        traded = True
    return moves, free, traded


def typed_greedy(data: TypedData, choice: str = "aware", *, lp_guided: bool = True,
                 **greedy: Any) -> tuple[dict[int, tuple[int, int]], dict[str, Any], "TypedBound | None"]:
    """Optimus eq. 9's greedy on a typed cluster: a type per job (:func:`typed_admission`),
    then each admitted job grows on its type by marginal gain per dominant share of
    that type's capacity. "aware" with ``lp_guided`` picks each job's type by the
    LP relaxation (the type holding most of the job's LP weight: the fastest type at
    the minimum sends every job to the fastest type, which then fills while the others
    idle) and keeps the LP's rounding when it is better; the LP is returned for the
    plan's bound. Returns {row: (c0, c1)}, counters, the LP (or None)."""
    def grow(start: dict[int, tuple[int, int]]) -> tuple[dict[int, tuple[int, int]], dict[str, Any]]:
        return greedy_allocate(data.rows, start, keep_running=False, **greedy) if start else ({}, {"tasks_added": 0})

    config, counters = grow(typed_admission(data, choice))
    if choice != "aware" or not lp_guided or not config:
        return config, counters, None
    rows_cs, cs, row_of = data.choices
    admit = None if len(config) == data.J else len(config)
    lp = typed_lp_bound(data, cs, admit=admit, seed_columns=data.seed_columns(config, cs, row_of) or None)
    mass = np.bincount(row_of, weights=lp.lp.x, minlength=len(data.job))
    guided, more = grow(typed_admission(data, choice, preference=-mass, limit=len(config)))
    candidates = [(config, counters, "fastest at minimum"), (guided, more, "LP-guided")]
    if len(config) < data.J:  # the LPs' jobs first may admit more than the first pass's count
        wider, most = grow(typed_admission(data, choice, preference=-mass))
        candidates.append((wider, most, "LP-guided, no count limit"))
        _, _, weight = typed_admission_lp(data, cs, rows_cs)  # the most jobs: the admission LP's jobs first
        counted, grown = grow(typed_admission(data, choice, preference=-weight))
        candidates.append((counted, grown, "admission-LP-guided"))
    rounded = round_lp(data.by_job, cs, lp.lp.x, admit=admit)
    if rounded is not None:
        candidates.append(({int(row_of[k]): (int(cs.counts[k, 0]), int(cs.counts[k, 1])) for k in rounded},
                           {"tasks_added": 0}, "LP rounding"))

    def key(c: tuple[dict[int, tuple[int, int]], Any, str]) -> tuple[int, float]:
        return -len(c[0]), data.total_s(c[0])

    best = min(candidates, key=key)
    again = _reassign(data, cs, row_of, best[0], grow)
    if again is not None and key((again, None, "")) < key(best):
        best = (again, best[1], best[2] + ", then its jobs' types by the LP over them")
    return best[0], {**best[1], "accelerator_plan": best[2]}, lp


def _reassign(data: TypedData, cs: ChoiceSet, row_of: np.ndarray, config: dict[int, tuple[int, int]],
              grow: Any) -> dict[int, tuple[int, int]] | None:
    """The admitted jobs of ``config`` re-typed by the LP over them alone (every one
    admitted), rounded, improved by the exchange pass and grown: the LP sees the
    cost of every job on every type at once, which the one-job-at-a-time passes do not."""
    jobs = np.zeros(data.J, dtype=bool)
    jobs[[int(data.job[v]) for v in config]] = True
    mask = jobs[cs.job]
    sub, sub_rows = cs.subset(mask), row_of[mask]
    try:
        lag = solve_lp(data.by_job, sub, admit=None, seed_columns=data.seed_columns(config, sub, sub_rows) or None)
    except RuntimeError:
        return None
    rounded = round_lp(data.by_job, sub, lag.x, admit=None)
    if rounded is None:
        return None
    mins = data.minimum[0]
    start = {int(sub_rows[k]): (int(mins[int(sub_rows[k]), 0]), int(mins[int(sub_rows[k]), 1])) for k in rounded}
    free = capacity_limit(data.rows.cap) - sum((data.minimum[2][v] for v in start), np.zeros(len(data.rows.cap)))
    if np.any(free < 0):
        return None
    return grow(_exchange(data, start, free))[0]


# ---- bounds --------------------------------------------------------------------------------

@dataclass
class TypedBound:
    """A certified lower bound on Σ t over plans admitting at least ``admit`` jobs (None: all)."""

    bound: float
    proof: Proof
    lp: Any  # the LagrangeResult (x, rc for fixing and rounding)


def typed_lp_bound(data: TypedData, cs: ChoiceSet, *, admit: int | None,
                   seed_columns: list[int] | None = None) -> TypedBound:
    """The LP relaxation over the grouped configurations ``cs`` by column generation,
    its bound stated as the checker replays it, and its prices per (type, resource)."""
    relaxed = relax_by_columns(data.by_job, cs, admit=admit, seed_columns=seed_columns,
                               names=typed_resource_names(data.instance))  # the untyped bound's facade, typed rows
    return TypedBound(bound=relaxed.bound, proof=relaxed.proof, lp=relaxed.result)


def typed_admitted_bound(data: TypedData) -> tuple[int, Proof]:
    """At most how many jobs any plan admits, and its proof (the prices μ per (type,
    resource), which ``check`` replays): :func:`typed_admission_lp`'s bound over the
    instance's configurations, solved once per instance (cached on ``data``)."""
    cached = data.__dict__.get("_admitted_bound")
    if cached is None:
        rows_cs, cs, _ = data.choices
        count, proof, _ = typed_admission_lp(data, cs, rows_cs)
        cached = data.__dict__["_admitted_bound"] = (count, proof)
    return cached


def typed_admission_lp(data: TypedData, cs: ChoiceSet, rows_cs: ChoiceSet) -> tuple[int, Proof, np.ndarray]:
    """The admission LP over each row's count-minimal configurations (max Σ x): its
    bound ⌊μ·C + Σ_j max(0, 1 - min μ·u_j)⌋, the proof, and each row's LP weight (V,)."""
    keep = count_minimal(rows_cs)
    minimal = cs.subset(keep)
    ones = replace(minimal, cost=-np.ones(minimal.K))
    view = data.by_job
    lag = solve_lp(view, ones, admit=0)
    mu = np.maximum(lag.lam, 0.0)
    proven = -float(lag.bound) + float(mu @ (capacity_limit(view.cap) - view.cap))
    weight = np.bincount(rows_cs.job[keep], weights=lag.x, minlength=len(data.job))
    return (floor_count(proven),
            Proof(kind="lp-dual", prices=dict(zip(typed_resource_names(data.instance), mu.tolist()))), weight)


# ---- plans ---------------------------------------------------------------------------------

def typed_plan(data: TypedData, *, solver: str, config: dict[int, tuple[int, int]], status: Status,
               termination: Termination, started: float, bound: float | None = None,
               admitted_bound: int | None = None, proof: Proof | None = None,
               admitted_proof: Proof | None = None, seed: int | None = None,
               options: dict[str, Any] | None = None, metrics: dict[str, Any] | None = None,
               message: str | None = None) -> Plan:
    """A Plan from {row: (c0, c1)} (at most one row per job): counts and the type per job."""
    rows, instance = data.rows, data.instance
    assert len({int(data.job[v]) for v in config}) == len(config), "two types for one job"
    allocation = {rows.jobs[v].id: rows.counts_dict(v, *config[v]) for v in sorted(config)}
    accelerators = {rows.jobs[v].id: data.accelerator(v) for v in sorted(config)}
    has_plan = status not in (Status.INFEASIBLE, Status.TIME_LIMIT)
    cost = float(sum(rows.time_s(v, *config[v]) for v in config)) if has_plan else None
    metrics = dict(metrics or {})
    bound, proof, admitted_proof = settle_bounds(cost=cost, bound=bound, proof=proof, admitted=len(config),
                                                 admitted_bound=admitted_bound, admitted_proof=admitted_proof,
                                                 jobs=data.J, metrics=metrics)
    if not instance.has_types:
        accelerators = None  # one type, unnamed: the plan is an untyped one
    all_metrics = allocation_metrics(instance, allocation, accelerators)
    if accelerators is not None:
        all_metrics["utilization_by_accelerator"] = accelerator_utilization(instance, allocation, accelerators)
    if instance.queues:
        all_metrics["queue_usage"] = queue_usage(data, config)
    all_metrics.update(metrics)
    admitted = {int(data.job[v]) for v in config}
    return Plan(
        instance=instance.name, problem="allocation", solver=solver, status=status, termination=termination,
        objective=Objective(name=rows.objective_name, sense="min", value=cost, bound=bound, gap=relative_gap(cost, bound),
                            admitted=len(config), admitted_bound=admitted_bound),
        solve_seconds=time.perf_counter() - started, allocation=allocation, accelerators=accelerators,
        paused=[job.id for j, job in enumerate(instance.jobs) if j not in admitted], metrics=all_metrics,
        seed=seed, options=options or {}, message=message,
        certificate=Certificate(bound=proof, admitted_bound=admitted_proof) if proof or admitted_proof else None,
    )


def queue_usage(data: TypedData, config: dict[int, tuple[int, int]]) -> dict[str, dict[str, float]]:
    """What each queue's admitted jobs use, per ``resource@flavor`` (Kueue's usage against its quotas)."""
    instance = data.instance
    out: dict[str, dict[str, float]] = {q.name: {} for q in instance.queues or []}
    flavors = instance.flavors
    for v, (c0, c1) in config.items():
        job = instance.jobs[int(data.job[v])]
        if job.queue is None:
            continue
        demand = instance.role_demand(job)
        use = c0 * demand[0] + (c1 * demand[1] if len(demand) == 2 else 0.0)
        f = flavors[int(data.kind[v])]
        for r, amount in zip(instance.resources, use):
            if amount:
                key = f"{r}@{f}"
                out[job.queue][key] = out[job.queue].get(key, 0.0) + float(amount)
    return out


def typed_bounds(data: TypedData, config: dict[int, tuple[int, int]], lp: TypedBound | None = None
                 ) -> tuple[float | None, Proof | None, int | None, Proof | None, dict[str, Any]]:
    """A typed heuristic plan's certified bounds: the admission LP's bound on the
    admitted count and, when the plan admits that many, the LP bound on Σ t over
    the typed configurations (``lp``: one already solved, reused when its admission
    row matches). Returns (bound, its proof, admitted bound, its proof, metrics)."""
    if data.J == 0:
        return 0.0, None, 0, None, {}
    if not config:
        return None, None, None, None, {}
    rows_cs, cs, row_of = data.choices
    admitted_proof = None
    if len(config) < data.J:  # a bound on Σ t holds among plans admitting as many: prove no plan admits more
        count, admitted_proof = typed_admitted_bound(data)
        admitted_bound = max(count, len(config))
    else:
        admitted_bound = data.J
    if admitted_bound != len(config):
        return None, None, admitted_bound, admitted_proof, {}
    admit = None if len(config) == data.J else len(config)
    if lp is None or lp.proof.admit != admit:
        lp = typed_lp_bound(data, cs, admit=admit, seed_columns=data.seed_columns(config, cs, row_of))
    return lp.bound, lp.proof, admitted_bound, admitted_proof, {"bound_method": "lagrangian (typed LP, column generation)"}


def typed_heuristic_plan(instance: Instance, *, solver: str, choice: str, started: float, seed: int | None,
                         options: dict[str, Any], bound: bool, **greedy: Any) -> Plan:
    """``optimus-greedy`` on a typed cluster, with the certified bounds (:func:`typed_bounds`)."""
    data = compile_typed(instance)
    config, counters, lp = typed_greedy(data, choice, **greedy)
    metrics: dict[str, Any] = {**counters, "heuristic_seconds": time.perf_counter() - started, "accelerator_choice": choice}
    return typed_config_plan(data, config, solver=solver, started=started, seed=seed, options=options, metrics=metrics,
                             bound=bound, lp=lp)


def typed_config_plan(data: TypedData, config: dict[int, tuple[int, int]], *, solver: str, started: float,
                      seed: int | None, options: dict[str, Any], metrics: dict[str, Any], bound: bool,
                      lp: TypedBound | None = None) -> Plan:
    """The plan of a typed heuristic's ``config`` ({row: counts}), with the certified bounds when ``bound``."""
    lp_bound = proof = admitted_bound = admitted_proof = None
    if bound:
        lp_bound, proof, admitted_bound, admitted_proof, more = typed_bounds(data, config, lp)
        metrics = {**metrics, **more}
    # an empty plan claims infeasibility only when no job can run alone (a heuristic may just not admit any)
    status = Status.HEURISTIC if config or data.J == 0 or len(typed_cannot_run(data)) < data.J else Status.INFEASIBLE
    return typed_plan(data, solver=solver, config=config, status=status,
                      termination=Termination.COMPLETED if status == Status.HEURISTIC else Termination.INFEASIBLE,
                      started=started, bound=lp_bound, admitted_bound=admitted_bound, proof=proof,
                      admitted_proof=admitted_proof, seed=seed, options=options, metrics=metrics)


def erase_types(instance: Instance) -> Instance:
    """What a scheduler blind to types sees: the same servers as one type, each job
    at one speed (its plain ``speed``, else its speed on the first type of the
    cluster's order it lists), whatever servers it spans."""
    doc = instance.to_dict()
    doc.pop("queues", None)  # the quotas bind where the jobs land (type_blind_plan), not the blind decision
    for srv in doc["servers"]:
        srv.pop("accelerator", None)
    for job, raw in zip(instance.jobs, doc["jobs"]):
        raw.pop("queue", None)
        raw.pop("running_accelerator", None)
        raw.pop("spread", None)  # blind to locality too
        by_type = raw.pop("speed_by_accelerator", None)
        if job.speed is None and by_type:
            first = next((k for k in instance.accelerators if k in by_type), next(iter(by_type)))
            raw["speed"] = by_type[first]
    return Instance.from_dict(doc, source=f"{instance.source} (types erased)")


def type_blind_plan(instance: Instance, untyped: Any, *, solver: str, started: float, seed: int | None,
                    options: dict[str, Any], bound: bool) -> Plan:
    """A type-blind system on a typed cluster: it decides counts on the cluster as
    one type (:func:`erase_types`; ``untyped(flat) -> Plan``), then each job's tasks
    land on the first type, in the cluster's order, with room for them and a speed
    there and within its queue's quotas (jobs in arrival order); a job that fits on no
    type is paused."""
    data = compile_typed(instance)
    flat_plan = untyped(erase_types(instance))
    free = capacity_limit(data.rows.cap).astype(float)
    config: dict[int, tuple[int, int]] = {}
    dropped = 0
    for job_id in sorted(flat_plan.allocation, key=lambda i: (instance.jobs[instance.job_index[i]].arrival, instance.job_index[i])):
        j = instance.job_index[job_id]
        names = instance.jobs[j].role_names
        counts = flat_plan.allocation[job_id]
        c = (int(counts[names[0]]), int(counts[names[1]]) if len(names) == 2 else 0)
        for v in range(int(data.job_start[j]), int(data.job_start[j + 1])):
            u = c[0] * data.rows.demand[v, 0] + c[1] * data.rows.demand[v, 1]
            if math.isfinite(float(data.rows.time_s(v, *c))) and np.all(u <= free):
                free -= u
                config[v] = c
                break
        else:
            dropped += 1
    metrics = {"accelerator_choice": "blind", "paused_by_types": dropped,
               "heuristic_seconds": time.perf_counter() - started}
    return typed_config_plan(data, config, solver=solver, started=started, seed=seed, options=options, metrics=metrics,
                             bound=bound)


# ---- the exact driver ----------------------------------------------------------------------

def solve_typed_exact(backend: ExactBackend, name: str, instance: Instance, *, time_limit: float | None,
                      seed: int | None, options: dict[str, Any]) -> Plan:
    """The typed multiple-choice model with ``backend`` (HiGHS or CP-SAT), anytime:
    the type-aware greedy's plan, then stage 1 (most admitted jobs) when it pauses
    some, the LP bound and reduced-cost fixing, then stage 2 (min Σ t). Stopped by
    the limit, it returns the best plan known with the best proven bound."""
    check_time_limit(time_limit, name)
    clock = Deadline(time_limit)
    started = clock.started
    data = compile_typed(instance)
    clock.reserve(FINISH_SECONDS_PER_JOB * data.J)
    metrics: dict[str, Any] = {}

    admitted_proof: Proof | None = None
    backend_proof = Proof(kind="backend", backend=getattr(backend, "label", type(backend).__name__))

    def plan(config: dict[int, tuple[int, int]], status: Status, term: Termination, **kw: Any) -> Plan:
        return typed_plan(data, solver=name, config=config, status=status, termination=term, started=started,
                          seed=seed, options=options, metrics=metrics, admitted_proof=admitted_proof, **kw)

    if data.J == 0:
        return plan({}, Status.OPTIMAL, Termination.OPTIMAL, bound=0.0, admitted_bound=0)
    # the incumbent: the type-aware first pass and eq. 9 (its exchange pass costs more than it saves here:
    # stage 1 settles the admitted set, and a priced incumbent follows when many configurations survive)
    start = typed_admission(data, "aware", exchange=False)
    best = greedy_allocate(data.rows, start, keep_running=False)[0] if start else {}
    rows_cs, cs, row_of = data.choices
    metrics.update({"configurations": int(rows_cs.enumerated), "after_pruning": int(cs.K)})
    if cs.K == 0:
        return plan({}, Status.INFEASIBLE, Termination.INFEASIBLE, admitted_bound=0,
                    message="no job can run: none has an allowed configuration on any type")
    view = data.by_job

    def cost_of(config: dict[int, tuple[int, int]]) -> float:
        return data.total_s(config)

    def config_of(chosen: list[int], choices: ChoiceSet, rows_of: np.ndarray) -> dict[int, tuple[int, int]]:
        return {int(rows_of[k]): (int(choices.counts[k, 0]), int(choices.counts[k, 1])) for k in chosen}

    def stopped(message: str, **kw: Any) -> Plan:
        """The incumbent ``best`` with the best bound known; before the LP bound, the typed
        heuristics' certified bound when the time left (or a small allowance) pays for it."""
        metrics["stopped_in"] = message
        cost_s = TYPED_BOUND_SECONDS_PER_JOB * data.J
        if kw.get("bound") is None and best and (clock.affords_within_tolerance(cost_s) or cost_s <= BOUND_ALLOWANCE_S):
            lp_bound, lp_proof, _, _, more = typed_bounds(data, best)
            if lp_bound is not None:
                kw.update(bound=lp_bound, proof=lp_proof)
                metrics.update(more, bound_method="lagrangian (typed LP, stopped early)")
        return plan(best, Status.FEASIBLE if best else Status.TIME_LIMIT, Termination.TIME_LIMIT,
                    message=f"time limit reached {message}; the best plan found is returned", **kw)

    # stage 1: the most jobs admitted (skipped when the greedy admits every job)
    admitted_bound, admit_proven = data.J, True
    every_job = len(best) == data.J
    if not every_job:
        if clock.expired():
            return stopped("before stage 1 (max admitted jobs)")
        keep = count_minimal(rows_cs)
        cs_min, rows_min = cs.subset(keep), row_of[keep]
        hint_cfg = {v: tuple(int(x) for x in _min_counts(data, v, cs_min, rows_min)) for v in best}
        if not clock.affords(getattr(backend, "seconds_per_choice", 0.0) * cs_min.K):
            s1 = StageResult(Termination.TIME_LIMIT, None, info={"skipped": "too little time left to build the model"})
        else:
            s1 = backend.solve_stage(view, cs_min, stage="admit", every_job=False, min_admitted=0, time_limit=clock.left(),
                                     seed=seed, hint=data.indices(hint_cfg, cs_min, rows_min) or None)
        metrics.update({f"admit_{k}": v for k, v in s1.info.items()})
        admit_proven = s1.termination == Termination.OPTIMAL and s1.chosen is not None
        if s1.chosen is not None and len(s1.chosen) > len(best):
            best = config_of(s1.chosen, cs_min, rows_min)
        k_min = len(best)
        if admit_proven:
            admitted_bound = k_min
        elif s1.bound is not None:
            admitted_bound = max(k_min, floor_count(s1.bound))
        else:
            admitted_bound = None
        if admitted_bound is not None:
            lp_count, lp_proof = typed_admitted_bound(data)
            admitted_proof = lp_proof if lp_count <= admitted_bound else backend_proof
        if k_min == 0:
            return plan({}, Status.INFEASIBLE, Termination.INFEASIBLE, admitted_bound=admitted_bound,
                        message="no job fits the cluster at its minimum on any type")
    k_min = len(best)
    if clock.expired():
        return stopped("after stage 1 (max admitted jobs)", admitted_bound=admitted_bound)
    # the LP bound (prices per type and resource: the certificate), then reduced-cost fixing
    admit = None if every_job else k_min
    tb = typed_lp_bound(data, cs, admit=admit, seed_columns=data.seed_columns(best, cs, row_of) or None)
    rounded = round_lp(view, cs, tb.lp.x, admit=admit)
    if rounded is not None:
        candidate = config_of(rounded, cs, row_of)
        if len(candidate) >= len(best) and cost_of(candidate) < cost_of(best):
            best = candidate
    keep = fix_by_reduced_cost(cs, tb.lp, cost_of(best))
    if int(keep.sum()) > PRICED_INCUMBENT_ABOVE and not clock.expired():
        # many configurations survive: optimus-lagrange's steps over the incumbent's rows (and over the
        # jobs the LP admits, as the untyped driver's dual admission) give a closer incumbent, which fixes more
        starts = [best]
        if not every_job:
            mass = np.bincount(row_of, weights=tb.lp.x, minlength=len(data.job))
            starts.append(typed_admission(data, "aware", preference=-mass, limit=len(best), exchange=False))
        best = _priced_incumbent(data, starts, clock=clock)
        metrics["incumbent_method"] = "typed greedy, LP rounding, then prices and local search over its rows"
        keep = fix_by_reduced_cost(cs, tb.lp, cost_of(best))
    reduced = cs.subset(keep)
    reduced_rows = row_of[keep]
    metrics.update({"lp_bound": tb.bound, "lp_rounds": tb.lp.rounds, "incumbent": cost_of(best),
                    "after_fixing": int(reduced.K)})
    build_s = getattr(backend, "seconds_per_choice", 0.0) * reduced.K
    if clock.expired() or not clock.affords(build_s):
        return stopped(f"after the LP bound (building the model would take about {build_s:.2g} s for {reduced.K:,} "
                       "configurations)", bound=tb.bound, proof=tb.proof, admitted_bound=admitted_bound)
    s2 = backend.solve_stage(view, reduced, stage="time", every_job=every_job, min_admitted=k_min,
                             time_limit=clock.left(), seed=seed, hint=data.indices(best, reduced, reduced_rows) or None)
    metrics.update(s2.info)
    found = None if s2.chosen is None else config_of(s2.chosen, reduced, reduced_rows)
    if found is None or worse(cost_of(found), cost_of(best)):
        found = best
    proven = s2.termination == Termination.OPTIMAL and admit_proven
    bound, proof = settled_bound(instance, cost_of(found), len(found), lp_bound=tb.bound, lp_proof=tb.proof, stage=s2,
                                 backend_proof=backend_proof, proven=proven, clock=clock, metrics=metrics)
    return plan(found, Status.OPTIMAL if proven else Status.FEASIBLE,
                s2.termination if proven else Termination.TIME_LIMIT,
                bound=bound, proof=proof, admitted_bound=admitted_bound)


def typed_repair(data: TypedData, config: dict[int, tuple[int, int]], lp: TypedBound, *, jobs: int = 32,
                 misses: int = 2, rounds: int = 4, max_configurations: int = 1_500,
                 clock: Deadline = NO_LIMIT) -> tuple[dict[int, tuple[int, int]], int]:
    """``optimus-lagrange``'s exact repair on a typed cluster: up to ``rounds`` times, ``jobs`` jobs
    (the admitted ones dearest at the LP's prices per (type, resource), those furthest from their
    priced-best configuration on any type, the paused ones cheapest) are re-chosen, type and counts,
    by the exact model over the capacity the others leave, keeping as many admitted (at most
    ``max_configurations`` of theirs: those of least reduced cost, and the current ones); stops after
    ``misses`` neighbourhoods that find nothing. Returns (config {row: counts}, repairs made)."""

    rows_cs, cs, row_of = data.choices
    if not config or cs.K == 0:
        return config, 0
    lam = lp.lp.lam
    priced = cs.cost + cs.use @ lam
    nonempty = np.diff(cs.start) > 0
    best = np.full(data.J, math.inf)
    best[nonempty] = np.minimum.reduceat(priced, cs.start[:-1][nonempty])
    backend = HighsBackend(rel_gap=REPAIR_REL_GAP, threads=1, presolve=True, max_nodes=REPAIR_MAX_NODES)
    view = data.by_job
    # the neighbourhood fills the configuration budget: rigid jobs (a configuration or two per
    # type) are re-chosen hundreds at a time, elastic ones ``jobs`` at a time
    per_job = cs.K / max(1, int(nonempty.sum()))
    size = max(jobs, min(data.J, int(max_configurations / max(per_job, 1.0))))
    tried: set[bytes] = set()  # neighbourhoods solved already (as sorted job indices)
    repairs = offset = 0
    for _ in range(rounds):
        if clock.expired():
            break
        at = np.array(data.indices(config, cs, row_of), dtype=np.int64)  # each admitted job's configuration
        member = np.zeros(data.J, dtype=bool)
        member[cs.job[at]] = True
        mine = np.full(data.J, math.inf)
        mine[cs.job[at]] = priced[at]
        paused = np.flatnonzero(~member & np.isfinite(best))
        hood = repair_neighbourhood(member, mine, best, paused[np.argsort(best[paused], kind="stable")], offset, size)
        if not len(hood) or len(at) != len(config):
            break
        if hood.tobytes() in tried:  # the rankings moved little since a repair: the next jobs down them
            offset += 1
            if offset >= misses:
                break
            continue
        tried.add(hood.tobytes())
        in_hood = np.zeros(data.J, dtype=bool)
        in_hood[hood] = True
        mask = in_hood[cs.job]
        if int(mask.sum()) > max_configurations:
            mask = least_reduced_cost(np.where(mask, priced - best[cs.job], np.inf),
                                      at[in_hood[cs.job[at]]].tolist(), max_configurations)
        sub, sub_rows = cs.subset(mask), row_of[mask]
        rest = at[~in_hood[cs.job[at]]]
        sub_view = replace(view, cap=np.maximum(view.cap - cs.use[rest].sum(axis=0), 0.0))
        keep = int(member[hood].sum())
        current = {v: c for v, c in config.items() if in_hood[int(data.job[v])]}
        left = clock.left()
        if keep < len(hood):  # paused jobs in the neighbourhood: first, can it admit more of them?
            most = backend.solve_stage(sub_view, sub, stage="admit", every_job=False, min_admitted=0,
                                       time_limit=left, seed=0)
            if most.chosen is not None and len(most.chosen) > keep:
                keep = len(most.chosen)
                current = {}  # any plan admitting more is better, whatever its Σ t
            left = clock.left()
        result = backend.solve_stage(sub_view, sub, stage="time", every_job=False, min_admitted=keep,
                                     time_limit=left, seed=0, hint=data.indices(current, sub, sub_rows) or None)
        before = data.total_s(current) if current else math.inf
        if (result.chosen is not None and len(result.chosen) >= keep
                and improves(float(sub.cost[result.chosen].sum()), before)):
            config = {v: c for v, c in config.items() if not in_hood[int(data.job[v])]}
            config.update({int(sub_rows[k]): (int(sub.counts[k, 0]), int(sub.counts[k, 1])) for k in result.chosen})
            repairs += 1
        else:
            offset += 1
            if offset >= misses:
                break
    return config, repairs


#: measured cost of the typed heuristics' certified bounds (the typed LP and the admission LP) per
#: job (s; 0.77 s at 4,000 `gavel` jobs): a typed exact solve stopped before its LP bound states one
#: when the time left pays for it
TYPED_BOUND_SECONDS_PER_JOB = 2.0e-4
#: the typed exact driver improves its incumbent by prices and local search only when reduced-cost
#: fixing leaves more configurations than this (below, the stage model is small and the step would
#: cost more than it saves: 0.9 s on 1,000 rigid `gavel` jobs whose model has 3,000 configurations)
PRICED_INCUMBENT_ABOVE = 20_000


def _priced_incumbent(data: TypedData, starts: list[dict[int, tuple[int, int]]], *, clock: Deadline
                      ) -> dict[int, tuple[int, int]]:
    """The best of ``starts[0]`` and each start's rows allocated by ``optimus-lagrange``'s
    steps (types fixed): dual prices, rounding, eq. 9 filling, local search until
    ``clock`` expires. Best: the most jobs, then the least Σ t."""

    rows = data.rows
    minimums = minimum_counts(rows)

    def key(config: dict[int, tuple[int, int]]) -> tuple[int, float]:
        return -len(config), data.total_s(config)

    best = starts[0]
    for start in starts:
        if start and not clock.expired():
            priced = allocate_at_prices(rows, np.array(sorted(start), dtype=np.int64), minimums,
                                        max_moves=2000, clock=clock, groups=data.job).config()
            if key(priced) < key(best):
                best = priced
    return best


def _min_counts(data: TypedData, v: int, cs_min: ChoiceSet, rows_min: np.ndarray) -> np.ndarray:
    """Row v's count-minimal configuration (its first in ``cs_min``), for stage 1's hint."""
    hit = np.flatnonzero(rows_min == v)
    return cs_min.counts[int(hit[0])] if len(hit) else data.rows.lo[v]
