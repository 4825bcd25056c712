"""Optimus's marginal-gain greedy (Optimus §4.1, eq. 9).

Every admitted job starts at its minimum configuration (one PS and one worker
with the default bounds). The gain of adding a task of role r to job j is

    (Q_j/f_j(c) - Q_j/f_j(c + e_r)) / share_r          (eq. 9)

where share_r = max_res demand_r,res / C_res is the task's dominant share.
Each step takes the job with the largest gain and adds the better
of its two moves; the job's gain is then recomputed. It stops when every gain
is non-positive, and on an increment that does not fit: ``stop_rule='paper'``
stops there, ``'skip'`` (default) drops that job and goes on. Jobs flagged
``new`` have their gain scaled by ``priority_factor``. For ``table`` speeds a
move goes to the next measured count along that role's axis.
"""

from __future__ import annotations

import heapq
import math
from typing import Callable, Literal

import numpy as np

from schedopt.allocation.problem import AllocationData
from schedopt.gcpause import paused_gc
from schedopt.speed import FORMULA_FORMS
from schedopt.tolerances import capacity_limit

StopRule = Literal["skip", "paper"]


def _next_count_fn(data: AllocationData, j: int):
    """``next(c0, c1, role) -> new count or None``: the next allowed count of a role."""
    hi0, hi1 = int(data.hi[j, 0]), int(data.hi[j, 1])
    two = data.n_roles[j] == 2
    speed = data.jobs[j].speed
    if not speed.measured:
        def nxt(c0: int, c1: int, role: int) -> int | None:
            if role == 0:
                return c0 + 1 if c0 < hi0 else None
            return c1 + 1 if two and c1 < hi1 else None
        return nxt
    next0, next1 = speed.next_counts()  # dense per-table arrays: each move in O(1)

    def nxt_table(c0: int, c1: int, role: int) -> int | None:
        if role == 0:
            x = int(next0[c0, c1]) if c0 < next0.shape[0] and c1 < next0.shape[1] else -1
            return x if 0 <= x <= hi0 else None
        if not two:
            return None
        y = int(next1[c0, c1]) if c0 < next1.shape[0] and c1 < next1.shape[1] else -1
        return y if 0 <= y <= hi1 else None
    return nxt_table


class _Rows:
    """The per-job numbers :class:`_Moves` reads, as Python lists (one conversion per
    greedy run, not numpy scalar reads per job): Q_j, the dominant shares (J, 2),
    the count bounds hi (J, 2; -1 for a missing second role), whether ρ_j applies (J,)."""

    def __init__(self, data: AllocationData):
        self.q = data.Q.astype(float).tolist()
        self.share = [tuple(row) for row in data.share.astype(float).tolist()]
        hi1 = np.where(data.n_roles == 2, data.hi[:, 1], -1)
        self.hi = list(zip(data.hi[:, 0].astype(int).tolist(), hi1.astype(int).tolist()))
        self.restarts = data.restart_mask().tolist()


