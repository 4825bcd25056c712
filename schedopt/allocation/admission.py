"""Admission: which jobs run when not every job fits at its minimum configuration.

The allocation problem is lexicographic (DESIGN.md): first admit the most jobs,
then minimise Σ_j t_j. Which jobs can run together depends only on their
minimum configurations u_j (R,), so the first objective is a multi-dimensional
knapsack with unit profits,

    max Σ_j y_j   s.t.  Σ_j y_j·u_j <= C,  y_j ∈ {0, 1},

whose LP relaxation (y in [0, 1]) gives the proven ``admitted_upper_bound``.
The heuristics choose among several rules (``ADMISSION_RULES``); ``lp`` is the
default and DESIGN.md's literal rule is ``smallest``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedopt.backends.lp import LpResult, solve_lp_colwise
from schedopt.errors import InputError
from schedopt.allocation.problem import (AllocationData, allowed_on_grid, fits, job_configurations, min_configuration,
                                         pareto_prune, step_times_at, use_of)
from schedopt.tolerances import capacity_limit, floor_count, with_ties

#: the admitted jobs (sorted) and their starting configurations (p_j, w_j)
Admission = tuple[list[int], dict[int, tuple[int, int]]]


def minimum_configurations(data: AllocationData) -> tuple[np.ndarray, np.ndarray]:
    """Each job's allowed configuration of least dominant demand: (counts (J, 2),
    ok (J,)). Formula forms allow every count in bounds, so theirs is the lower
    bound (vectorised); tables are searched one job at a time."""
    mins = data.lo.copy()
    ok = np.ones(data.J, dtype=bool)
    measured = data.step_table().measured
    search = np.flatnonzero(measured)
    if type(data).time_s is AllocationData.time_s and len(search):
        # a table allowed at its least counts has them as its minimum (min_configuration's first test, at once)
        c1 = np.where(data.n_roles[search] == 2, data.lo[search, 1], 0)
        search = search[~np.isfinite(step_times_at(data, search, data.lo[search, 0], c1))]
    for j in search.tolist():
        c = min_configuration(data, j)
        ok[j] = c is not None
        if c is not None:
            mins[j] = c
    return mins, ok


def minimum_use(data: AllocationData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each job's minimum configuration (J, 2), whether it has one (J,), and its use (J, R)."""
    mins, ok = minimum_configurations(data)
    return mins, ok, mins[:, 0, None] * data.demand[:, 0] + mins[:, 1, None] * data.demand[:, 1]


def _fill(order: np.ndarray, use: np.ndarray, free: np.ndarray) -> tuple[list[int], np.ndarray]:
    """First fit: the jobs of ``order`` admitted one by one while each still fits in
    ``free`` (R,) next to the earlier ones; returns them and the room left.

    Vectorised: a job that does not fit now never will (room only shrinks), and
    the prefix of the jobs that fit alone whose running sum fits is admitted at once."""
    admitted: list[int] = []
    rest = np.asarray(order, dtype=np.int64)
    while len(rest):
        rest = rest[np.all(use[rest] <= free, axis=1)]
        if not len(rest):
            break
        over = np.any(np.cumsum(use[rest], axis=0) > free, axis=1)
        n = int(np.argmax(over)) if over.any() else len(rest)
        admitted.extend(rest[:n].tolist())
        free = free - use[rest[:n]].sum(axis=0)
        rest = rest[n + 1:]  # rest[n] does not fit next to rest[:n]
    return admitted, free


def _first_fit(order: np.ndarray, use: np.ndarray, cap: np.ndarray) -> list[int]:
    """The jobs of ``order`` admitted one by one while each still fits next to the earlier ones."""
    return _fill(order, use, capacity_limit(cap))[0]


def _starts(mins: np.ndarray, admitted: list[int]) -> Admission:
    admitted = sorted(admitted)
    return admitted, {j: (int(mins[j, 0]), int(mins[j, 1])) for j in admitted}


