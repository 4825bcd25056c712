"""``optimus-lagrange``: the allocation guided by the dual prices, then improved
by local search; a heuristic whose plan carries the same certified bound.

1. *Admission*: every job when all fit at their minimum, else the ``lp``
   rule (most jobs, then least Σ t_j at the minimum; ``admission.admit``).
2. *Prices*: the Lagrangian dual over the admitted jobs (``dual.py``). At its
   prices λ each job's priced-best configuration is the LP relaxation's choice
   for every job but at most R fractional ones.
3. *Rounding*: the configurations at θ·λ for the least θ >= 1 at which they fit
   (bisection), so the price of each resource rises only as far as needed.
4. *Filling*: eq. 9's greedy from there into whatever capacity is left.
5. *Local search*: first-improvement moves until none improves Σ t_j, at most
   ``max_moves`` of them (a count, so the plan is deterministic; only a
   ``time_limit`` cuts the search by the clock): add a task that fits; shift one task from a job that
   loses least to a job that gains most (a 1-for-1 exchange of tasks of any
   roles, as long as the freed resources make room); trade a job's PS for a
   worker or back. Each accepted move lowers Σ t_j, so the search ends.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedopt.deadline import NO_LIMIT, Deadline
from schedopt.allocation.dual import DualResult, PricingOracle
from schedopt.allocation.relaxation import relax_in_price_space
from schedopt.allocation.greedy import greedy_allocate
from schedopt.allocation.problem import AllocationData
from schedopt.allocation.admission import minimum_configurations
from schedopt.speed import FORMULA_FORMS
from schedopt.tolerances import BISECTION_TOL, TINY, capacity_limit


class _Times:
    """t_j at arbitrary counts for many jobs at once: the formula forms in numpy,
    tables and jobs with a restart cost one at a time (``AllocationData.time_s``).
    Counts outside a job's bounds (or not measured) cost +inf."""

    def __init__(self, data: AllocationData):
        self.data = data
        self.groups: list[tuple[np.ndarray, np.ndarray, Any]] = []
        python = np.ones(data.J, dtype=bool)
        for form in FORMULA_FORMS:  # one vectorised formula per closed form
            jobs = np.array([j for j in range(data.J) if type(data.jobs[j].speed) is form and not data.restarts(j)],
                            dtype=np.int64)
            if len(jobs):
                params = np.array([data.jobs[j].speed.params() for j in jobs.tolist()], dtype=float)
                self.groups.append((jobs, params, form.formula))
                python[jobs] = False
        # the others (tables, restart costs) with few counts: every count's time once, looked up in numpy
        cells = np.prod(data.hi - data.lo + 1, axis=1)
        small = python & (cells <= self.GRID_CELLS)
        self.grid_jobs = np.flatnonzero(small)
        self.python = np.flatnonzero(python & ~small)
        if len(self.grid_jobs):
            g0 = int((data.hi[self.grid_jobs, 0] - data.lo[self.grid_jobs, 0]).max()) + 1
            g1 = int((data.hi[self.grid_jobs, 1] - data.lo[self.grid_jobs, 1]).max()) + 1
            self.grid = np.full((len(self.grid_jobs), g0, g1), np.inf)
            for i, j in enumerate(self.grid_jobs.tolist()):  # the same scalar calls the loop below would make
                lo0, lo1 = int(data.lo[j, 0]), int(data.lo[j, 1])
                for a in range(lo0, int(data.hi[j, 0]) + 1):
                    for b in range(lo1, int(data.hi[j, 1]) + 1):
                        self.grid[i, a - lo0, b - lo1] = float(data.time_s(j, a, b))

    #: a table job (or one with a restart cost) with at most this many counts is looked up in a grid
    GRID_CELLS = 64

    def at(self, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
        """(J,) times with job j at (c0[j], c1[j])."""
        data = self.data
        out = np.full(data.J, np.inf)
        inside = (c0 >= data.lo[:, 0]) & (c0 <= data.hi[:, 0])
        two = data.n_roles == 2
        inside &= np.where(two, (c1 >= data.lo[:, 1]) & (c1 <= data.hi[:, 1]), c1 == 0)
        for jobs, params, formula in self.groups:
            ok = inside[jobs]
            with np.errstate(divide="ignore", invalid="ignore"):
                t = data.Q[jobs] * formula(*params.T, c0[jobs].astype(float), c1[jobs].astype(float))
                if data.offset is not None:
                    t = t + data.offset[jobs]
            out[jobs] = np.where(ok, t, np.inf)
        if len(self.grid_jobs):
            jobs = self.grid_jobs
            ok = inside[jobs]
            i = np.flatnonzero(ok)
            out[jobs[i]] = self.grid[i, c0[jobs[i]] - data.lo[jobs[i], 0], c1[jobs[i]] - data.lo[jobs[i], 1]]
        for j in self.python.tolist():
            if inside[j]:
                out[j] = float(data.time_s(j, int(c0[j]), int(c1[j])))
        return out

    def one(self, j: int, c0: int, c1: int) -> float:
        data = self.data
        if not (data.lo[j, 0] <= c0 <= data.hi[j, 0]):
            return np.inf
        if data.n_roles[j] == 2 and not (data.lo[j, 1] <= c1 <= data.hi[j, 1]):
            return np.inf
        if data.n_roles[j] == 1 and c1 != 0:
            return np.inf
        return float(data.time_s(j, c0, c1))


def round_at_prices(data: AllocationData, oracle: PricingOracle, lam: np.ndarray, members: np.ndarray,
                    fallback: np.ndarray) -> np.ndarray:
    """Counts (J, 2) of the ``members`` at θ·λ for the least θ >= 1 at which they
    fit (40 bisection steps on a log scale); ``fallback`` (their minimums) when
    no θ fits."""
    limit = capacity_limit(data.cap)

    def counts_at(theta: float) -> tuple[np.ndarray, bool]:
        _, counts, _ = oracle.price(lam * theta)
        use = (counts[members, 0, None] * data.demand[members, 0] + counts[members, 1, None] * data.demand[members, 1]).sum(axis=0)
        return counts, bool(np.all(use <= limit))

    counts, ok = counts_at(1.0)
    if ok:
        return counts
    if not np.any(lam > 0):
        lam = 1.0 / np.where(data.cap > 0, data.cap, np.inf)  # no price yet: start from capacity shares
    lo_t, hi_t = 1.0, 2.0
    hi_counts, hi_ok = counts_at(hi_t)
    while not hi_ok and hi_t < 1e12:
        lo_t, hi_t = hi_t, hi_t * 4.0
        hi_counts, hi_ok = counts_at(hi_t)
    if not hi_ok:
        return fallback
    for _ in range(30):
        if hi_t / lo_t < 1 + BISECTION_TOL:
            break
        mid = float(np.sqrt(lo_t * hi_t))
        c, ok = counts_at(mid)
        if ok:
            hi_t, hi_counts = mid, c
        else:
            lo_t = mid
    return hi_counts


def local_search(data: AllocationData, times: _Times, counts: np.ndarray, members: np.ndarray,
                 max_moves: int, clock: Deadline = NO_LIMIT,
                 minimums: np.ndarray | None = None,
                 groups: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """Improving moves on ``counts`` (J, 2) of the ``members``, in rounds, until
    no move lowers Σ t_j, ``max_moves`` were made or ``clock`` expired
    passes. Each round makes the first kind of move that exists, each job in at
    most one move per round:

    - *add*: one more task where it fits, largest gain first;
    - *shift*: one task from the job that loses least to the job that gains
      most, for the pair of task shapes (demand vectors) that improves most,
      batched: the k-th best gain of one shape pairs with the k-th least loss of
      the other while it pays and the capacity holds;
    - *trade*: one PS for one worker in a job, or back;
    - *replace*: with ``minimums`` (J, 2; -1 rows for jobs that cannot run), a
      paused job at its minimum takes the place of the admitted job whose
      Σ t_j it beats most (the count admitted stays). With ``groups`` (J,), rows
      of one group are alternatives (a job's rows on each accelerator type): a
      paused row replaces only while no row of its group is admitted.

    Returns (counts, members, moves by kind)."""
    counts = counts.copy()
    member = np.zeros(data.J, dtype=bool)
    member[members] = True
    demand = data.demand  # (J, 2, R)
    limit = capacity_limit(data.cap)
    two = data.n_roles == 2
    slot_ok = np.stack([np.ones(data.J, dtype=bool), two], axis=1)  # (J, 2) the role exists
    E = np.array([[1, 0], [0, 1]])
    # task shapes: (job, role) slots with equal demand vectors share a shape
    _, shape = np.unique(demand.reshape(-1, data.R), axis=0, return_inverse=True) if data.R else (None, np.zeros(2 * data.J, dtype=np.int64))
    shape = shape.reshape(-1)
    n_shapes = int(shape.max()) + 1 if len(shape) else 0
    shape_demand = np.zeros((n_shapes, data.R))
    shape_demand[shape] = demand.reshape(-1, data.R)

    t = times.at(counts[:, 0], counts[:, 1])
    up = np.stack([times.at(counts[:, 0] + E[r, 0], counts[:, 1] + E[r, 1]) for r in (0, 1)], axis=1)
    dn = np.stack([times.at(counts[:, 0] - E[r, 0], counts[:, 1] - E[r, 1]) for r in (0, 1)], axis=1)
    used = _use(counts, demand, np.flatnonzero(member)).sum(axis=0)
    moves = {"adds": 0, "shifts": 0, "trades": 0, "replacements": 0}
    if minimums is not None:
        can_run = minimums[:, 0] >= 0
        t_min = np.where(can_run, times.at(np.maximum(minimums[:, 0], 0), np.maximum(minimums[:, 1], 0)), np.inf)
        use_min = minimums[:, 0, None] * demand[:, 0] + minimums[:, 1, None] * demand[:, 1]

    def refresh(jobs: list[int]) -> None:
        for j in jobs:
            c0, c1 = int(counts[j, 0]), int(counts[j, 1])
            t[j] = times.one(j, c0, c1) if member[j] else np.inf
            for r in (0, 1):
                up[j, r] = times.one(j, c0 + E[r, 0], c1 + E[r, 1])
                dn[j, r] = times.one(j, c0 - E[r, 0], c1 - E[r, 1])

    def tol(x: np.ndarray | float) -> np.ndarray | float:
        return TINY * np.maximum(1.0, np.abs(x))

    while not clock.expired() and sum(moves.values()) < max_moves:
        budget = max_moves - sum(moves.values())
        active = member[:, None] & slot_ok
        with np.errstate(invalid="ignore"):
            gain = np.where(active, t[:, None] - up, -np.inf)  # (J, 2) Σ t saved by one more task
            loss = np.where(active, dn - t[:, None], np.inf)  # (J, 2) Σ t lost by one task fewer
        gain = np.where(gain > tol(t)[:, None], gain, -np.inf)
        touched: list[int] = []
        # add: tasks that fit as they are, largest gain first
        fits = np.all(demand <= (limit - used)[None, None, :], axis=2) & np.isfinite(gain)
        for idx in np.argsort(-np.where(fits, gain, -np.inf), axis=None, kind="stable")[: int(fits.sum())].tolist():
            j, r = divmod(idx, 2)
            if j in touched or len(touched) >= budget or not np.all(used + demand[j, r] <= limit):
                continue
            counts[j, r] += 1
            used += demand[j, r]
            touched.append(j)
        if touched:
            moves["adds"] += len(touched)
            refresh(touched)
            continue
        # shift: the pair of shapes whose best gain beats the other's least loss by most
        flat_gain, flat_loss = gain.reshape(-1), loss.reshape(-1)
        best_gain = np.full(n_shapes, -np.inf)
        np.maximum.at(best_gain, shape, flat_gain)
        best_loss = np.full(n_shapes, np.inf)
        np.minimum.at(best_loss, shape, flat_loss)
        free = limit - used
        room = np.all(shape_demand[None, :, :] + free[None, None, :] >= shape_demand[:, None, :], axis=2)  # [add, remove]
        with np.errstate(invalid="ignore"):
            value = np.where(room, best_gain[:, None] - best_loss[None, :], -np.inf)
        value = np.where(np.isfinite(value), value, -np.inf)
        if n_shapes and value.max() > 0:
            ga, gr = divmod(int(np.argmax(value)), n_shapes)
            adds = np.flatnonzero((shape == ga) & np.isfinite(flat_gain))
            adds = adds[np.argsort(-flat_gain[adds], kind="stable")]
            removes = np.flatnonzero((shape == gr) & np.isfinite(flat_loss))
            removes = removes[np.argsort(flat_loss[removes], kind="stable")]
            delta = shape_demand[ga] - shape_demand[gr]  # resources each shift takes
            i = k = 0
            while i < len(adds) and k < len(removes) and len(touched) < 2 * budget:
                ia, ir = int(adds[i]), int(removes[k])
                j, a = ia // 2, ir // 2
                if j in touched:
                    i += 1
                    continue
                if a in touched or a == j:
                    k += 1
                    continue
                if not flat_gain[ia] - flat_loss[ir] > tol(t[j]) or not np.all(used + delta <= limit):
                    break
                counts[j, ia % 2] += 1
                counts[a, ir % 2] -= 1
                used += delta
                touched += [j, a]
                moves["shifts"] += 1
                i += 1
                k += 1
            if touched:
                refresh(touched)
                continue
        # trade: one PS for one worker in a job, or back, when it fits and pays
        jobs = np.flatnonzero(member & two)
        for r in (0, 1):
            c0 = counts[jobs, 0] + (1 if r == 0 else -1)
            c1 = counts[jobs, 1] + (1 if r == 1 else -1)
            full0, full1 = counts[:, 0].copy(), counts[:, 1].copy()
            full0[jobs], full1[jobs] = c0, c1
            traded = times.at(full0, full1)[jobs]
            delta = demand[jobs, r] - demand[jobs, 1 - r]
            better = traded < t[jobs] - tol(t[jobs])
            for j, d in zip(jobs[better].tolist(), delta[better]):
                if j in touched or len(touched) >= budget or not np.all(used + d <= limit):
                    continue
                counts[j, r] += 1
                counts[j, 1 - r] -= 1
                used += d
                touched.append(j)
        if touched:
            moves["trades"] += len(touched)
            refresh(touched)
            continue
        if minimums is None:
            break
        # replace: a paused job at its minimum for the admitted job with the longest time it beats
        free = limit - used
        inside = np.flatnonzero(member)
        inside = inside[np.argsort(-t[inside], kind="stable")]
        inside_use = _use(counts, demand, inside)
        paused = ~member & can_run & (t_min < (t[inside[0]] if len(inside) else -np.inf))
        if groups is not None:  # a job admitted on one type is not admitted again on another
            taken = np.zeros(int(groups.max()) + 1, dtype=bool)
            taken[groups[member]] = True
            paused &= ~taken[groups]
        paused = np.flatnonzero(paused)
        for b in paused[np.argsort(t_min[paused], kind="stable")][:256].tolist():
            longer = t[inside] > t_min[b] + tol(t_min[b])
            fit = longer & np.all(free[None, :] + inside_use >= use_min[b][None, :], axis=1)
            if fit.any():
                a = int(inside[np.argmax(fit)])  # the longest: ``inside`` is by time, descending
                used += use_min[b] - inside_use[np.argmax(fit)]
                member[a], member[b] = False, True
                counts[a] = 0
                counts[b] = minimums[b]
                touched = [a, b]
                break
        if not touched:
            break
        moves["replacements"] += 1
        refresh(touched)
    return counts, np.flatnonzero(member), moves


def _use(counts: np.ndarray, demand: np.ndarray, jobs: np.ndarray) -> np.ndarray:
    """Resources (n, R) used by ``jobs`` at ``counts``."""
    return counts[jobs, 0, None] * demand[jobs, 0] + counts[jobs, 1, None] * demand[jobs, 1]


def minimum_counts(data: AllocationData) -> np.ndarray:
    """Each job's configuration of least dominant demand (J, 2); -1 rows for jobs with none."""
    mins, ok = minimum_configurations(data)
    return np.where(ok[:, None], mins, -1)


@dataclass
class PricedAllocation:
    """Steps 2-5 for one admitted set: the jobs admitted in the end (the search may
    replace some), Σ t_j (s), ``counts`` (J, 2), the dual over the set, metrics."""

    members: np.ndarray
    total_s: float
    counts: np.ndarray
    dual: DualResult
    metrics: dict[str, Any]

    def config(self) -> dict[int, tuple[int, int]]:
        return {int(j): (int(self.counts[j, 0]), int(self.counts[j, 1])) for j in sorted(self.members.tolist())}


def allocate_at_prices(data: AllocationData, members: np.ndarray, minimums: np.ndarray, *,
                       max_moves: int, clock: Deadline = NO_LIMIT, groups: np.ndarray | None = None,
                       solved: tuple[PricingOracle, DualResult] | None = None) -> PricedAllocation:
    """Prices over ``members``, rounding at the least feasible price scale, eq. 9
    filling, then at most ``max_moves`` local-search moves (until ``clock`` expires;
    ``groups``: rows that are alternatives, :func:`local_search`). ``solved``: the
    oracle over ``members`` and its dual (no admission row) when the caller has them."""
    if solved is not None:
        oracle, dual = solved
    else:
        oracle = PricingOracle(data, members)
        dual = relax_in_price_space(data, oracle=oracle).result
    counts = round_at_prices(data, oracle, dual.lam, members, np.maximum(minimums, 0))
    rounded = {int(j): (int(counts[j, 0]), int(counts[j, 1])) for j in members.tolist()}
    filled, counters = greedy_allocate(data, rounded, priority_factor=1.0)
    counts = np.zeros((data.J, 2), dtype=np.int64)
    for j, c in filled.items():
        counts[j] = c
    before_search = time.perf_counter()
    moves = {"adds": 0, "shifts": 0, "trades": 0, "replacements": 0}
    if max_moves:
        counts, members, moves = local_search(data, _Times(data), counts, members, max_moves, clock, minimums=minimums,
                                              groups=groups)
    total = float(sum(data.time_s(int(j), int(counts[j, 0]), int(counts[j, 1])) for j in members.tolist()))
    metrics = {"dual_iterations": dual.iterations, "tasks_filled": counters["tasks_added"],
               **{f"search_{k}": v for k, v in moves.items()}, "search_seconds": time.perf_counter() - before_search}
    return PricedAllocation(members=members, total_s=total, counts=counts, dual=dual, metrics=metrics)


#: the exact repair's neighbourhood: jobs re-chosen at once, how many neighbourhoods are tried, and
#: after how many that find nothing it stops
REPAIR_JOBS, REPAIR_ROUNDS, REPAIR_MISSES = 32, 4, 2
#: no repair when the dual's bound proves the plan within this relative gap
#: a neighbourhood's model keeps at most this many configurations (those of least reduced cost at the
#: prices, and the current ones). Its solves have no time limit but the caller's (a clock would make
#: the plan depend on the machine); the models are small
REPAIR_MAX_CONFIGURATIONS = 1_500
#: the exact repair's MILP stops within REPAIR_REL_GAP (tolerances.py) of its neighbourhood's optimum:
#: a tenth of the 0.01 % the repair aims for (issue 38 §1); proving packing neighbourhoods to 1e-9
#: cost seconds each (`schedopt.testing.random_packing_instance`)
#: and explores at most this many branch-and-bound nodes (a deterministic cap on its work: a
#: neighbourhood it cannot settle in that many is left as it is, or to its best plan found)
REPAIR_MAX_NODES = 200
#: a neighbourhood is not started with less time than this left
MIN_REPAIR_SOLVE_S = 0.02


def repair_neighbourhood(member: np.ndarray, priced: np.ndarray, best_priced: np.ndarray, paused: np.ndarray,
                         offset: int, size: int = REPAIR_JOBS) -> np.ndarray:
    """The jobs the exact repair re-chooses (sorted): the first ``offset + 1`` windows (a round
    after a miss widens the last neighbourhood) of each of three rankings: the admitted jobs
    (``member``, J) dearest at the prices (``priced``, J: t_j + λ·u_j), the admitted jobs
    furthest from their priced-best configuration (``best_priced``, J), and ``paused``
    (already cheapest first). Windows of ``size`` jobs split between the rankings."""
    inside = np.flatnonzero(member)
    dear = inside[np.argsort(-priced[inside], kind="stable")]
    regret = inside[np.argsort(-(priced[inside] - best_priced[inside]), kind="stable")]
    part = size // (3 if len(paused) else 2)
    window = slice(0, (offset + 1) * part)  # cumulative: a round after a miss widens the last one
    return np.union1d(np.union1d(dear[window], paused[window]), regret[window])


def least_reduced_cost(rc: np.ndarray, current: list[int], limit: int = REPAIR_MAX_CONFIGURATIONS) -> np.ndarray:
    """Mask of the ``limit`` configurations of least reduced cost ``rc`` (K,; +inf: never kept) and the
    ``current`` ones: a repair neighbourhood's model stays small."""
    keep = rc <= np.partition(rc, limit - 1)[limit - 1]
    keep[current] = True
    return keep


def dual_admission(data: AllocationData, k: int, minimums: np.ndarray, *, oracle: PricingOracle | None = None,
                   dual: DualResult | None = None) -> np.ndarray | None:
    """The jobs the dual with the admission row "at least ``k`` jobs" admits at its
    prices, completed (cheapest priced first) or cut (most expensive first) to
    ``k`` jobs that fit at their minimums; None when they do not fit. ``oracle``
    (over every job) and ``dual`` (solved with ``admit=k``) are reused when given."""
    oracle = oracle or PricingOracle(data)
    dual = dual or relax_in_price_space(data, admit=k, oracle=oracle).result
    best, _, _ = oracle.price(dual.lam)
    ok = minimums[:, 0] >= 0
    order = np.flatnonzero(ok)[np.argsort(best[ok] - dual.nu, kind="stable")]
    chosen = [j for j in order.tolist() if dual.chosen[j]]
    rest = [j for j in order.tolist() if not dual.chosen[j]]
    use = minimums[:, 0, None] * data.demand[:, 0] + minimums[:, 1, None] * data.demand[:, 1]
    limit = capacity_limit(data.cap)
    picked: list[int] = []
    used = np.zeros(data.R)
    for j in chosen + rest:
        if len(picked) == k:
            break
        if np.all(used + use[j] <= limit):
            picked.append(j)
            used += use[j]
    return np.array(sorted(picked), dtype=np.int64) if len(picked) == k else None