class _Moves:
    """Eq. 9 for one job: its time t_j(c) (with the restart cost ρ_j off its
    running counts) and its better move from c."""

    def __init__(self, data: AllocationData, j: int, factor: float, rows: _Rows | None = None):
        rows = rows or _Rows(data)
        speed = data.jobs[j].speed
        self.step_time = speed.scalar_step_time()
        self.q = rows.q[j]
        self.share = rows.share[j]
        self.factor = factor
        restarts = rows.restarts[j]
        self.running = (int(data.running[j, 0]), int(data.running[j, 1])) if restarts else None
        self.restart_s = float(data.restart_s[j]) if restarts else 0.0
        if self.running is not None or speed.measured:
            self.next = _next_count_fn(data, j)
        else:
            # a formula speed with no restart cost: each role grows by one task up to its bound,
            # so the moves are computed inline (the same arithmetic, fewer calls per move)
            self.hi = rows.hi[j]
            self.best = self._best_unit  # type: ignore[method-assign]

    def time(self, c0: int, c1: int) -> float:
        t = self.q * self.step_time(c0, c1) if self.q > 0 else 0.0
        return t + self.restart_s if self.running is not None and (c0, c1) != self.running else t

    def best(self, c0: int, c1: int, cur: float) -> tuple[float, int, int] | None:
        """(gain, role, new count) of the better move from (c0, c1), whose time is
        ``cur``; the worker wins ties; None when neither role can grow."""
        best = None
        for role in (1, 0):  # worker first: on equal gains the worker is added
            n = self.next(c0, c1, role)
            if n is None:
                continue
            t_new = self.time(n, c1) if role == 0 else self.time(c0, n)
            if not math.isfinite(t_new):
                continue
            delta = cur - t_new
            s = self.share[role] * (n - (c0 if role == 0 else c1))
            gain = (delta / s if s > 0 else (math.inf if delta > 0 else 0.0)) * self.factor
            if best is None or gain > best[0]:
                best = (gain, role, n)
        return best

    def _best_unit(self, c0: int, c1: int, cur: float) -> tuple[float, int, int] | None:
        """:meth:`best` for a formula speed without restart cost: the same floats."""
        step, q, factor = self.step_time, self.q, self.factor
        best = None
        for role in (1, 0):  # worker first: on equal gains the worker is added
            n = (c1 if role else c0) + 1
            if n > self.hi[role]:
                continue
            t_new = (q * step(c0, n) if role else q * step(n, c1)) if q > 0 else 0.0
            if not -math.inf < t_new < math.inf:
                continue
            delta = cur - t_new
            s = self.share[role]
            gain = (delta / s if s > 0 else (math.inf if delta > 0 else 0.0)) * factor
            if best is None or gain > best[0]:
                best = (gain, role, n)
        return best


def _start_usage(data: AllocationData, start: dict[int, tuple[int, int]]) -> list[float]:
    """Resources used by the starting configurations, per resource."""
    return data.usage(start).tolist()


def greedy_allocate_heap(
    data: AllocationData,
    start: dict[int, tuple[int, int]],
    *,
    stop_rule: StopRule = "skip",
    priority_factor: float = 0.95,
    keep_running: bool = True,
) -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """Run eq. 9's greedy from ``start`` (job -> configuration) under the
    cluster capacity, literally: a max-heap of each job's best move.
    The reference for :func:`greedy_allocate`, which returns the same plan."""
    cap = capacity_limit(np.asarray(data.cap, dtype=float)).tolist()
    R = len(cap)
    config = dict(start)
    dem = dict(zip(start, data.demand[list(start)].tolist())) if start else {}  # j -> [[per-task demand] per role]
    used = [0.0] * R  # the starting configurations' use, summed in Python (a few hundred jobs at most here)
    for j, (c0, c1) in start.items():
        d0, d1 = dem[j]
        for r in range(R):
            used[r] += c0 * d0[r] + c1 * d1[r]
    rows = _Rows(data)
    moves: dict[int, _Moves] = {}
    cur_t: dict[int, float] = {}
    heap: list[tuple[float, int, int, int]] = []
    for j, (c0, c1) in start.items():
        hi0, hi1 = rows.hi[j]
        if c0 >= hi0 and c1 >= hi1:  # at its largest counts (a rigid job): no move to weigh
            continue
        moves[j] = _Moves(data, j, priority_factor if data.jobs[j].new else 1.0, rows)
        cur_t[j] = moves[j].time(*start[j])
        mv = moves[j].best(*start[j], cur_t[j])
        if mv is not None:
            heap.append((-mv[0], j, mv[1], mv[2]))
    heapq.heapify(heap)

    def best_move(j: int) -> tuple[float, int, int] | None:
        return moves[j].best(*config[j], cur_t[j])
    added = dropped = 0
    while heap:
        neg_gain, j, role, n = heapq.heappop(heap)
        if -neg_gain <= 0:
            break  # the largest gain is non-positive: every gain is (eq. 9 stop)
        c0, c1 = config[j]
        k = n - (c0 if role == 0 else c1)
        d = dem[j][role]
        for r in range(R):
            if used[r] + k * d[r] > cap[r]:
                fits = False
                break
        else:
            fits = True
        if fits:
            for r in range(R):
                used[r] += k * d[r]
            config[j] = (n, c1) if role == 0 else (c0, n)
            cur_t[j] = moves[j].time(*config[j])
            added += k
            mv = best_move(j)
            if mv is not None:
                heapq.heappush(heap, (-mv[0], j, mv[1], mv[2]))
        elif stop_rule == "paper":
            break  # "until some resource in the cluster is used up"
        else:
            dropped += 1  # skip: this job grows no further; the others go on
    counters = {"tasks_added": added, "jobs_stopped_by_capacity": dropped}
    if keep_running and data.running is not None:
        config = keep_running_when_it_pays(data, config, counters, greedy_allocate_heap, stop_rule, priority_factor)
    return config, counters


