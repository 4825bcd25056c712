"""The type-aware heuristics of the one allocation model (issue 34; DESIGN.md "Accelerator types").

A server may name its accelerator type; a job runs on one type at a time, at its
speed on that type (``Job.speed_by_accelerator``, else ``Job.speed``). The model
(``model.py``) then has one row per (job, type) pair; its exact driver, plan
builder, admission LP and bounds are the untyped ones (``exact.py``, ``plans.py``,
``admission.py``). What is the types' own is here: choosing each job's type
(:func:`typed_admission`, "aware" or "blind"), eq. 9's greedy over the chosen rows
guided by the LP (:func:`typed_greedy`), and what a scheduler blind to types does
(:func:`erase_types`, :func:`type_blind_plan`). ``optimus-lagrange``'s exact repair
is the model's one (``repair.py``).
"""

from __future__ import annotations

import heapq
import math
import time
from typing import Any

import numpy as np

from schedopt.allocation.greedy import greedy_allocate
from schedopt.allocation.lagrange import round_lp, segment_min, solve_lp
from schedopt.allocation.model import AllocationModel, LpBound, admission_weights, admitted_bound, compile_typed, lp_bound
from schedopt.allocation.plans import heuristic_plan
from schedopt.allocation.problem import ChoiceSet, inverse_capacity
from schedopt.allocation.size_classes import size_class_proof
from schedopt.instance import Instance
from schedopt.plan import Plan
from schedopt.tolerances import IMPROVE_TOL, MIP_REL_GAP, SEARCH_STOP_GAP, SETTLED_GAP, capacity_limit

#: how a heuristic picks a job's type: the one where its minimum configuration runs
#: fastest ("aware"), or the first type in the cluster's order with room ("blind",
#: what a scheduler that does not know types ends up doing)
TYPE_CHOICES = ("aware", "blind")


# ---- the heuristic --------------------------------------------------------------------------

#: most improving moves and swaps of :func:`_exchange` (each O(jobs · types))
EXCHANGE_MOVES = 2000
#: jobs tested at once by the local search's first window (doubling while none moves)
FIRST_WINDOW = 16
#: admitted jobs from which :func:`_swap_state` groups them by the rows they use (below, one group: the
#: grouping's own cost is more than the room tests it saves; 16,000 typed jobs' exchange 2.2 -> 1.1 s)
SWAP_GROUPS_ABOVE = 1000
#: array elements one window of :func:`_first_swap` may hold (paused rows · admitted jobs · resources)
SWAP_WINDOW_ELEMENTS = 2_000_000


def _first_in(start: int, stop: int, test: Any, most: int | None = None) -> tuple[int, Any]:
    """The first position in [start, stop) where ``test(lo, hi)`` (the first index k within the window
    [lo, hi) that qualifies and what it found, k = -1: none) finds one, tried a window at a time
    (:func:`_windows`): (position, what it found), or (-1, None)."""
    for lo, hi in _windows(start, stop, most):
        k, found = test(lo, hi)
        if k >= 0:
            return lo + k, found
    return -1, None


def _windows(start: int, stop: int, most: int | None = None):
    """Half-open windows [lo, hi) covering [start, stop): FIRST_WINDOW wide, doubling up to ``most``."""
    size = FIRST_WINDOW
    while start < stop:
        end = min(stop, start + size)
        yield start, end
        start = end
        size = size * 2 if most is None else max(1, min(size * 2, most))


def typed_admission(data: AllocationModel, choice: str = "aware", preference: np.ndarray | None = None,
                    limit: int | None = None, exchange: bool = True, moves: int = EXCHANGE_MOVES,
                    scan: int | None = None) -> dict[int, tuple[int, int]]:
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
    np.minimum.at(key, data.job, np.where(feasible, share, math.inf))
    arrival = np.array([job.arrival for job in data.instance.jobs])
    if preference is None:
        order = np.lexsort((np.arange(data.J), arrival, key))
    else:  # the jobs the preference ranks best on some type first (the LP's integral jobs), then by share
        first = np.full(data.J, math.inf)
        np.minimum.at(first, data.job, preference)
        order = np.lexsort((np.arange(data.J), arrival, key, first))
    if choice == "aware":  # each row's place in the job's order of preference: (rank, time at the minimum, row)
        rank = t_min if preference is None else preference
        by_rank = np.lexsort((np.arange(len(t_min)), t_min, rank))
    else:  # the cluster's order
        by_rank = np.arange(len(t_min))
    place = np.empty(len(t_min), dtype=np.int64)
    place[by_rank] = np.arange(len(t_min))
    admitted, free = _admit_in_order(data, order[np.isfinite(key[order])], place, limit)
    chosen = {v: (int(mins[v, 0]), int(mins[v, 1])) for v in admitted}
    if choice == "aware" and exchange:
        chosen = _exchange(data, chosen, free, moves, scan)
    return chosen


def _admit_in_order(data: AllocationModel, order: np.ndarray, place: np.ndarray,
                    limit: int | None) -> tuple[list[int], np.ndarray]:
    """Jobs ``order`` (their positions) admitted one at a time, each on its row of least ``place``
    (V,) among those whose minimum still fits; a job none fits is skipped; at most ``limit``.
    Returns the rows in admission order and the capacity left (T·R + quotas,).

    Done a run of jobs at a time, with the same result: every job still waiting takes the row it
    would take now; along the order these fit one after the other (the capacity subtracted in
    sequence, ``np.subtract.accumulate``) up to the first that does not, and each of those is the row
    the one-at-a-time rule picks at its turn (the rows that fit then are a subset of those that fit
    now and include its choice). A job with no row fitting now never fits later."""
    _, feasible, use, _ = data.minimum
    free = capacity_limit(data.rows.cap).astype(float)
    rank_of = np.full(data.J, -1, dtype=np.int64)  # each waiting job's place in the order
    rank_of[order] = np.arange(len(order))
    waiting = order
    admitted: list[int] = []
    big = len(place)
    row_at = np.empty(big, dtype=np.int64)  # the row at each place
    row_at[place] = np.arange(big)
    while len(waiting) and (limit is None or len(admitted) < limit):
        live = rank_of[data.job] >= 0
        fits = live & feasible & np.all(use <= free, axis=1)
        best = np.full(data.J, big, dtype=np.int64)
        np.minimum.at(best, data.job[fits], place[fits])
        has = best[waiting] < big
        waiting = waiting[has]  # nothing fits them now, nor later
        rank_of[:] = -1
        rank_of[waiting] = np.arange(len(waiting))
        if not len(waiting):
            break
        picked = row_at[best[waiting]]
        if limit is not None:
            picked = picked[:limit - len(admitted)]
        left = np.subtract.accumulate(np.vstack([free[None, :], use[picked]]), axis=0)  # free before each, then after
        ok = np.all(use[picked] <= left[:-1], axis=1)
        n = len(picked) if ok.all() else int(np.argmin(ok))
        admitted.extend(picked[:n].tolist())
        free = left[n]
        rank_of[waiting[:n]] = -1
        waiting = waiting[n:]
    return admitted, free