def admit_smallest_first(data: AllocationData) -> Admission:
    """Heuristic admission (DESIGN.md): jobs by dominant demand of their minimum
    configuration, ties by arrival then order; admit each that still fits.
    Returns the admitted jobs and their starting configurations."""
    mins, ok, use = minimum_use(data)
    with np.errstate(divide="ignore", invalid="ignore"):
        dominant = np.where(use > 0, use / data.cap, 0.0).max(axis=1) if data.R else np.zeros(data.J)
    candidates = np.flatnonzero(ok)
    order = candidates[np.lexsort((candidates, data.arrival[candidates], dominant[candidates]))]
    return _starts(mins, _first_fit(order, use, data.cap))


#: admission rules of the heuristics: the LP-guided rule (default), DESIGN.md's literal
#: rule, that rule improved by local search, and arrival order
ADMISSION_RULES = ("lp", "smallest", "swap", "arrival")
DEFAULT_ADMISSION = "lp"


def check_admission(solver: str, rule: str, extra: tuple[str, ...] = ()) -> str:
    """``rule`` if it names an admission rule (or one of the solver's own ``extra``
    rules), else an InputError naming ``solver``'s option."""
    known = ADMISSION_RULES + tuple(extra)
    if rule not in known:
        raise InputError(solver, f"admission: expected one of {', '.join(known)}, got {rule!r}")
    return rule


def admit_in_order(data: AllocationData, order: list[int]) -> Admission:
    """First fit in ``order``: each job with an allowed minimum that still fits is
    admitted at it (the queue order of a baseline's own system)."""
    mins, ok, use = minimum_use(data)
    chosen = np.array([j for j in order if ok[j]], dtype=np.int64)
    return _starts(mins, _first_fit(chosen, use, data.cap))


def least_configurations(data: AllocationData) -> dict[int, tuple[int, int]]:
    """Every job's minimum configuration (jobs with none left out)."""
    mins, ok, _ = minimum_use(data)
    return {int(j): (int(mins[j, 0]), int(mins[j, 1])) for j in np.flatnonzero(ok)}


def admit(data: AllocationData, rule: str = DEFAULT_ADMISSION) -> Admission:
    """The heuristics' admission when not every job fits at its minimum: the
    admitted jobs (sorted) and their starting (minimum) configurations.

    ``lp`` (default): rounds the admission LP (most jobs, ties by least t_j),
    then the LP that keeps that count and minimises Σ t_j, and improves each
    rounding by local search: 1-out-2-in moves raise the count (skipped once
    it reaches ⌊LP⌋, which proves it maximal) and 1-for-1 swaps lower Σ t_j.
    It admits at least as many jobs as ``smallest`` and ``swap``.
    ``smallest`` (DESIGN.md, the paper's rule): smallest dominant demand first,
    ties by arrival; it ignores remaining time.
    ``swap``: the most jobs from several orders (dominant share, sum of shares,
    each resource), then the 1-for-1 swaps.
    ``arrival``: first come, first admitted, each job that still fits (what
    Mesos' DRF sorter does when every share is 0: listing order).

    t_j is the remaining time at the minimum configuration, less ρ_j for a job
    running now whose pause would cost a restart (so a running job is swapped
    out only for one that saves more than ρ_j)."""
    if rule not in ADMISSION_RULES:
        raise ValueError(f"admission rule {rule!r}; known: {', '.join(ADMISSION_RULES)}")
    if rule == "smallest":
        return admit_smallest_first(data)
    mins, ok, use = minimum_use(data)
    candidates = np.flatnonzero(ok)
    if rule == "arrival":
        return _starts(mins, _first_fit(candidates[np.lexsort((candidates, data.arrival[candidates]))], use, data.cap))
    if fits(np.zeros(data.R), use[candidates].sum(axis=0), data.cap):
        return _starts(mins, candidates.tolist())  # every job fits: nothing to choose
    t = _time_keys(data, mins, candidates)
    ok = ok & np.isfinite(t)  # a minimum the speed model does not allow (f = 0) admits nothing
    candidates = np.flatnonzero(ok)
    if not len(candidates):
        return [], {}
    search = _Search(use, t, ok, data.cap)
    if rule == "swap":
        return _starts(mins, search.lower_time(_most_by_orders(data, use, candidates)))
    return _starts(mins, _admit_lp(data, use, t, candidates, search))