def _job_path_python(data: AllocationData, j: int, c: tuple[int, int], factor: float,
                     rows: _Rows | None = None) -> list[tuple[int, int, float]]:
    """Job j's sequence of moves (role, new count, gain) from c, as the heap takes
    them: the better move each time, until no move has a positive gain.
    Used for ``table`` speeds, which have no closed formula to vectorise."""
    moves = _Moves(data, j, factor, rows)
    c0, c1 = c
    path = []
    while (mv := moves.best(c0, c1, moves.time(c0, c1))) is not None and mv[0] > 0:
        gain, role, n = mv
        path.append((role, n, gain))
        c0, c1 = (n, c1) if role == 0 else (c0, n)
    return path


class _FormulaSequences:
    """Eq. 9's move sequences of the jobs whose speed is ``form.formula`` (and who pay no
    restart cost), generated a few steps at a time for every job still growing (numpy, one
    step of all of them at once): a job's moves depend only on its own counts, so its
    sequence is the better move each time until no move gains."""

    def __init__(self, data: AllocationData, jobs: np.ndarray, start: dict[int, tuple[int, int]],
                 factor: np.ndarray, form: type):
        self.jobs = jobs
        self.cols = np.array([data.jobs[j].speed.params() for j in jobs], dtype=float).T
        self.f = form.formula
        self.c0 = np.array([start[j][0] for j in jobs], dtype=np.int64)
        self.c1 = np.array([start[j][1] for j in jobs], dtype=np.int64)
        self.hi0, self.hi1 = data.hi[jobs, 0], data.hi[jobs, 1]
        self.two = data.n_roles[jobs] == 2
        self.q = data.Q[jobs]
        self.sh0, self.sh1 = data.share[jobs, 0], data.share[jobs, 1]
        self.fac = factor[jobs]
        with np.errstate(divide="ignore", invalid="ignore"):
            self.cur = np.where(self.q > 0, self.q * self.f(*self.cols, self.c0, self.c1), 0.0)
        self.running = np.full(len(jobs), np.inf)  # each job's least gain so far
        self.alive = np.arange(len(jobs))  # positions of the jobs whose sequence goes on
        self.steps = np.zeros(len(jobs), dtype=np.int64)  # the next move's index in each job's sequence
        self.position = np.full(data.J, -1, dtype=np.int64)
        self.position[jobs] = np.arange(len(jobs))

    def frontier(self) -> float:
        """The largest running-minimum gain a move not generated yet can have (-inf: none)."""
        return float(self.running[self.alive].max()) if len(self.alive) else -np.inf

    def stop(self, jobs: np.ndarray) -> None:
        """End the sequences of ``jobs`` (job indices; others ignored)."""
        pos = self.position[jobs]
        gone = np.zeros(len(self.jobs), dtype=bool)
        gone[pos[pos >= 0]] = True
        self.alive = self.alive[~gone[self.alive]]

    def advance(self, steps: int, level: float = -np.inf) -> list[np.ndarray]:
        """Up to ``steps`` next moves of every alive job whose running minimum is at least
        ``level`` (the others wait: their later moves come after the ones above it):
        arrays (job, role, new count, running-minimum gain, step index, tasks added)."""
        f, cols, q, fac = self.f, self.cols, self.q, self.fac
        c0, c1 = self.c0, self.c1
        out: list[list[np.ndarray]] = [[], [], [], [], []]
        waiting = self.alive[self.running[self.alive] < level]
        a = self.alive[self.running[self.alive] >= level]
        for _ in range(steps):
            if not len(a):
                break
            pa = [col[a] for col in cols]
            with np.errstate(divide="ignore", invalid="ignore"):
                d1 = self.cur[a] - q[a] * f(*pa, c0[a], c1[a] + 1)
                d0 = self.cur[a] - q[a] * f(*pa, c0[a] + 1, c1[a])
                g1 = np.where(self.sh1[a] > 0, d1 / self.sh1[a], np.where(d1 > 0, np.inf, 0.0)) * fac[a]
                g0 = np.where(self.sh0[a] > 0, d0 / self.sh0[a], np.where(d0 > 0, np.inf, 0.0)) * fac[a]
            can1 = self.two[a] & (c1[a] < self.hi1[a])
            can0 = c0[a] < self.hi0[a]
            take1 = can1 & (~can0 | ~(g0 > g1))  # the worker wins ties (eq. 9: "the larger of the two")
            gain = np.where(take1, g1, g0)
            moves = (can0 | can1) & (gain > 0)
            a, take1, gain = a[moves], take1[moves], gain[moves]  # a job with no gaining move is done
            if not len(a):
                break
            c1[a] += take1
            c0[a] += ~take1
            with np.errstate(divide="ignore", invalid="ignore"):
                self.cur[a] = np.where(q[a] > 0, q[a] * f(*[col[a] for col in cols], c0[a], c1[a]), 0.0)
            self.running[a] = np.minimum(self.running[a], gain)
            for lst, arr in zip(out, (self.jobs[a], take1.astype(np.int64), np.where(take1, c1[a], c0[a]),
                                      self.running[a], self.steps[a].copy())):
                lst.append(arr)
            self.steps[a] += 1
        self.alive = np.sort(np.concatenate([waiting, a]))
        kinds = (np.int64, np.int64, np.int64, float, np.int64)
        arrays = [np.concatenate(lst) if lst else np.zeros(0, dtype=kind) for lst, kind in zip(out, kinds)]
        return arrays + [np.ones(len(arrays[0]), dtype=np.int64)]  # each move adds one task