def _fastest(data: AllocationModel) -> np.ndarray:
    """(J,): each job's least time at its minimum configuration over the types it may run on (inf: none)."""
    _, feasible, _, t_min = data.minimum
    fastest = np.full(data.J, math.inf)
    np.minimum.at(fastest, data.job, np.where(feasible, t_min, math.inf))
    return fastest


def _admitted_rows(row_of_job: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The admitted jobs (sorted) and their rows, as arrays."""
    admitted = np.array(sorted(row_of_job), dtype=np.int64)
    return admitted, np.array([row_of_job[a] for a in admitted.tolist()], dtype=np.int64)


def _exchange(data: AllocationModel, chosen: dict[int, tuple[int, int]], free: np.ndarray,
              limit: int = EXCHANGE_MOVES, scan: int | None = None) -> dict[int, tuple[int, int]]:
    """Local search at the minimum configurations, never fewer jobs: move an admitted
    job to a type where it runs faster and fits, admit a paused job that now fits,
    or swap a paused job in for a costlier admitted one whose room (on any type) it fits in (the swap saving the
    most for each paused job, cheapest paused job first). Moves first, then swaps,
    until neither improves or ``limit`` moves are made (``scan``: the cheapest paused jobs
    tried for a swap in each pass; None: all).

    Each pass visits the jobs one at a time in its order, and a job's move changes what the
    next ones see; nothing changes between two moves, so every job up to the next move is
    tested at once (:func:`_first_faster`, :func:`_first_swap`): the same moves, in the same
    order, in a few array operations per move instead of a few per job."""
    mins, _, use, t_min = data.minimum
    row_of_job = {int(data.job[v]): v for v in chosen}
    free = free.copy()
    fastest = _fastest(data)
    moves = 0
    improved = True
    while improved and moves < limit:
        improved = False
        order = np.array(sorted(row_of_job, key=lambda j: -t_min[row_of_job[j]]), dtype=np.int64)
        if len(order):  # a job on its fastest type already never moves
            order = order[fastest[order] < t_min[[row_of_job[j] for j in order.tolist()]] - IMPROVE_TOL]
        at = 0
        while at < len(order):  # move to a faster type with room
            k, u = _first_in(at, len(order), lambda lo, hi: _first_faster(data, order[lo:hi], row_of_job, free))
            if k < 0:
                break
            j = int(order[k])
            free = free + use[row_of_job[j]] - use[u]
            row_of_job[j] = u
            moves += 1
            improved = True
            at = k + 1
        moves, free, swapped = _trade_types(data, row_of_job, free, moves, limit)
        improved |= swapped
        paused = np.array([j for j in range(data.J) if j not in row_of_job and math.isfinite(fastest[j])], dtype=np.int64)
        paused = paused[np.argsort(fastest[paused], kind="stable")][:scan]
        at = 0
        state: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None  # rebuilt after each change
        while at < len(paused):
            if not row_of_job:
                break
            if state is None:
                state = _swap_state(data, row_of_job, free)
            stop = at + 1 if moves >= limit else len(paused)  # past the limit: one more job, as one at a time
            widest = max(1, SWAP_WINDOW_ELEMENTS // max(1, len(row_of_job) * data.row_on.shape[1] * len(free)))
            k, action = _first_in(at, stop, lambda lo, hi: _first_swap(data, paused[lo:hi], state, free), widest)
            if k < 0:
                break
            p, u, a = int(paused[k]), action[0], action[1]
            if a < 0:  # room freed by the moves: admit it outright (one more job)
                free = free - use[u]
            else:
                free = free + use[row_of_job[a]] - use[u]
                del row_of_job[a]
            row_of_job[p] = u
            moves += 1
            improved = True
            state = None
            at = k + 1
            if moves >= limit:
                break
    return {v: (int(mins[v, 0]), int(mins[v, 1])) for v in row_of_job.values()}


def _first_faster(data: AllocationModel, jobs: np.ndarray, row_of_job: dict[int, int],
                  free: np.ndarray) -> tuple[int, int]:
    """The first of admitted ``jobs`` with a row on a faster type that fits ``free`` plus what its
    own row frees, and that row (its fastest such, the first type of ties); (-1, -1): none."""
    _, _, use, t_min = data.minimum
    rows = np.array([row_of_job[j] for j in jobs.tolist()], dtype=np.int64)
    there = data.row_on[jobs]  # (n, types), -1: cannot run there
    to = np.where(there >= 0, there, 0)
    room = free[None, :] + use[rows]  # (n, T·R + quotas)
    ok = (there >= 0) & (t_min[to] < (t_min[rows] - IMPROVE_TOL)[:, None])
    ok &= np.all(use[to] <= room[:, None, :], axis=2)
    has = np.flatnonzero(ok.any(axis=1))
    if not len(has):
        return -1, -1
    k = int(has[0])
    t = np.where(ok[k], t_min[to[k]], math.inf)
    return k, int(to[k][int(np.argmin(t))])


def _swap_state(data: AllocationModel, row_of_job: dict[int, int],
                free: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[tuple[int, np.ndarray]]]:
    """What :func:`_first_swap` reads of the admitted jobs, while none changes: the jobs (A,), their
    costs at their rows (A,), the room each one's leaving frees (A, T·R + quotas), its most per row,
    and the admitted jobs grouped by the rows their own use is on: [(those rows as a set
    (:func:`_row_set`; -1: every row, one group below SWAP_GROUPS_ABOVE jobs), their positions
    (ascending))]. Only a job using every row a paused row is short on can make room for it (on a
    typed cluster without quotas, a job of the same type)."""
    _, _, use, t_min = data.minimum
    admitted, a_rows = _admitted_rows(row_of_job)
    used = use[a_rows]
    room = free[None, :] + used
    if len(a_rows) < SWAP_GROUPS_ABOVE:  # one group, every row: grouping costs more than it saves
        groups = [(-1, np.arange(len(a_rows)))]
    else:
        keys, group = np.unique(_row_set(used > 0), return_inverse=True)
        order = np.argsort(group, kind="stable")
        groups = list(zip(keys.tolist(), np.split(order, np.searchsorted(group[order], np.arange(1, len(keys))))))
    return admitted, t_min[a_rows], room, room.max(axis=0), groups


def _row_set(on: np.ndarray) -> np.ndarray:
    """Each row of ``on`` (n, rows) bool as a set of rows in one integer (bit r: row r); past 62 rows
    every set is the full one (no job is then told apart by the rows it uses)."""
    if on.shape[1] > 62:
        return np.full(len(on), -1, dtype=np.int64)
    return on.astype(np.int64) @ (np.int64(1) << np.arange(on.shape[1], dtype=np.int64))


def _first_swap(data: AllocationModel, paused: np.ndarray,
                state: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[tuple[int, np.ndarray]]],
                free: np.ndarray) -> tuple[int, tuple[int, int]]:
    """The first of ``paused`` jobs that enters now: outright on its fastest row that fits
    ``free`` (``(k, (row, -1))``), else in place of the costliest admitted job whose leaving makes
    room for one of its rows and that costs more there, the row saving the most (the first of
    ties): ``(k, (row, job paused))``. ``(-1, (-1, -1))``: none. An admitted job is tested for a
    paused row only when it uses every row that row is short on (:func:`_swap_state`'s groups)."""
    _, _, use, t_min = data.minimum
    admitted, a_cost, room, roomiest, groups = state  # (_swap_state) of the plan ``free`` is left by
    there = data.row_on[paused]  # (P, types)
    to = np.where(there >= 0, there, 0)
    can = there >= 0
    direct = can & np.all(use[to] <= free, axis=2)
    maybe = can & ~direct.any(axis=1)[:, None] & np.all(use[to] <= roomiest, axis=2)
    pp, tt = np.nonzero(maybe)  # the rows an admitted job's leaving may make room for
    u = to[pp, tt]
    short = use[u] > free  # (len(u), rows): where each such row does not fit as things stand
    fit_row: list[np.ndarray] = []  # (row of u, position in admitted) pairs where the leaving makes room
    fit_pos: list[np.ndarray] = []
    swap = np.zeros(len(paused), dtype=bool)
    if len(groups) == 1 and groups[0][0] == -1:  # every admitted job for every row
        batches = [(np.arange(len(u)), groups[0][1])] if len(u) else []
    else:  # per set of short rows, the groups using all of them
        needs, which = np.unique(_row_set(short), return_inverse=True)
        batches = []
        for n, need in enumerate(needs.tolist()):
            members = [pos for key, pos in groups if key & need == need]
            if members:
                batches.append((np.flatnonzero(which == n),
                                np.sort(np.concatenate(members)) if len(members) > 1 else members[0]))
    for mine, cand in batches:
        # the room test only where the swap saves
        mm, aa = np.nonzero(a_cost[cand][None, :] > (t_min[u[mine]] + IMPROVE_TOL)[:, None])
        ok = np.all(use[u[mine[mm]]] <= room[cand[aa]], axis=1)
        mm, aa = mm[ok], cand[aa[ok]]
        if not len(mm):
            continue
        swap[pp[mine[mm]]] = True
        fit_row.append(mine[mm])
        fit_pos.append(aa)
    acts = np.flatnonzero(direct.any(axis=1) | swap)
    if not len(acts):
        return -1, (-1, -1)
    k = int(acts[0])
    if direct[k].any():
        t = np.where(direct[k], t_min[to[k]], math.inf)
        return k, (int(to[k][int(np.argmin(t))]), -1)
    best: tuple[float, int, int] | None = None  # (saving, row, index into admitted)
    rows_fit, positions = np.concatenate(fit_row), np.concatenate(fit_pos)
    for m in np.flatnonzero(pp == k).tolist():  # its rows in type order, as one at a time
        ok = positions[rows_fit == m]  # ascending (a row is in one batch, its candidates sorted)
        if len(ok):
            i = int(ok[np.argmax(a_cost[ok])])  # the costliest admitted job it can replace (the first of ties)
            saving = float(a_cost[i] - t_min[u[m]])
            if best is None or saving > best[0]:
                best = (saving, int(u[m]), i)
    assert best is not None
    return k, (best[1], int(admitted[best[2]]))


def _trade_types(data: AllocationModel, row_of_job: dict[int, int], free: np.ndarray, moves: int,
                 limit: int = EXCHANGE_MOVES) -> tuple[int, np.ndarray, bool]:
    """Two admitted jobs on different types trade types when the trade fits and
    lowers Σ t at their minimum configurations (the costliest job first, its best
    trade); ``row_of_job`` is updated in place. Returns (moves, free, whether any).
    The jobs are visited in that order, those up to the next trade tested at once."""
    _, _, use, t_min = data.minimum
    row_on = data.row_on
    jobs = np.array(sorted(row_of_job, key=lambda j: -t_min[row_of_job[j]]), dtype=np.int64)
    rows = np.array([row_of_job[j] for j in jobs.tolist()], dtype=np.int64)  # kept in step with row_of_job
    if len(jobs) > TRADE_SCAN_JOBS:
        return _trade_types_ranked(data, row_of_job, jobs, rows, free, moves, limit)
    kind = data.kind

    def gains_of(x: np.ndarray) -> np.ndarray:
        """(len(x), types): what the jobs at positions ``x`` save moving to each type (-inf: cannot)."""
        there = row_on[jobs[x]]
        return np.where(there >= 0, t_min[rows[x]][:, None] - t_min[np.where(there >= 0, there, 0)], -np.inf)

    # a trade of i and b saves A[i, type of b] + A[b, type of i]: the table is G + Gᵀ, G[i, b] = A[i, type of b]
    n = len(jobs)
    every = np.arange(n)
    gain = gains_of(every)  # (n, types), kept in step with ``rows``
    on = kind[rows]
    table = gain[:, on]
    table = table + table.T
    table[on[:, None] == on[None, :]] = -np.inf  # the same type: no trade
    traded = False
    at = 0
    while at < n and moves < limit:
        found = None
        for lo, hi in _windows(at, n):
            tol = IMPROVE_TOL * np.maximum(1.0, t_min[rows[lo:hi]])  # each job's least saving: its own time now
            ii, bb = np.nonzero(table[lo:hi] > tol[:, None])  # the room test only where it saves
            if not len(ii):
                continue
            ii += lo
            ua = row_on[jobs[ii], kind[rows[bb]]]
            ub = row_on[jobs[bb], kind[rows[ii]]]
            after = free[None, :] + use[rows[ii]] + use[rows[bb]] - use[ua] - use[ub]
            good = np.all(after >= 0, axis=1)
            if good.any():
                first = int(ii[np.argmax(good)])
                mine = np.flatnonzero(ii == first)
                found = (first, bb[mine], ua[mine], ub[mine], after[mine], good[mine])
                break
        if found is None:
            break
        i, gains, ua, ub, after, good = found
        k = int(np.argmax(np.where(good, table[i, gains], -np.inf)))
        free = after[k]
        b = int(gains[k])
        rows[i], rows[b] = ua[k], ub[k]
        row_of_job[int(jobs[i])], row_of_job[int(jobs[b])] = int(ua[k]), int(ub[k])
        both = np.array([i, b])  # the pairs with i or b changed (the table is symmetric)
        gain[both] = gains_of(both)
        on[both] = kind[rows[both]]
        fresh = gain[both][:, on] + gain[:, on[both]].T
        fresh[on[both][:, None] == on[None, :]] = -np.inf
        table[both, :] = fresh
        table[:, both] = fresh.T
        moves += 1
        traded = True
        at = i + 1
    return moves, free, traded


#: above this many admitted jobs, :func:`_trade_types` ranks each job's partners instead of scanning all
TRADE_SCAN_JOBS = 1000
#: partners ranked per pair of types (the ones a trade saves most with, as the pass starts)
TRADE_PARTNERS = 256


def _trade_types_ranked(data: AllocationModel, row_of_job: dict[int, int], jobs: np.ndarray, rows: np.ndarray,
                        free: np.ndarray, moves: int, limit: int = EXCHANGE_MOVES) -> tuple[int, np.ndarray, bool]:
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
    most: dict[tuple[int, int], float] = {}  # the largest second part among a pair's partners at the start
    for tb in range(n_types):
        on_tb = positions[kind[rows] == tb]
        for ta in range(n_types):
            if ta == tb or not len(on_tb):
                continue
            ub = row_on[jobs[on_tb], ta]
            has = on_tb[ub >= 0]
            g = t_min[rows[has]] - t_min[row_on[jobs[has], ta]]
            ranked[tb, ta] = has[np.lexsort((has, -g))][:TRADE_PARTNERS]
            most[tb, ta] = float(g.max()) if len(g) else -math.inf
    partners = {key: _Partners(data, jobs, rows, cand, key) for key, cand in ranked.items() if len(cand)}
    slots: dict[int, list[tuple[_Partners, int]]] = {}  # position -> where it is someone's partner
    for part in partners.values():
        for idx, pos in enumerate(part.cand.tolist()):
            slots.setdefault(pos, []).append((part, idx))
    # the positions where some trade may save as the pass starts (a job's own part plus the most any
    # partner's adds: a partner's part never grows), in order; a partner moved later in the pass is
    # visited at its turn too, with its new row
    there = row_on[jobs]  # (n, types)
    on_a = kind[rows]
    most_of = np.full((n_types, n_types), -math.inf)  # [tb, ta]
    for (tb, ta), value in most.items():
        if (tb, ta) in partners:
            most_of[tb, ta] = value
    own = t_min[rows][:, None] - t_min[np.where(there >= 0, there, 0)]
    may = (there >= 0) & (own + most_of[:, on_a].T > (IMPROVE_TOL * np.maximum(1.0, t_min[rows]))[:, None])
    visit = np.flatnonzero(may.any(axis=1)).tolist()
    later: list[int] = []  # a heap of partners moved ahead of the pass
    traded = False
    at, last = 0, -1
    while at < len(visit) or later:
        if later and (at >= len(visit) or later[0] <= visit[at]):
            i = heapq.heappop(later)
        else:
            i = visit[at]
            at += 1
        if i <= last:
            continue  # visited already
        last = i
        if moves >= limit:
            break
        va = int(rows[i])
        ta = int(kind[va])
        tol = IMPROVE_TOL * max(1.0, t_min[va])
        best: tuple[float, int, int, int, np.ndarray] | None = None  # (saving, position, ua, ub, free after)
        for tb in range(n_types):
            ua = int(row_on[jobs[i], tb])
            part = partners.get((tb, ta))
            if tb == ta or ua < 0 or part is None:
                continue
            if t_min[va] - t_min[ua] + most[tb, ta] <= tol:
                continue  # no partner's second part makes this trade save (a partner's part never grows)
            cand = part.cand
            saving = t_min[va] - t_min[ua] + part.t_vb - part.t_ub
            ok = part.valid & (cand != i) & (saving > tol)
            if not ok.any():
                continue
            sel = np.flatnonzero(ok)
            after = free[None, :] + use[va][None, :] + part.use_vb[sel] - use[ua] - part.use_ub[sel]
            good = np.all(after >= 0, axis=1)
            if not good.any():
                continue
            g = sel[good]
            k = int(np.lexsort((cand[g], -saving[g]))[0])  # the largest saving, then the first position
            pick = (float(saving[g][k]), int(cand[g][k]), ua, int(part.ub[g][k]), after[np.flatnonzero(good)[k]])
            if best is None or (pick[0], -pick[1]) > (best[0], -best[1]):
                best = pick
        if best is None:
            continue
        _, b, ua, ubk, free = best
        rows[i], rows[b] = ua, ubk
        row_of_job[int(jobs[i])], row_of_job[int(jobs[b])] = ua, ubk
        for pos in (i, b):  # the partner tables where they stand
            for part, idx in slots.get(pos, ()):
                part.moved(idx, int(rows[pos]))
        if b > i:
            heapq.heappush(later, b)
        moves += 1
        traded = True
    return moves, free, traded


class _Partners:
    """One pair of types' (τb, τa) partner list in :func:`_trade_types_ranked`, with what a trade
    reads of each partner kept in arrays: its row ``vb`` and that row's time and use (updated as
    partners trade), its row on τa ``ub`` and that row's time and use (fixed), and whether it
    still stands on τb with a row on τa (``valid``)."""

    def __init__(self, data: AllocationModel, jobs: np.ndarray, rows: np.ndarray, cand: np.ndarray,
                 key: tuple[int, int]) -> None:
        _, _, use, t_min = data.minimum
        self.data, self.cand, self.tb = data, cand, key[0]
        self.ub = data.row_on[jobs[cand], key[1]]
        on = np.where(self.ub >= 0, self.ub, 0)
        self.t_ub, self.use_ub = t_min[on], use[on]
        vb = rows[cand]
        self.t_vb, self.use_vb = t_min[vb].copy(), use[vb].copy()
        self.valid = (data.kind[vb] == self.tb) & (self.ub >= 0)

    def moved(self, idx: int, row: int) -> None:
        """Partner ``idx`` now stands on ``row``."""
        _, _, use, t_min = self.data.minimum
        self.t_vb[idx], self.use_vb[idx] = t_min[row], use[row]
        self.valid[idx] = bool(self.data.kind[row] == self.tb) and bool(self.ub[idx] >= 0)


def typed_greedy(data: AllocationModel, choice: str = "aware", *, lp_guided: bool = True,
                 **greedy: Any) -> tuple[dict[int, tuple[int, int]], dict[str, Any], "LpBound | None"]:
    """Optimus eq. 9's greedy on a typed cluster: a type per job (:func:`typed_admission`),
    then each admitted job grows on its type by marginal gain per dominant share of
    that type's capacity. "aware" with ``lp_guided`` picks each job's type by the
    LP relaxation (the type holding most of the job's LP weight: the fastest type at
    the minimum sends every job to the fastest type, which then fills while the others
    idle) and keeps the LP's rounding when it is better; the LP is returned for the
    plan's bound.

    The order is the cheapest first: the admitted count (:func:`count_start`), the Σ-time LP
    over plans admitting as many, and the LP-guided pass (:func:`lp_guided_pass`); the local
    search (:func:`_exchange`), the other candidates, the re-typing and the relocating moves
    run only while no candidate is certified within SEARCH_STOP_GAP (1e-4) by the LP or the size
    classes (counter ``proven_at`` where within the exact backends' gap MIP_REL_GAP, else
    ``settled_at``), and above SETTLE_ABOVE_JOBS
    admitted jobs at the exchanged LP-guided plan once it is certified within SETTLED_GAP.
    Returns {row: (c0, c1)}, counters, the LP (or None)."""
    def grow(start: dict[int, tuple[int, int]]) -> tuple[dict[int, tuple[int, int]], dict[str, Any]]:
        return greedy_allocate(data.rows, start, keep_running=False, **greedy) if start else ({}, {"tasks_added": 0})

    if choice != "aware" or not lp_guided:
        config, counters = grow(typed_admission(data, choice))
        return config, counters, None
    start, origin = count_start(data)
    if not start:
        return {}, {"tasks_added": 0}, None
    # the admission LP's weights are read (:func:`admission_weights`) when some job was paused by the first pass
    weighed = origin != "fastest at minimum" or len(start) < data.J
    count = len(start)
    rows_cs, cs, row_of = data.choices
    admit = None if count == data.J else count
    lp = lp_bound(data, cs, admit=admit, seed_columns=data.seed_columns(start, cs, row_of) or None)

    costs: dict[int, tuple[dict[int, tuple[int, int]], float]] = {}  # id(config) -> (config, its Σ t): each once

    def key(c: tuple[dict[int, tuple[int, int]], Any, str]) -> tuple[int, float]:
        kept = costs.get(id(c[0]))
        if kept is None or kept[0] is not c[0]:
            kept = costs[id(c[0])] = (c[0], data.rows.total_time_s(c[0]))
        return -len(c[0]), kept[1]

    def most() -> int:
        """At most how many jobs any plan admits (every job when the LP admits all; else the admission LP's count)."""
        return data.J if admit is None else admitted_bound(data)[0]

    floor: dict[int | None, float] = {}  # admit -> a bound above the LP's among plans admitting that many

    def proven(c: tuple[dict[int, tuple[int, int]], Any, str], gap: float = MIP_REL_GAP) -> bool:
        """Whether no plan beats ``c`` by more than ``gap`` (relative): it admits the most jobs any
        plan does and costs at most the LP bound (or the size classes', when higher) among such
        plans, plus ``gap`` (by default the exact backends' own)."""
        if len(c[0]) != most() or len(c[0]) != count:
            return False
        bound = max(lp.bound, floor.get(admit, -math.inf))
        return key(c)[1] - bound <= gap * max(1.0, abs(bound))

    def done(c: tuple[dict[int, tuple[int, int]], Any, str]) -> tuple[dict[int, tuple[int, int]], dict[str, Any], LpBound]:
        """``c`` as the plan, the search ended: ``proven_at`` where within the exact backends' gap, else
        ``settled_at``."""
        return c[0], {**c[1], "accelerator_plan": c[2], ("proven_at" if proven(c) else "settled_at"): c[2]}, lp

    mass = np.bincount(row_of, weights=lp.lp.x, minlength=len(data.job))
    quick, quick_origin = lp_guided_pass(data, mass, count)
    candidates = [(*grow(quick), quick_origin)]
    if proven(candidates[0], SEARCH_STOP_GAP):  # no candidate below can win more than that: stop here
        return done(candidates[0])
    if admit is not None:
        # jobs paused, the LP's gap above 1e-4: the size classes' ranges may close what the count row leaves
        classes = size_class_proof(data, admit=admit, lp_x=lp.lp.x, lp_basis=lp.lp.basis)
        if classes is not None:
            floor[admit] = classes.bound
            if classes.plan is not None:  # that LP's optimum is integral: a candidate, perhaps the optimum
                candidates.append((*grow(classes.plan), "the LP with the size classes' ranges"))
            best = min(candidates, key=key)
            if proven(best, SEARCH_STOP_GAP):
                return done(best)
    # the local search over each pass's jobs
    guided, more = grow(_exchange(data, quick, _free_after(data, quick)))
    candidates.append((guided, more, quick_origin + ", then the exchange pass"))
    if proven(candidates[-1], SEARCH_STOP_GAP):
        return done(candidates[-1])
    if count > SETTLE_ABOVE_JOBS and proven(candidates[-1], SETTLED_GAP):  # each further pass costs seconds here
        return guided, {**more, "accelerator_plan": candidates[-1][2]}, lp
    # (no fastest-type pass, exchanged, as a candidate: on 120 typed `gavel` instances and 1,620 brute-forced
    # small ones it never gave the plan, and its cost was the worst seeds' most; docs/heterogeneous.md)
    if origin not in ("fastest at minimum", "admission-LP-guided"):  # the count's own plan, raised: improved as the others are
        candidates.append((*grow(_exchange(data, start, _free_after(data, start))), origin + ", then the exchange pass"))
    if weighed:  # the LP's jobs first may admit more than the count
        candidates.append((*grow(typed_admission(data, choice, preference=-mass)), "LP-guided, no count limit"))
        if max(len(c[0]) for c in candidates) < most():  # more may fit: the admission LP's jobs first
            candidates.append((*grow(typed_admission(data, choice, preference=-admission_weights(data))),
                               "admission-LP-guided"))
    rounded = round_lp(data.by_job, cs, lp.lp.x, admit=admit)
    if rounded is not None:
        candidates.append(({int(row_of[k]): (int(cs.counts[k, 0]), int(cs.counts[k, 1])) for k in rounded},
                           {"tasks_added": 0}, "LP rounding"))
    best = min(candidates, key=key)
    if len(best[0]) != count:  # more jobs than the count: the LP over plans admitting as many
        count = len(best[0])
        admit = None if count == data.J else count
        lp = lp_bound(data, cs, admit=admit, seed_columns=data.seed_columns(best[0], cs, row_of) or None)
    if proven(best, SEARCH_STOP_GAP):
        return done(best)
    again = _reassign(data, cs, row_of, best[0], grow)
    if again is not None and key((again, None, "")) < key(best):
        best = (again, best[1], best[2] + ", then its jobs' types by the LP over them")
    if proven(best, SEARCH_STOP_GAP):
        return done(best)
    if proven(best, SETTLED_GAP):  # as many jobs as any plan, certified within 1 %: no relocating moves
        return best[0], {**best[1], "accelerator_plan": best[2]}, lp
    moved = _relocated(data, best[0], grow, most=most(), priced=_PricedCosts(data, lp))
    if moved is not None and key((moved, None, "")) < key(best):
        best = (moved, best[1], best[2] + ", then paused jobs swapped in by moving others' types")
    return best[0], {**best[1], "accelerator_plan": best[2]}, lp


#: above this many admitted jobs the greedy keeps its LP-guided plan, exchanged, once it is certified within
#: SETTLED_GAP (1 %): each further candidate's exchange pass costs about as much as a whole exact solve there,
#: and little of it shows in the plan. On the 15 1,000-job `gavel` snapshots (250-400 servers, seeds 0-4)
#: settling at 400 rather than 2,000 took 9.6 -> 2.7 s in all, 6 plans costlier by 0.001-0.04 % (certified
#: gaps 0.38 % median either way, worst 0.66 -> 0.66 %); at 500-700 jobs 2 of 10 seeds 5× faster, one plan
#: 0.005 % costlier. Below it the further candidates pay (144 jobs seed 1: 0.57 % -> 0.02 %)
SETTLE_ABOVE_JOBS = 400

#: the most admitted jobs moved to another type to make room for one paused job
RELOCATE_DEPTH = 8
#: the costliest admitted jobs tried as the one a relocating swap pauses (per row of a paused job)
RELOCATE_LEAVERS = 16
#: paused jobs tried per pass of :func:`_relocating_swaps` (the fastest at their minimum first)
RELOCATE_SCAN = 64
#: passes of :func:`_relocating_swaps` at most (each admits a job or lowers Σ t)
RELOCATE_PASSES = 8
#: :func:`_make_room` calls at most over all passes (each O(admitted jobs · types)), and at most
#: RELOCATE_WORK / admitted jobs of them (220 at 900 admitted jobs, 57 at 3,500)
RELOCATE_CALLS = 600
RELOCATE_WORK = 200_000


class _Budget:
    """How many more :func:`_make_room` calls the relocating moves may make (counted, not timed:
    the same instance gives the same plan anywhere)."""

    def __init__(self, calls: int):
        self.calls = calls

    def take(self) -> bool:
        self.calls -= 1
        return self.calls >= 0


class _MoveTable:
    """Every move :func:`_make_room` may make while the admitted rows ``rows`` (A,) stand: each
    admitted job (``position``) to its row on another type it can run on (``target``), flat, by
    position then type, with the use that row takes on (``gain``) and the Σ t it adds (``delta``);
    ``used`` (A, rows of slack) is each admitted job's use where it runs, ``uses`` (A, rows) where that
    is positive, ``net`` (moves, rows) what each move leaves the slack (its job's row in ``used`` freed,
    its target's use taken). Built once per plan."""

    def __init__(self, data: AllocationModel, rows: np.ndarray) -> None:
        _, _, use, t_min = data.minimum
        self.rows = rows
        self.used = use[rows]
        on = data.row_on[data.job[rows]]  # (A, T)
        movable = (on >= 0) & (np.arange(on.shape[1])[None, :] != data.kind[rows][:, None])
        self.position = np.nonzero(movable)[0]
        self.target = on[movable]
        self.uses = self.used > 0
        self.delta = t_min[self.target] - t_min[rows][self.position]
        self.net = self.used[self.position] - use[self.target]


def _make_room(data: AllocationModel, rows: np.ndarray, slack: np.ndarray, fixed: np.ndarray,
               table: _MoveTable | None = None) -> tuple[float, list[tuple[int, int]], np.ndarray] | None:
    """Move admitted jobs (their rows ``rows`` (A,); positions where ``fixed`` is True stay) to
    other types until ``slack`` (T·R + quotas,) has no negative entry: each time the move that
    adds the least Σ t at minimum among those freeing a short row and shortening none (ties:
    the first position, then the first type), or, where there is none, the move freeing a short
    row that leaves the least shortage over all rows (a chain: the row it shortens is made room on
    by the moves after it), at most RELOCATE_DEPTH moves. ``table``: the
    :class:`_MoveTable` of ``rows``, when the caller keeps one. Returns (Σ t added, [(position, new
    row)], the slack after), or None when no such sequence makes room."""
    if table is None or table.rows is not rows:
        table = _MoveTable(data, rows)
    position, target, delta, net, uses = table.position, table.target, table.delta, table.net, table.uses
    # the ufuncs' own reductions and ndarray.nonzero: np.all's, .any()'s and np.flatnonzero's wrappers cost
    # more than the work on these few rows (151 calls a 100-job solve)
    every, some = np.logical_and.reduce, np.logical_or.reduce
    live = ~fixed[position]
    added, moves = 0.0, []
    for _ in range(RELOCATE_DEPTH + 1):
        short = slack < 0
        if not some(short):
            return added, moves, slack
        if len(moves) == RELOCATE_DEPTH:
            return None
        frees = some(uses[:, short], axis=1)  # (A,) positions using a short row
        m = (live & frees[position]).nonzero()[0]
        if not len(m):
            return None
        after = slack + net[m]
        helps = some(after[:, short] > slack[short], axis=1)
        below = np.minimum(slack, 0.0)
        good = every(after >= below, axis=1) & helps
        if some(good):
            g = good.nonzero()[0]
            # the least Σ t added, then the first position (then type)
            k = int(g[np.lexsort((position[m[g]], delta[m[g]]))[0]]) if len(g) > 1 else int(g[0])
        else:
            # a chain: the move that leaves the least shortage in all, though it shortens another row (its
            # room is made by the next moves), e.g. a 4-GPU job to a type whose 1-GPU job moves on
            short_after = np.minimum(after, 0.0).sum(axis=1)
            g = (helps & (short_after > float(below.sum()))).nonzero()[0]
            if not len(g):
                return None
            k = int(g[np.lexsort((position[m[g]], delta[m[g]], -short_after[g]))[0]])
        pick = int(m[k])
        p = int(position[pick])
        added += float(delta[pick])
        moves.append((p, int(target[pick])))
        live &= position != p  # a job moved stays
        slack = after[k]
    return None


class _PricedCosts:
    """What the LP's prices (λ on the capacity rows, ν on the admission row; bound L) say of any plan
    P admitting at least the LP's count: Σ t(P) − L >= Σ_(j in P) ``enter[v_j]`` + Σ_(j not in P)
    ``pause[j]``, every term >= 0 (the Lagrangian's terms; λ·(C − Σ u) >= 0 dropped). enter[v] is the
    least reduced cost (``LagrangeResult.rc``, the one reduced-cost fixing reads) of row v's
    configurations; pause[j] = max(0, ν − m_j), m_j the least c + λ·u of job j's (every job admitted:
    no pause). So a plan costing less than ``cost`` has every term below cost − L: a row whose enter
    term, or a job whose pause term, is not cannot be in it so."""

    def __init__(self, data: AllocationModel, lp: "LpBound") -> None:
        _, cs, row_of = data.choices
        self.enter = np.full(len(data.job), np.inf)  # (V,); inf: the row cannot run
        np.minimum.at(self.enter, row_of, lp.lp.rc)
        if lp.proof.admit is None:  # every job runs: no job may pause
            self.pause = np.full(data.J, np.inf)
        else:
            m = segment_min(cs.cost + cs.use @ lp.lp.lam, cs)
            self.pause = np.maximum(0.0, float(lp.lp.nu) - m)
        self.bound = float(lp.bound)


def _relocating_swaps(data: AllocationModel, row_of_job: dict[int, int], free: np.ndarray,
                      budget: _Budget, priced: _PricedCosts | None = None) -> tuple[np.ndarray, bool]:
    """One pass of the moves the exchange pass cannot make, each once other admitted jobs move
    to types with room (:func:`_make_room`):

    - an admitted job to a faster type, when Σ t falls (the costliest RELOCATE_SCAN jobs, each
      its best such move);
    - a paused job admitted (one more job runs), or, pausing one costlier admitted job (the
      RELOCATE_LEAVERS costliest tried), swapped in when Σ t falls (RELOCATE_SCAN paused jobs,
      fastest first, each its best move: one more job first, then the largest saving).

    ``row_of_job`` is updated in place; returns (free, whether anything changed). With ``priced``
    (:class:`_PricedCosts`), a row no cheaper plan can hold is not moved to or admitted on, and a job no
    cheaper plan can pause is not paused, in the moves that keep the count (neither costs a
    :func:`_make_room` call; one more job is always tried: it comes first, whatever its Σ t)."""
    _, feasible, use, t_min = data.minimum
    fastest = _fastest(data)

    def slack() -> float:
        """How far below the plan's Σ t (at minimum configurations) the LP bound is: a cheaper plan's
        every priced term is below it (inf: no prices)."""
        return math.inf if priced is None else float(t_min[list(row_of_job.values())].sum()) - priced.bound

    paused = sorted((j for j in range(data.J) if j not in row_of_job and math.isfinite(fastest[j])),
                    key=lambda j: (fastest[j], j))[:RELOCATE_SCAN]
    changed = False
    table: _MoveTable | None = None  # the moves while the plan stands (rebuilt after a change)
    for j in sorted(row_of_job, key=lambda j: (-t_min[row_of_job[j]], j))[:RELOCATE_SCAN]:  # faster types first
        v = row_of_job[j]
        if not fastest[j] < t_min[v] - IMPROVE_TOL:
            continue
        if table is None:
            admitted, rows = _admitted_rows(row_of_job)
            table = _MoveTable(data, rows)
            below = slack()
        me = np.zeros(len(rows), dtype=bool)
        me[int(np.searchsorted(admitted, j))] = True
        found: tuple[float, int, list[tuple[int, int]], np.ndarray] | None = None
        for w in range(int(data.job_start[j]), int(data.job_start[j + 1])):
            if not feasible[w] or t_min[v] - t_min[w] <= IMPROVE_TOL * max(1.0, t_min[v]):
                continue
            if priced is not None and priced.enter[w] >= below:
                continue  # no plan cheaper than this one runs j on w
            if not budget.take():
                return free, changed
            got = _make_room(data, rows, free + use[v] - use[w], me, table)
            if got is None:
                continue
            saving = t_min[v] - t_min[w] - got[0]
            if saving > IMPROVE_TOL * max(1.0, t_min[v]) and (found is None or saving > found[0]):
                found = (saving, w, got[1], got[2])
        if found is not None:
            _, w, moves, free = found
            for position, x in moves:
                row_of_job[int(admitted[position])] = x
            row_of_job[j] = w
            changed = True
            table = None
    answers: dict[tuple[bytes, int], Any] = {}  # (use coming in, leaver) -> _make_room's, while the plan stands

    def room_for(table: _MoveTable, u: int, i: int, fixed: np.ndarray) -> Any:
        key = (use[u].tobytes(), i)  # rows of many jobs use the same (a type's 1-GPU rows): one answer
        if key not in answers:
            rows = table.rows
            answers[key] = _make_room(data, rows, (free - use[u]) if i < 0 else (free + use[rows[i]] - use[u]), fixed,
                                      table)
        return answers[key]

    read: _MoveTable | None = None  # the table ``cost``, ``order`` and ``below`` were read for
    for p in paused:  # (the moves table the loop above left, while the plan stands)
        if table is None:
            admitted, rows = _admitted_rows(row_of_job)
            table = _MoveTable(data, rows)
        if not len(admitted):
            break
        if read is not table:
            cost = t_min[rows]
            order = np.lexsort((np.arange(len(rows)), -cost)).tolist()  # the costliest admitted jobs first
            none = np.zeros(len(rows), dtype=bool)
            below = slack()
            read = table
        best: tuple[int, float, int, int, list[tuple[int, int]], np.ndarray] | None = None
        for u in range(int(data.job_start[p]), int(data.job_start[p + 1])):
            if not feasible[u]:
                continue
            if not budget.take():
                break
            got = room_for(table, u, -1, none)
            if got is not None:  # one more job: better than any swap
                pick = (1, -t_min[u] - got[0], u, -1, got[1], got[2])
                if best is None or pick[:2] > best[:2]:
                    best = pick
            if best is not None and best[0] == 1:
                continue
            if priced is not None and priced.enter[u] >= below:
                continue  # a swap keeps the count: no plan cheaper than this one runs p on u
            tried = 0
            for i in order:
                saving_most = cost[i] - t_min[u]
                if tried >= RELOCATE_LEAVERS or saving_most <= IMPROVE_TOL * max(1.0, cost[i]):
                    break
                if best is not None and saving_most <= best[1]:
                    break  # moving others adds time: no costlier leaver left saves more
                if priced is not None and priced.pause[int(admitted[i])] >= below:
                    continue  # no plan cheaper than this one pauses it
                tried += 1
                leaving = none.copy()
                leaving[i] = True
                if not budget.take():
                    break
                got = room_for(table, u, i, leaving)
                if got is None:
                    continue
                saving = saving_most - got[0]
                if saving > IMPROVE_TOL * max(1.0, cost[i]) and (best is None or saving > best[1]):
                    best = (0, saving, u, i, got[1], got[2])
        if best is None:
            continue
        _, _, u, i, moves, free = best
        for position, w in moves:
            row_of_job[int(admitted[position])] = w
        if i >= 0:
            del row_of_job[int(admitted[i])]
        row_of_job[p] = u
        changed = True
        answers.clear()
        table = None
    return free, changed


def _one_for_more(data: AllocationModel, row_of_job: dict[int, int], free: np.ndarray,
                  budget: _Budget, first: bool = False) -> tuple[np.ndarray, bool]:
    """A move for the admitted count: pause one admitted job (the RELOCATE_LEAVERS of largest
    dominant share tried) and admit as many paused jobs as then fit (smallest dominant share
    first, each on the fastest of its types where :func:`_make_room` makes room); taken when two
    or more are admitted, the leaver admitting the most, then the least Σ t at minimum (``first``:
    the first leaver that does). ``row_of_job`` is updated in place; returns (free, whether anything
    changed)."""
    _, feasible, use, t_min = data.minimum
    share = (use * inverse_capacity(data.rows.cap)).max(axis=1) if data.rows.R else np.zeros(len(use))
    smallest = np.full(data.J, math.inf)
    np.minimum.at(smallest, data.job, np.where(feasible, share, math.inf))
    paused = sorted((j for j in range(data.J) if j not in row_of_job and math.isfinite(smallest[j])),
                    key=lambda j: (smallest[j], j))[:RELOCATE_SCAN]
    admitted = sorted(row_of_job)
    if not paused or not admitted:
        return free, False
    best: tuple[int, float, dict[int, int], np.ndarray] | None = None  # (jobs gained, Σ t, plan, free)
    for a in sorted(admitted, key=lambda a: (-share[row_of_job[a]], a))[:RELOCATE_LEAVERS]:
        trial = {j: v for j, v in row_of_job.items() if j != a}
        slack = free + use[row_of_job[a]]
        got = 0
        jobs, rows = _admitted_rows(trial)  # rebuilt when a paused job comes in
        table = _MoveTable(data, rows)
        tried: dict[bytes, Any] = {}  # use of the row coming in -> _make_room's answer, while rows and slack stand
        for p in paused:
            lo, hi = int(data.job_start[p]), int(data.job_start[p + 1])
            for u in sorted((u for u in range(lo, hi) if feasible[u]), key=lambda u: (t_min[u], u)):
                if not budget.take():
                    break
                seen = use[u].tobytes()  # rows of many jobs use the same (a type's 1-GPU rows): one answer
                if seen not in tried:
                    tried[seen] = _make_room(data, rows, slack - use[u], np.zeros(len(rows), dtype=bool), table)
                room = tried[seen]
                if room is not None:
                    for position, w in room[1]:
                        trial[int(jobs[position])] = w
                    trial[p] = u
                    slack = room[2]
                    got += 1
                    jobs, rows = _admitted_rows(trial)
                    table = _MoveTable(data, rows)
                    tried = {}
                    break
        if got >= 2:
            total = float(t_min[list(trial.values())].sum())
            if best is None or (got - 1, -total) > (best[0], -best[1]):
                best = (got - 1, total, trial, slack)
            if first:
                break
    if best is None:
        return free, False
    row_of_job.clear()
    row_of_job.update(best[2])
    return best[3], True


def count_start(data: AllocationModel) -> tuple[dict[int, tuple[int, int]], str]:
    """The most jobs the cheap passes admit, at their minimum configurations: the fastest-type
    pass (:func:`typed_admission`, no exchange); the admission LP's jobs first when that admits
    more; then one-for-two trades (:func:`raise_count`) while below the admission LP's count.
    Returns {row: (c0, c1)} and how it was made."""
    start, origin = typed_admission(data, "aware", exchange=False), "fastest at minimum"
    if len(start) < data.J:
        most = admitted_bound(data)[0]
        if len(start) < most:
            counted = typed_admission(data, "aware", preference=-admission_weights(data), exchange=False)
            if len(counted) > len(start):
                start, origin = counted, "admission-LP-guided"
        if start and len(start) < most:
            raised = raise_count(data, start, most)
            if raised is not None:
                start, origin = raised, origin + ", then one job paused for two"
    return start, origin


def lp_guided_pass(data: AllocationModel, mass: np.ndarray, count: int) -> tuple[dict[int, tuple[int, int]], str]:
    """The LP-guided pass at the minimum configurations: the jobs the LP admits first, each on the
    type holding most of its LP weight ``mass`` (V,: the LP's x summed per row) among those it
    still fits, at most ``count`` jobs; made up to ``count`` by one-for-two trades
    (:func:`raise_count`) when it fits fewer. Returns {row: (c0, c1)} and how it was made."""
    plan, how = typed_admission(data, "aware", preference=-mass, limit=count, exchange=False), "LP-guided"
    if len(plan) < count:
        raised = raise_count(data, plan, count)
        if raised is not None:
            plan, how = raised, how + ", then one job paused for two"
    return plan, how


def _free_after(data: AllocationModel, config: dict[int, tuple[int, int]]) -> np.ndarray:
    """The capacity (T·R + quotas,) left by ``config``'s rows at their minimum configurations."""
    use = data.minimum[2]
    return capacity_limit(data.rows.cap) - (use[list(config)].sum(axis=0) if config else 0.0)


def raise_count(data: AllocationModel, config: dict[int, tuple[int, int]],
                 most: int) -> dict[int, tuple[int, int]] | None:
    """``config`` (rows at their minimum configurations) with more jobs by :func:`_one_for_more`,
    each time the first leaver that admits two (up to RELOCATE_PASSES passes while it admits fewer
    than ``most``, within the relocating moves' budget), or None when no such move applies."""
    mins = data.minimum[0]
    free = _free_after(data, config)
    if np.any(free < 0):
        return None
    row_of_job = {int(data.job[v]): v for v in config}
    budget = _Budget(min(RELOCATE_CALLS, RELOCATE_WORK // max(1, len(config))))
    changed = False
    for _ in range(RELOCATE_PASSES):
        if len(row_of_job) >= most:
            break
        free, more = _one_for_more(data, row_of_job, free, budget, first=True)
        if not more:
            break
        changed = True
    return {v: (int(mins[v, 0]), int(mins[v, 1])) for v in row_of_job.values()} if changed else None


def _relocated(data: AllocationModel, config: dict[int, tuple[int, int]], grow: Any,
               most: int | None = None, priced: "_PricedCosts | None" = None) -> dict[int, tuple[int, int]] | None:
    """``config``'s rows at their minimum configurations improved by :func:`_one_for_more`
    while it admits fewer than ``most`` jobs (an upper bound; None: no such move) and by
    :func:`_relocating_swaps` (up to RELOCATE_PASSES passes in all; ``priced``: the LP's terms
    that rule out swaps no better plan makes), then by the exchange pass, and grown; None when
    no such move applies."""
    mins, _, use, _ = data.minimum
    free = capacity_limit(data.rows.cap) - use[list(config)].sum(axis=0) if config else capacity_limit(data.rows.cap)
    if np.any(free < 0):
        return None
    row_of_job = {int(data.job[v]): v for v in config}
    changed = False
    budget = _Budget(min(RELOCATE_CALLS, RELOCATE_WORK // max(1, len(config))))
    for _ in range(RELOCATE_PASSES):
        more = False
        if most is not None and len(row_of_job) < most:
            free, more = _one_for_more(data, row_of_job, free, budget)
        if not more:
            free, more = _relocating_swaps(data, row_of_job, free, budget, priced)
        if not more:
            break
        changed = True
    if not changed:
        return None
    start = {v: (int(mins[v, 0]), int(mins[v, 1])) for v in row_of_job.values()}
    return grow(_exchange(data, start, free))[0]


def _reassign(data: AllocationModel, cs: ChoiceSet, row_of: np.ndarray, config: dict[int, tuple[int, int]],
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


def erase_types(instance: Instance) -> Instance:
    """What a scheduler blind to types sees: the same servers as one type, each job
    at one speed (its plain ``speed``, else its speed on the first type of the
    cluster's order it lists), whatever servers it spans."""
    doc = instance.to_dict()
    doc.pop("queues", None)  # the quotas bind where the jobs land (type_blind_plan), not the blind decision
    doc.pop("cohorts", None)
    for srv in doc["servers"]:
        srv.pop("accelerator", None)
    for job, raw in zip(instance.jobs, doc["jobs"]):
        raw.pop("queue", None)
        raw.pop("running_accelerator", None)
        raw.pop("spread", None)  # blind to locality too
        raw.pop("received_s", None)  # Gavel's per-type history: no types, no history
        raw.pop("allowed_flavors", None)  # where the tasks may land binds in type_blind_plan, not the blind decision
        by_type = raw.pop("speed_by_accelerator", None)
        if job.speed is None and by_type:
            first = next((k for k in instance.accelerators if k in by_type), next(iter(by_type)))
            raw["speed"] = by_type[first]
    return Instance.from_dict(doc, source=f"{instance.source} (types erased)")


def type_blind_plan(instance: Instance, untyped: Any, *, solver: str, started: float, seed: int | None,
                    options: dict[str, Any], bound: bool, choice: str = "blind") -> Plan:
    """A type-blind system on a typed cluster: it decides counts on the cluster as
    one type (:func:`erase_types`; ``untyped(flat) -> Plan``), then each job's tasks
    land on the first type, in the cluster's order, with room for them and a speed
    there and within its queue's quotas (jobs in arrival order); a job that fits on no
    type is paused. ``choice="aware"``: on the type where the job runs fastest at those
    counts among those with room (ties: the cluster's order)."""
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
        fits = []  # (time at c, row) of the rows with room, in the cluster's order
        for v in range(int(data.job_start[j]), int(data.job_start[j + 1])):
            u = c[0] * data.rows.demand[v, 0] + c[1] * data.rows.demand[v, 1]
            t = float(data.rows.time_s(v, *c))
            if math.isfinite(t) and np.all(u <= free):
                fits.append((t, v))
                if choice == "blind":
                    break
        if fits:
            v = min(fits)[1] if choice == "aware" else fits[0][1]
            free -= c[0] * data.rows.demand[v, 0] + c[1] * data.rows.demand[v, 1]
            config[v] = c
        else:
            dropped += 1
    metrics = {"accelerator_choice": choice, "paused_by_types": dropped,
               "heuristic_seconds": time.perf_counter() - started}
    return heuristic_plan(data, config, solver=solver, started=started, seed=seed, options=options, metrics=metrics,
                          bound=bound)