def _time_keys(data: AllocationData, mins: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """t_j (J,) seconds at the minimum configuration, less ρ_j when pausing j costs a restart; inf for no configuration."""
    t = np.full(data.J, np.inf)
    for j in candidates.tolist():
        pause_cost = float(data.restart_s[j]) if data.restarts(j) else 0.0  # type: ignore[index]
        t[j] = float(data.time_s(j, int(mins[j, 0]), int(mins[j, 1]))) - pause_cost
    return t


def _most_by_orders(data: AllocationData, use: np.ndarray, candidates: np.ndarray) -> list[int]:
    """First fit in several orders (dominant share, sum of shares, each resource), ties by
    arrival; the one admitting the most jobs."""
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = np.where(data.cap > 0, use / np.where(data.cap > 0, data.cap, 1.0), np.where(use > 0, np.inf, 0.0))
    best: list[int] = []
    for key in [norm.max(axis=1), norm.sum(axis=1), *(norm[:, r] for r in range(data.R))]:
        chosen = _first_fit(candidates[np.lexsort((candidates, data.arrival[candidates], key[candidates]))], use, data.cap)
        if len(chosen) > len(best):
            best = chosen
    return best


class _Search:
    """Local search over admitted sets at the minimum configurations: ``use`` (J, R),
    keys ``t`` (J,) seconds, ``ok`` (J,) jobs that have a configuration, capacity (R,)."""

    def __init__(self, use: np.ndarray, t: np.ndarray, ok: np.ndarray, cap: np.ndarray):
        self.use, self.t, self.ok = use, t, ok
        self.limit = capacity_limit(cap)

    def _state(self, admitted: list[int]) -> tuple[np.ndarray, np.ndarray]:
        inside = np.zeros(len(self.t), dtype=bool)
        inside[admitted] = True
        return inside, self.limit - self.use[inside].sum(axis=0)

    def raise_count(self, admitted: list[int], weight: np.ndarray, ceiling: int) -> list[int]:
        """Add every job that fits, then 1-out-2-in moves (the admitted job of largest
        ``weight`` (J,) first; the incoming pair by least weight, then t) until none is
        left or the count reaches ``ceiling`` (a proven bound)."""
        use, t = self.use, self.t
        inside, free = self._state(admitted)
        for _ in range(len(t)):
            changed = False
            outside = np.flatnonzero(~inside & self.ok)
            outside = outside[np.lexsort((t[outside], weight[outside]))]
            added, free = _fill(outside, use, free)  # room left: admit outright
            if added:
                inside[added], changed = True, True
            members = np.flatnonzero(inside)
            count = len(members)
            for a in members[np.argsort(-weight[members], kind="stable")].tolist():
                if count >= ceiling:
                    return np.flatnonzero(inside).tolist()
                outside = outside[~inside[outside]]
                room = free + use[a]
                fit = outside[np.all(use[outside] <= room, axis=1)]
                if len(fit) < 2:
                    continue
                first = int(fit[0])
                second = fit[1:][np.all(use[fit[1:]] <= room - use[first], axis=1)]
                if len(second):
                    inside[a], inside[first], inside[int(second[0])] = False, True, True
                    free = room - use[first] - use[int(second[0])]
                    count, changed = count + 1, True
            if not changed:
                break
        return np.flatnonzero(inside).tolist()

    def lower_time(self, admitted: list[int]) -> list[int]:
        """1-for-1 swaps that keep the count and lower Σ t: a paused job with a
        shorter t replaces the admitted job with the longest one that frees enough
        room for it; a job that fits in the room left is admitted outright. Passes
        repeat until one changes nothing (each lowers Σ t over a fixed count)."""
        use, t = self.use, self.t
        inside, free = self._state(admitted)
        for _ in range(len(t)):
            outside = np.flatnonzero(~inside & self.ok)
            order = outside[np.argsort(t[outside], kind="stable")]
            added, free = _fill(order, use, free)
            inside[added] = True
            members = np.flatnonzero(inside)
            if not len(members):
                break
            members = members[np.argsort(-t[members], kind="stable")]  # longest first
            # a swap needs t_b < the longest t_a, and b to fit with the widest member removed
            order = order[~inside[order]]
            order = order[(t[order] < t[members[0]]) & np.all(use[order] <= free + use[members].max(axis=0), axis=1)]
            changed = bool(added)
            for b in order.tolist():
                k = int(np.searchsorted(-t[members], -with_ties(t[b])))  # members[:k] are longer
                longer = members[:k][inside[members[:k]]]
                room = np.all(free + use[longer] >= use[b], axis=1)
                if room.any():
                    a = int(longer[int(np.argmax(room))])  # the first is the longest
                    inside[a], inside[b] = False, True
                    free = free + use[a] - use[b]
                    changed = True
            if not changed:
                break
        return np.flatnonzero(inside).tolist()


def _admission_lp(cost: np.ndarray, use: np.ndarray, cap: np.ndarray, at_least: int | None = None,
                  group: np.ndarray | None = None, size: np.ndarray | None = None) -> LpResult:
    """min cost·y  s.t.  Σ_k y_k·use_k <= cap (R rows), [Σ_k y_k >= at_least],
    [Σ_{k in g} y_k <= s_g for each ``group`` g of several columns], 0 <= y <= s_g, on HiGHS
    directly; ``use`` (n, R), ``group`` (n,) each column's job (or class of jobs), ``size`` (n,)
    how many jobs its group stands for, s_g (default 1). Row duals follow HiGHS's sign (<= 0
    when binding); the capacity rows come first."""
    limit = np.ones(len(cost)) if size is None else np.asarray(size, dtype=float)
    n, R = use.shape
    col, row = np.nonzero(use)  # row-major: sorted by column
    value = use[col, row]
    extra_rows, lower, upper = 0, [np.full(R, -np.inf)], [np.asarray(cap, dtype=float)]
    if at_least is not None:
        col, row = np.append(col, np.arange(n)), np.append(row, np.full(n, R))
        value = np.append(value, np.ones(n))
        extra_rows, lower, upper = 1, lower + [np.array([float(at_least)])], upper + [np.array([np.inf])]
    if group is not None:
        _, of, columns = np.unique(group, return_inverse=True, return_counts=True)
        shared = columns[of] > 1  # a group of one column needs no row: its bound holds it
        _, first, g_row = np.unique(of[shared], return_index=True, return_inverse=True)
        G = int(g_row.max()) + 1 if len(g_row) else 0
        col = np.append(col, np.flatnonzero(shared))
        row = np.append(row, R + extra_rows + g_row)
        value = np.append(value, np.ones(len(g_row)))
        lower.append(np.full(G, -np.inf))
        upper.append(limit[np.flatnonzero(shared)[first]])
    order = np.lexsort((row, col))
    col, row, value = col[order], row[order], value[order]
    start = np.concatenate([[0], np.cumsum(np.bincount(col, minlength=n))])
    return solve_lp_colwise(cost, start, row, value, row_lower=np.concatenate(lower), row_upper=np.concatenate(upper),
                            col_lower=np.zeros(n), col_upper=limit, presolve=False)  # few rows: presolve dominates


def _admit_lp(data: AllocationData, use: np.ndarray, t: np.ndarray, candidates: np.ndarray, search: _Search) -> list[int]:
    """The ``lp`` rule (see :func:`admit`)."""

    def score(admitted: list[int]) -> tuple[int, float]:
        return len(admitted), -float(t[admitted].sum())

    def first_fit(*keys: np.ndarray) -> list[int]:  # keys as np.lexsort's: the last is the primary one
        return _first_fit(candidates[np.lexsort(tuple(k[candidates] for k in keys))], use, data.cap)

    tc = t[candidates]
    scaled = np.zeros(data.J)
    span = float(tc.max() - tc.min())
    scaled[candidates] = (tc - tc.min()) / span if span > 0 else 0.0  # t in [0, 1]
    # LP 1: max Σ y_j - ε Σ t̂_j y_j under capacity; ε·n = 0.01 keeps the count first
    lp1 = _admission_lp(-(1.0 - 0.01 / len(candidates) * scaled[candidates]), use[candidates], data.cap)
    if not lp1.optimal:  # not expected (y = 0 is feasible); the orders' first fit then stands alone
        return search.lower_time(search.raise_count(_most_by_orders(data, use, candidates), scaled, data.J))
    # ⌊LP⌋ bounds the count; the tie-break may cost the LP's count up to ε·n = 0.01, hence the slack
    ceiling = floor_count(float(lp1.x.sum()) + 0.01)
    y, weight = np.zeros(data.J), use @ np.maximum(-lp1.row_dual, 0.0)  # surrogate size λ·u_j
    y[candidates] = np.round(lp1.x, 9)
    roundings = [search.raise_count(order, weight, ceiling)
                 for order in (first_fit(t, weight, -y), _most_by_orders(data, use, candidates))]
    best = max(roundings, key=score)
    # LP 2: min Σ t_j y_j s.t. Σ y_j >= k (the count reached) and capacity
    k = len(best)
    lp2 = _admission_lp(scaled[candidates], use[candidates], data.cap, at_least=k)
    if lp2.optimal:
        y2, weight2 = np.zeros(data.J), use @ np.maximum(-lp2.row_dual[:-1], 0.0)
        y2[candidates] = np.round(lp2.x, 9)
        reduced = scaled + weight2  # t̂_j + λ·u_j: the LP's price of admitting j
        whole = (y2 >= 1.0).astype(float)
        for order in (first_fit(weight2, t, -y2), first_fit(t, reduced, -whole)):
            roundings.append(search.raise_count(order, weight, ceiling))
    distinct = {tuple(sorted(r)): r for r in roundings}.values()  # the roundings often agree
    return max((search.lower_time(r) for r in distinct), key=score)


def all_fit_at_minimum(data: AllocationData) -> bool:
    total = np.zeros(data.R)
    for j in range(data.J):
        c = min_configuration(data, j)
        if c is None:
            return False
        total += use_of(data, j, c)
    return fits(np.zeros(data.R), total, data.cap)


def admitted_upper_bound(data: AllocationData) -> int:
    """The most jobs any plan admits, proven: ⌊LP⌋ of :func:`admission_lp` (one row per job)."""
    return admission_lp(data)[0]


def admission_columns(rows: AllocationData, least: tuple[np.ndarray, np.ndarray] | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The admission LP's columns: each row's count-minimal allowed configurations (no
    other allowed one uses no more tasks of either role) that fit every capacity row alone
    (an 8-GPU job on a type of 4 GPUs is in no plan: the LP would count half of it on each of
    two such types), as their use (n, R) and their row (n,), by row. A grid form's is its minimum, and so is a rigid job's (one
    allowed count per role); a table may have several. ``least``: each row's minimum
    configuration (V, 2) and whether it is allowed (V,), when the caller has them (then
    only the tables of jobs with a range of counts are searched)."""
    measured = rows.step_table().measured
    rigid = rows.rigid
    read = np.zeros(rows.J, dtype=bool) if least is None else ~measured | rigid  # their minimum, as given
    counts_of: list[np.ndarray] = []
    of: list[np.ndarray] = []
    if read.any():
        mins, ok = least  # type: ignore[misc]
        take = np.flatnonzero(read & ok)
        counts_of.append(mins[take].astype(np.int64))
        of.append(take)
    on_grid = type(rows).time_s is AllocationData.time_s  # allowed = a finite step time: no costs to compute
    for v in np.flatnonzero(~read).tolist():
        if measured[v]:
            counts = allowed_on_grid(rows, v) if on_grid else job_configurations(rows, v)[0]
            counts = counts[pareto_prune(counts, np.zeros(len(counts)))] if len(counts) else counts
        else:
            c = min_configuration(rows, v)
            counts = np.zeros((0, 2), dtype=np.int64) if c is None else np.array([c], dtype=np.int64)
        if len(counts):
            counts_of.append(counts)
            of.append(np.full(len(counts), v, dtype=np.int64))
    if not of or not sum(len(o) for o in of):
        return np.zeros((0, rows.R)), np.zeros(0, dtype=np.int64)
    counts, row = np.concatenate(counts_of), np.concatenate(of)
    order = np.argsort(row, kind="stable")  # by row, each row's in its own order
    counts, row = counts[order], row[order]
    use = counts[:, 0, None] * rows.demand[row, 0] + counts[:, 1, None] * rows.demand[row, 1]
    alone = np.all(use <= capacity_limit(rows.cap), axis=1)  # one that exceeds a capacity row alone is in no plan
    return use[alone], row[alone]


def admission_lp(rows: AllocationData, job_of: np.ndarray | None = None,
                 least: tuple[np.ndarray, np.ndarray] | None = None,
                 prefer: np.ndarray | None = None, weights: bool = True) -> tuple[int, np.ndarray | None, np.ndarray | None]:
    """The admitted-count LP of the one allocation model (rows ``rows``, row v of job
    ``job_of[v]``; one row per job by default): max Σ y over the rows' count-minimal
    configurations, at most one per job, within the capacity rows. Returns (⌊LP⌋ as the
    prices prove it, μ (R,) >= 0, each row's LP weight (V,)). LP duality: every plan admits
    at most μ·C + Σ_j max(0, 1 − min_k μ·u_k) jobs (k over job j's configurations), what
    ``check`` replays; μ is None when no LP was solved (the bound is then the count of
    jobs with an allowed configuration).

    Above :data:`AGGREGATE_ABOVE_COLUMNS` configurations it is solved over classes of jobs whose
    configurations use the same vectors (:func:`_job_classes`; the same LP value and prices), a
    class's LP weight going to its jobs in order of ``prefer`` (V,), each job's least over its rows
    (e.g. its time at its minimum: the shortest first), then job index. Without ``weights`` (None
    returned for them) it is solved over the classes at any size: the count and a proof are all
    the caller wants, and the classes' LP has a handful of columns (100 typed `gavel` jobs: 14 instead
    of 300, 0.25 ms instead of 1 ms)."""
    job_of = np.arange(rows.J) if job_of is None else job_of
    use, row = admission_columns(rows, least)
    weight = np.zeros(rows.J)
    if not len(row):  # no job has a configuration that fits alone: prices 0 prove that none runs
        return 0, np.zeros(rows.R), weight if weights else None
    group = job_of[row]
    runnable = len(np.unique(group))
    if len(row) > AGGREGATE_ABOVE_COLUMNS or not weights:
        key = None
        if prefer is not None:  # each job's least preference over its rows
            key = np.full(int(group.max()) + 1, np.inf)
            np.minimum.at(key, group, np.asarray(prefer, dtype=float)[row])
            key = key[group]
        classes = _job_classes(use, group, key)
        res = _admission_lp(-np.ones(len(classes.use)), classes.use, rows.cap, group=classes.group,
                            size=classes.jobs[classes.group])
        x = classes.spread(res.x) if res.optimal and weights else None
    else:
        res = _admission_lp(-np.ones(len(row)), use, rows.cap, group=group)
        x = res.x
    if not res.optimal:
        return runnable, None, weight if weights else None
    mu = np.maximum(-res.row_dual[: rows.R], 0.0)
    # the bound the prices prove (whatever the LP's accuracy), floored
    least = np.full(int(group.max()) + 1, np.inf)
    np.minimum.at(least, group, use @ mu)
    proven = float(mu @ capacity_limit(rows.cap)) + float(np.maximum(0.0, 1.0 - least[np.isfinite(least)]).sum())
    if not weights:
        return min(runnable, floor_count(proven)), mu, None
    np.add.at(weight, row, x)
    return min(runnable, floor_count(proven)), mu, weight


#: above this many configurations the admission LP is solved over classes of interchangeable jobs
#: (16,000 typed `gavel` jobs, 47,788 configurations in 7 classes: 1.07 -> 0.09 s, the same count and prices).
#: Below it the LP over every job stays: its weights (which jobs a heuristic admits first) come
#: from HiGHS's vertex, and the classes' differ (on 355 typed solves of 11-1,000 jobs aggregating
#: everywhere changed 7 of `optimus-greedy`'s plans, 3 certified tighter and 4 looser, each within 1 %)
AGGREGATE_ABOVE_COLUMNS = 5_000


@dataclass
class _JobClasses:
    """The admission LP's columns (n,) grouped into classes of jobs whose columns use the same
    vectors (every cost is -1 there, so such jobs are interchangeable): ``use`` (m, R) each
    class's distinct vectors, ``group`` (m,) their class (ascending), ``jobs`` (classes,) how many jobs each
    class has; ``member`` (n,) each column's class column, ``rank`` (n,) its job's place among
    its class's jobs (by ``key``, then job index)."""

    use: np.ndarray
    group: np.ndarray
    jobs: np.ndarray
    member: np.ndarray
    rank: np.ndarray

    def spread(self, y: np.ndarray) -> np.ndarray:
        """Each column's share (n,) of its class column's LP value ``y`` (m,): a class's jobs filled
        one after the other in ``rank`` order (every share in [0, 1], each job's at most 1 in all)."""
        y = np.maximum(y, 0.0)
        before = np.cumsum(y) - y  # the class columns come class by class (``group`` ascending)
        first = np.r_[0, np.flatnonzero(np.diff(self.group)) + 1]  # each class's first column
        start = before - np.repeat(before[first], np.diff(np.r_[first, len(y)]))  # from its class's start
        lo, hi = start[self.member], start[self.member] + y[self.member]
        return np.clip(np.minimum(hi, self.rank + 1.0) - np.maximum(lo, self.rank), 0.0, 1.0)


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_inverse=True)`` of a 2-D array (n, m): the distinct rows in
    lexicographic order and each row's place among them (n,), by one ``lexsort`` (0.05 ms where
    numpy's takes 0.3 ms: 600 rows of 3)."""
    n, m = a.shape
    if n == 0 or m == 0:
        return a[:min(n, 1)], np.zeros(n, dtype=np.int64)
    order = np.lexsort(a.T[::-1])  # the first column the primary key
    ranked = a[order]
    new = np.ones(n, dtype=bool)
    new[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ranked[new], inverse


def _job_classes(use: np.ndarray, group: np.ndarray, key: np.ndarray | None = None) -> _JobClasses:
    """The admission LP's jobs grouped by the vectors their columns use (:class:`_JobClasses`):
    typed `gavel` jobs fall into a few classes (4,000 jobs, 11,951 columns: 7), so the LP has a
    handful of columns instead of one per job and type (16,000 jobs: 18 columns; 0.07 s to find the classes)."""
    kinds, kind = _unique_rows(use)
    jobs, of_job = np.unique(group, return_inverse=True)
    order = np.lexsort((kind, of_job))  # by job, then kind
    per_job = np.bincount(of_job, minlength=len(jobs))
    width = int(per_job.max())
    table = np.full((len(jobs), width), -1, dtype=np.int64)  # each job's kinds, sorted, padded
    pos = np.arange(len(order)) - np.repeat(np.cumsum(per_job) - per_job, per_job)
    table[of_job[order], pos] = kind[order]
    signature, job_class = _unique_rows(table)
    counts = np.bincount(job_class, minlength=len(signature))
    cls_of_col, kind_of_col = np.nonzero(signature >= 0)  # the class columns: a class and one of its kinds
    kinds_of = signature[cls_of_col, kind_of_col]
    column_of = np.full((len(signature), len(kinds)), -1, dtype=np.int64)  # (class, kind) -> class column
    column_of[cls_of_col, kinds_of] = np.arange(len(cls_of_col))
    member = column_of[job_class[of_job], kind]
    rank = np.empty(len(jobs), dtype=np.int64)  # each job's place in its class, by key, then job index
    job_key = np.zeros(len(jobs))
    if key is not None:
        job_key[of_job] = key
    by_class = np.lexsort((np.arange(len(jobs)), job_key, job_class))
    rank[by_class] = np.arange(len(jobs)) - np.repeat(np.cumsum(counts) - counts, counts)
    return _JobClasses(use=kinds[kinds_of], group=cls_of_col, jobs=counts, member=member, rank=rank[of_job])