class _Pending:
    """Moves generated and not applied yet, kept as chunks sorted in the heap's order
    (running minimum descending, then job, then step), so the moves above a level are
    each chunk's head."""

    def __init__(self) -> None:
        self.chunks: list[list[np.ndarray]] = []  # (job, role, count, running, step, tasks)

    def add(self, moves: list[np.ndarray]) -> None:
        if len(moves[0]):
            order = np.lexsort((moves[4], moves[0], -moves[3]))
            self.chunks.append([x[order] for x in moves])

    def __bool__(self) -> bool:
        return bool(self.chunks)

    def pop_above(self, level: float) -> list[np.ndarray]:
        """The moves whose running minimum exceeds ``level``, in the heap's order."""
        heads, rest = [], []
        for chunk in self.chunks:
            n = int(np.searchsorted(-chunk[3], -level, side="left"))  # -running ascending: those < -level
            if n:
                heads.append([x[:n] for x in chunk])
            if n < len(chunk[0]):
                rest.append([x[n:] for x in chunk])
        self.chunks = rest
        if not heads:
            return [np.zeros(0, dtype=np.int64)] * 3 + [np.zeros(0)] + [np.zeros(0, dtype=np.int64)] * 2
        moves = [np.concatenate([h[i] for h in heads]) for i in range(6)]
        order = np.lexsort((moves[4], moves[0], -moves[3]))
        return [x[order] for x in moves]


#: the share of the growing jobs (those of largest running-minimum gain) whose sequences
#: grow by ``SEQUENCE_STEPS`` at a time
GROW_SHARE = 0.25


#: :func:`greedy_allocate` runs the heap up to this many jobs, or when the free capacity takes
#: fewer tasks than ``HEAP_BELOW_TASKS_PER_JOB`` per job (measured: the heap is the faster up to
#: about 500 jobs whatever the capacity, and on contended snapshots of 1,000)
HEAP_UP_TO_JOBS, HEAP_BELOW_TASKS_PER_JOB = 500, 2.0


def _addable_tasks(data: AllocationData, start: dict[int, tuple[int, int]]) -> float:
    """An upper bound on the tasks the greedy can add to ``start``: per role, the free
    capacity over the least positive per-task demand of that role, on its tightest resource."""
    if not start:
        return 0.0
    jobs = np.fromiter(start, dtype=np.int64, count=len(start))
    free = np.maximum(data.cap - np.asarray(_start_usage(data, start)), 0.0)
    total = 0.0
    for role in range(2):
        demand = data.demand[jobs, role]  # (n, R)
        grows = data.hi[jobs, role] > np.array([start[int(j)][role] for j in jobs])
        if not grows.any():
            continue
        d = np.where(demand[grows] > 0, demand[grows], np.inf).min(axis=0)  # (R,) least positive demand
        used = np.isfinite(d)
        total += float(np.min(free[used] / d[used])) if used.any() else math.inf
    return total


def greedy_allocate(
    data: AllocationData,
    start: dict[int, tuple[int, int]],
    *,
    stop_rule: StopRule = "skip",
    priority_factor: float = 0.95,
    keep_running: bool = True,
) -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """Eq. 9's greedy from ``start`` (job -> configuration) under the capacity: the
    heap (:func:`greedy_allocate_heap`) up to :data:`HEAP_UP_TO_JOBS` jobs or when the
    capacity left takes fewer than :data:`HEAP_BELOW_TASKS_PER_JOB` tasks per job,
    which stops where the capacity does, else the vectorised move sequences
    (:func:`greedy_allocate_vector`). Both give the same plan (tested); a 40-job round
    on 64 GPUs takes 1-2 ms by the heap against 19-23 ms by the sequences."""
    if len(start) <= HEAP_UP_TO_JOBS or _addable_tasks(data, start) < HEAP_BELOW_TASKS_PER_JOB * len(start):
        return greedy_allocate_heap(data, start, stop_rule=stop_rule, priority_factor=priority_factor,
                                    keep_running=keep_running)
    return greedy_allocate_vector(data, start, stop_rule=stop_rule, priority_factor=priority_factor,
                                  keep_running=keep_running)


#: steps of every growing job's sequence generated at a time (:func:`greedy_allocate_vector`)
SEQUENCE_STEPS = 4
#: moves summed per block while looking for the first that does not fit
APPLY_BLOCK = 1 << 15


def greedy_allocate_vector(
    data: AllocationData,
    start: dict[int, tuple[int, int]],
    *,
    stop_rule: StopRule = "skip",
    priority_factor: float = 0.95,
    keep_running: bool = True,
) -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """Eq. 9's greedy, vectorised; the same plan as :func:`greedy_allocate_heap`.

    A job's moves depend only on its own state, so every job's move sequence is
    generated at once (numpy, one step of all growing jobs per iteration). Popping a
    heap of the jobs' next moves visits the moves in order of each move's *running
    minimum* gain along its job's sequence (ties by job, then step), so sorting
    replaces the heap. The sequences grow :data:`SEQUENCE_STEPS` steps at a time; the
    moves whose running minimum exceeds every growing job's (no later move can come
    before them) are applied in that order under the capacity:

    - up to the first that does not fit, as one running sum (the same floats as adding
      them one by one);
    - past it (``skip``), the free capacity only shrinks, so a move that does not fit
      never will: its job stops there, only each job's moves up to that one are tried
      one by one, and stopped jobs grow no further sequence. ``paper`` stops there.

    So the sequences run only until the capacity is used up, not to their ends. The
    cyclic garbage collector is paused meanwhile (:mod:`schedopt.gcpause`)."""
    with paused_gc():
        return _greedy_vector(data, start, stop_rule=stop_rule, priority_factor=priority_factor,
                              keep_running=keep_running)


def _greedy_vector(data: AllocationData, start: dict[int, tuple[int, int]], *, stop_rule: StopRule,
                   priority_factor: float, keep_running: bool) -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    jobs = np.array(sorted(start), dtype=np.int64)
    factor = np.ones(data.J)  # eq. 9's priority factor for new jobs, read for the growing jobs only
    factor[[j for j in jobs.tolist() if data.jobs[j].new]] = priority_factor
    forms = [type(data.jobs[j].speed) for j in jobs.tolist()]
    rows = _Rows(data)  # read once, not per job
    python_path = [rows.restarts[j] or not data.jobs[j].speed.closed_form for j in jobs.tolist()]
    sequences = []
    for form in FORMULA_FORMS:
        group = np.array([j for j, py, kind in zip(jobs.tolist(), python_path, forms) if not py and issubclass(kind, form)],
                         dtype=np.int64)
        if len(group):
            sequences.append(_FormulaSequences(data, group, start, factor, form))
    pending = _Pending()  # moves generated, not applied yet
    for j, py in zip(jobs, python_path):
        if py:  # tables, and jobs that pay a restart off their running counts: whole sequences in Python
            path = _job_path_python(data, int(j), start[int(j)], float(factor[j]), rows)
            if path:
                roles, counts, gains = (np.array(x) for x in zip(*path))
                prev = np.array([start[int(j)][r] for r in (0, 1)])[roles]  # each role's count before the move
                for r in (0, 1):
                    mine = np.flatnonzero(roles == r)
                    prev[mine[1:]] = counts[mine[:-1]]
                pending.add([np.full(len(path), j), roles.astype(np.int64), counts.astype(np.int64),
                             np.minimum.accumulate(gains), np.arange(len(path)), (counts - prev).astype(np.int64)])
    apply = _MoveApplier(data, start, stop_rule)
    while True:
        # grow the sequences of the jobs of largest running minimum (they hold back the others' moves)
        alive = [seq.running[seq.alive] for seq in sequences if len(seq.alive)]
        if alive:
            every = np.concatenate(alive)
            top = max(1, int(GROW_SHARE * len(every)))
            level = float(np.partition(every, len(every) - top)[len(every) - top]) if top < len(every) else -np.inf
            for seq in sequences:
                if len(seq.alive):
                    moves = seq.advance(SEQUENCE_STEPS, level)
                    pending.add(moves)
                    # a move that cannot fit in what is free now never will (the use only grows):
                    # its job stops there at the latest, so its sequence need not go on
                    never = apply.never_fits(moves[0], moves[1], moves[5])
                    if never.any():
                        seq.stop(moves[0][never])
        frontier = max((seq.frontier() for seq in sequences), default=-np.inf)
        ready = pending.pop_above(frontier)  # no move generated later can come before these
        if len(ready[0]):
            stopped = apply(ready[0], ready[1], ready[2], ready[5])
            if apply.done:
                break
            if len(stopped):
                for seq in sequences:
                    seq.stop(stopped)
        if frontier == -np.inf and not pending:
            break
    out = apply.config()
    counters = {"tasks_added": apply.added, "jobs_stopped_by_capacity": apply.dropped}
    if keep_running and data.running is not None:
        out = keep_running_when_it_pays(data, out, counters, greedy_allocate_vector, stop_rule, priority_factor)
    return out, counters


class _MoveApplier:
    """Moves applied in the heap's order under the capacity (:func:`greedy_allocate_vector`):
    a move that does not fit stops its job (``skip``) or the greedy (``paper``, then ``done``)."""

    def __init__(self, data: AllocationData, start: dict[int, tuple[int, int]], stop_rule: StopRule):
        self.data, self.stop_rule = data, stop_rule
        self.cap = capacity_limit(np.asarray(data.cap, dtype=float))
        self.used = np.asarray(_start_usage(data, start), dtype=float)
        self.admitted = np.fromiter(start, dtype=np.int64, count=len(start))
        self.counts = np.zeros((data.J, 2), dtype=np.int64)
        if len(start):
            self.counts[self.admitted] = np.array(list(start.values()), dtype=np.int64).reshape(len(start), 2)
        self.added = self.dropped = 0
        self.full = False  # past the first move that did not fit
        self.done = False
        self.stopped = np.zeros(data.J, dtype=bool)
        self._demand: list | None = None  # per-task demands as lists, for the one-by-one pass

    def config(self) -> dict[int, tuple[int, int]]:
        counts = self.counts[self.admitted].tolist()
        return {j: (c[0], c[1]) for j, c in zip(self.admitted.tolist(), counts)}

    def __call__(self, job: np.ndarray, role: np.ndarray, count: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        """Apply these moves (in order, after every move applied before); returns the jobs stopped now."""
        f = 0
        if not self.full:
            f = self._prefix(job, role, count, tasks)
            if f == len(job):
                return np.zeros(0, dtype=np.int64)
            self.full = True
            if self.stop_rule == "paper":  # "until some resource in the cluster is used up"
                self.done = True
                return np.zeros(0, dtype=np.int64)
        return self._one_by_one(job[f:], role[f:], count[f:], tasks[f:])

    def never_fits(self, job: np.ndarray, role: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        """Mask of the moves that do not fit in what is free now, so never will (the comparison
        the one-by-one pass makes)."""
        return (self.used[None, :] + tasks[:, None] * self.data.demand[job, role] > self.cap).any(axis=1)

    def _prefix(self, job: np.ndarray, role: np.ndarray, count: np.ndarray, tasks: np.ndarray) -> int:
        """Apply the moves before the first that does not fit (running sums over blocks, the
        same floats as adding them one by one); returns its index (len(job): all fit)."""
        M, lo, f = len(job), 0, len(job)
        used = self.used
        while lo < M:
            hi = min(M, lo + APPLY_BLOCK)
            step_use = tasks[lo:hi, None] * self.data.demand[job[lo:hi], role[lo:hi]]  # k·d, as the loop computes
            cum = np.cumsum(np.vstack([used[None, :], step_use]), axis=0)[1:]
            over = np.flatnonzero((cum > self.cap).any(axis=1))
            if len(over):
                f = lo + int(over[0])
                used = cum[over[0] - 1] if over[0] else used
                break
            used = cum[-1]
            lo = hi
        self.used = used
        np.maximum.at(self.counts, (job[:f], role[:f]), count[:f])  # a job's counts only grow
        self.added += int(tasks[:f].sum())
        return f

    def _one_by_one(self, job: np.ndarray, role: np.ndarray, count: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        """Past the first move that did not fit: the free capacity only shrinks, so a move that
        does not fit now never will. Each live job's moves up to its first such one are tried in
        turn; returns the jobs stopped."""
        data = self.data
        live = ~self.stopped[job]
        job, role, count, tasks = job[live], role[live], count[live], tasks[live]
        M = len(job)
        if not M:
            return np.zeros(0, dtype=np.int64)
        never = self.never_fits(job, role, tasks)
        dead_from = np.full(data.J, M, dtype=np.int64)  # each job's first move that can never fit
        idx = np.arange(M)
        np.minimum.at(dead_from, job[never], idx[never])
        keep = idx[idx <= dead_from[job]]
        if self._demand is None:
            self._demand = data.demand.tolist()  # read once: this pass runs once per release of moves
        demand = self._demand
        used, cap = self.used.tolist(), self.cap.tolist()
        R = len(cap)
        counts = self.counts
        stopped: list[int] = []
        gone: set[int] = set()
        for j, r, n in zip(job[keep].tolist(), role[keep].tolist(), count[keep].tolist()):
            if j in gone:
                continue
            k = n - int(counts[j, r])
            d = demand[j][r]
            ok = True
            for i in range(R):
                if used[i] + k * d[i] > cap[i]:
                    ok = False
                    break
            if ok:
                for i in range(R):
                    used[i] += k * d[i]
                counts[j, r] = n
                self.added += k
            else:
                gone.add(j)
                stopped.append(j)
        self.used = np.array(used)
        self.dropped += len(stopped)
        out = np.array(stopped, dtype=np.int64)
        self.stopped[out] = True
        return out


def keep_running_when_it_pays(data: AllocationData, config: dict[int, tuple[int, int]], counters: dict[str, int],
                              grow: Callable[..., tuple[dict[int, tuple[int, int]], dict[str, int]]],
                              stop_rule: StopRule, priority_factor: float) -> dict[int, tuple[int, int]]:
    """Optimus' "restart only when it pays" (§7, scaling overhead), the greedy's
    extension for the restart cost ρ_j: eq. 9 climbs from each job's minimum
    and can pass by a running job's counts, so each admitted running job that
    the greedy moved goes back to its running counts when that lowers
    Σ t_j (its ρ_j saved against the speed given up) and the cluster has room,
    largest saving first; then eq. 9 grows every job from there into what was
    freed. Never worse than the greedy's plan; ``counters['kept_running']`` counts
    the jobs sent back."""
    config = dict(config)
    used = np.array(_start_usage(data, config))
    candidates = []
    for j, c in config.items():
        if not data.restarts(j):
            continue
        run = (int(data.running[j, 0]), int(data.running[j, 1]))
        if c == run or not (data.lo[j] <= run).all() or not (run <= data.hi[j]).all():
            continue
        saving = float(data.time_s(j, *c)) - float(data.time_s(j, *run))
        if saving > 0:
            candidates.append((-saving, j, run))
    kept = 0
    limit = capacity_limit(data.cap)
    for _, j, run in sorted(candidates):
        c = config[j]
        delta = (run[0] - c[0]) * data.demand[j, 0] + (run[1] - c[1]) * data.demand[j, 1]
        if np.all(used + delta <= limit):
            used += delta
            config[j] = run
            kept += 1
    counters["kept_running"] = kept
    if kept:
        config, more = grow(data, config, stop_rule=stop_rule, priority_factor=priority_factor, keep_running=False)
        counters["tasks_added"] += more["tasks_added"]
    return config
