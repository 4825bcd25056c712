"""Column generation for Dorm's class model: packing patterns priced on demand.

When the container shapes are too many to enumerate every maximal packing
pattern (``dorm.MAX_SHAPES``), the class model's exact packing still works with
the patterns that matter: the LP master (Gilmore and Gomory's cutting-stock
relaxation of P2)

    max  Σ_i util_i·n_i                                       (Dorm eq. 10)
    s.t. Σ_{i of shape t} n_i <= Σ_c Σ_p a_cpt·λ_cp   (π_t)   shape t's containers sit in pattern slots
         Σ_p λ_cp <= m_c                              (μ_c)   class c has m_c servers
         l_i >= |δ_i·n_i - ŝ_i|, Σ_i l_i <= B1                 (Dorm eq. 11, 12, 15)
         n_min_i <= n_i <= n_max_i,  λ, l >= 0                 (Dorm eq. 7, 8)

is solved over a growing set of patterns a (containers per shape that fit one
server of class c together). A new pattern comes from the pricing problem of
each class, the integer knapsack max Σ_t π_t·a_t over the class's capacity
(a greedy first; CP-SAT when the greedy finds nothing). At every exact
pricing round, (π, μ_c + max(0, max_a π·a - μ_c)) is feasible for the dual of
the master over *all* patterns, so

    U = LP value + Σ_c m_c·max(0, max_a π·a - μ_c)

is a proven upper bound on P2 (Farley's bound; CP-SAT's own bound, or a
fractional knapsack bound, stands in for max_a π·a), tight when no pattern
prices out. The integer solution comes from the master LP rounded
(:func:`round_columns`) or from the class model restricted to the generated
patterns ("price and branch"); both decode into an exact placement.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from schedopt.deadline import Deadline
from schedopt.backends.lp import INF, IncrementalLp
from schedopt.packing import greedy_fills
from schedopt.partition.problem import TOL, fill_first_fit
from schedopt.tolerances import FIT_TOL, INTEGRAL_TOL, LP_ZERO, PRICE_TOL, TINY, floor_count

if TYPE_CHECKING:
    from schedopt.partition.model import DormModel

#: a pattern enters when its reduced value exceeds this (relative to μ_c and 1)
#: CP-SAT's time per pricing call (s); its bound still certifies U when it stops early
PRICE_SECONDS = 2.0
#: penalty per uncovered container slot in phase 1 (per unit of utilization)
ARTIFICIAL_COST = 1e3


@dataclass
class Columns:
    """Generated patterns per class, (P_c, T) ints; ``bound`` is the proven upper
    bound U on P2 (None when no exact pricing round finished), ``lp_value`` the
    last master's value, ``converged`` when no pattern priced out."""

    patterns: list[np.ndarray]
    lam: list[np.ndarray]  # the last master's λ per class (P_c,)
    n: np.ndarray  # the last master's n (A,)
    bound: float | None
    lp_value: float
    converged: bool
    feasible: bool
    info: dict[str, float | int | bool] = field(default_factory=dict)


def greedy_pattern(value: np.ndarray, shapes: np.ndarray, limit: np.ndarray, most: np.ndarray) -> np.ndarray:
    """A good pattern for prices ``value`` (T,): the best of three greedy fills of
    one server (capacity ``limit`` (R,), :func:`~schedopt.packing.greedy_fills`), shapes in order
    of value per summed, per largest and per nothing (value alone) share of the server; at most
    ``most`` (T,) of each shape."""
    usable = (value > 0) & (most > 0)
    if not usable.any():
        return np.zeros(len(value), dtype=np.int64)
    share = shapes / np.where(limit > 0, limit, np.inf)  # (T, R)
    keys = [value / np.maximum(size, TINY) for size in (share.sum(axis=1), share.max(axis=1), np.ones(len(value)))]
    return greedy_fills(shapes, value, limit, most, keys, usable)[1]


def fractional_bound(value: np.ndarray, shapes: np.ndarray, limit: np.ndarray, most: np.ndarray) -> float:
    """A cheap upper bound on the pricing knapsack's maximum: for each resource
    alone, the fractional knapsack (shapes by value per unit of that resource,
    at most ``most`` each), and the smallest of these over the resources."""
    use = (value > 0) & (most > 0)
    if not use.any():
        return 0.0
    v, s, n = value[use], shapes[use], most[use].astype(float)
    best = float(v @ n)  # every shape at its most
    for r in range(shapes.shape[1]):
        if limit[r] <= 0 and np.any(s[:, r] > 0):
            free = s[:, r] <= 0
            best = min(best, float(v[free] @ n[free]))
            continue
        free = s[:, r] <= 0
        total = float(v[free] @ n[free])  # shapes that do not use r come in whole
        order = np.argsort(-(v[~free] / s[~free, r]), kind="stable")
        vv, ss, nn = v[~free][order], s[~free, r][order], n[~free][order]
        room = np.cumsum(ss * nn)
        whole = room <= limit[r]
        total += float(vv[whole] @ nn[whole])
        k = int(np.argmin(whole)) if not whole.all() else len(vv)
        if k < len(vv):
            used = float(room[k - 1]) if k > 0 else 0.0
            total += vv[k] * (limit[r] - used) / ss[k]
        best = min(best, total)
    return best


#: integer scale of the pricing knapsack: each capacity becomes PRICE_UNITS units, the
#: largest value PRICE_VALUE_UNITS
PRICE_UNITS = 10**6
PRICE_VALUE_UNITS = 10**9


def exact_pattern(value: np.ndarray, shapes: np.ndarray, limit: np.ndarray, most: np.ndarray, *,
                  time_limit: float, seed: int | None) -> tuple[np.ndarray, float]:
    """The pricing knapsack max value·a s.t. shapes^T a <= limit, 0 <= a <= most,
    integer, by CP-SAT: (the best pattern found that fits (T,), a proven upper
    bound on the maximum). CP-SAT needs integers: demands are rounded down and
    capacities down to ``PRICE_UNITS`` per capacity (every pattern that fits still
    fits: a relaxation), values to ``PRICE_VALUE_UNITS`` per largest; the bound adds back what
    rounding the values can hide, and a pattern that the rounding let in but
    the true capacities do not is dropped. Without OR-Tools (an optional extra)
    the same knapsack is solved by HiGHS (:func:`exact_pattern_highs`)."""
    from schedopt.backends.deps import why_unavailable

    if why_unavailable("ortools") is not None:
        return exact_pattern_highs(value, shapes, limit, most, time_limit=time_limit, seed=seed)
    from schedopt.backends.cpsat import has_solution, load_cp_model, make_solver

    cp_model = load_cp_model()

    T = len(value)
    a = np.zeros(T, dtype=np.int64)
    cols = np.flatnonzero((value > 0) & (most > 0))
    if len(cols) == 0:
        return a, 0.0
    live = limit > 0
    scale = np.where(live, PRICE_UNITS / np.where(live, limit, 1.0), 0.0)  # (R,)
    dem = np.floor(shapes[cols] * scale[None, :] + INTEGRAL_TOL).astype(np.int64)  # (n, R)
    cap = np.floor(limit * scale + INTEGRAL_TOL).astype(np.int64)
    k = PRICE_VALUE_UNITS / float(value[cols].max())
    val = np.round(value[cols] * k).astype(np.int64)
    m = cp_model.CpModel()
    v = [m.new_int_var(0, int(most[t]), f"a_{t}") for t in cols.tolist()]
    for r in np.flatnonzero(live & (dem.sum(axis=0) > 0)).tolist():
        m.add(sum(int(dem[q, r]) * v[q] for q in range(len(cols)) if dem[q, r]) <= int(cap[r]))
    m.maximize(sum(int(val[q]) * v[q] for q in range(len(cols))))
    solver = make_solver(1, seed, time_limit)
    code = solver.solve(m)
    slack = 0.5 * float(most[cols].sum()) / k  # what rounding the values can hide
    if has_solution(solver, code):
        a[cols] = [solver.value(x) for x in v]
        if np.any(shapes.T @ a > limit + FIT_TOL):
            a[:] = 0
        upper = float(solver.best_objective_bound) / k + slack
    else:
        upper = float(value[cols] @ most[cols])
    return a, max(upper, float(value @ a))


def exact_pattern_highs(value: np.ndarray, shapes: np.ndarray, limit: np.ndarray, most: np.ndarray, *,
                        time_limit: float, seed: int | None) -> tuple[np.ndarray, float]:
    """The pricing knapsack of :func:`exact_pattern` as a MIP on HiGHS: (the best
    pattern found (T,), HiGHS's proven upper bound on the maximum)."""
    from schedopt.backends.lp import solve_milp_dense

    T = len(value)
    a = np.zeros(T, dtype=np.int64)
    cols = np.flatnonzero((value > 0) & (most > 0))
    if len(cols) == 0:
        return a, 0.0
    res = solve_milp_dense(-value[cols], shapes[cols].T, limit, np.zeros(len(cols)), most[cols].astype(float),
                           time_limit=time_limit, seed=seed)
    upper = float(value[cols] @ most[cols]) if res.dual_bound is None else -res.dual_bound
    if res.x is not None:
        a[cols] = np.round(res.x).astype(np.int64)
        if np.any(shapes.T @ a > limit + FIT_TOL):
            a[:] = 0
    return a, max(upper, float(value @ a))


def generate_columns(model: "DormModel", classes: list[np.ndarray], shapes: np.ndarray, shape_of: np.ndarray, *,
                     time_limit: float | None, seed: int | None, start: list[np.ndarray] | None = None) -> Columns:
    """Column generation for the class model of P2 (module docstring). ``start``:
    placements x (A, S) whose servers' contents seed the patterns. Applications
    with previous containers are not supported here (the caller checks)."""
    t0 = time.perf_counter()
    d = model.data
    A, T, C = d.A, len(shapes), len(classes)
    sizes = np.array([len(c) for c in classes], dtype=float)
    limits = [d.cap[c[0]] * (1 + TOL) + TOL for c in classes]
    # per shape: the most containers the whole cluster can use (Σ n_max of its applications)
    shape_max = np.bincount(shape_of, weights=d.n_max, minlength=T).astype(np.int64)
    most = []  # (T,) per class: how many of each shape one server holds alone
    for lim in limits:
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(shapes > 0, lim[None, :] / np.where(shapes > 0, shapes, 1.0), np.inf).min(axis=1)
        most.append(np.minimum(np.floor(np.where(np.isfinite(fit), fit, shape_max) + TOL), shape_max).astype(np.int64))
    n_upper = np.minimum(d.n_max, d.ub.sum(axis=1)).astype(float)
    fair_share = model.fair * d.delta

    # -- the master LP (a minimisation of -Σ util·n), rows: cover (T), class (C), loss (2A), budget (1)
    inf = INF
    h = IncrementalLp(seed=int(seed or 0))
    rows_lower = np.full(T + C + 2 * A + 1, -inf)
    rows_upper = np.concatenate([np.zeros(T), sizes, fair_share, -fair_share, [model.fairness_budget]])
    h.add_rows(rows_lower, rows_upper)
    cover, klass, above, below, budget = 0, T, T + C, T + C + A, T + C + 2 * A
    # n_i: cover row of its shape (+1), loss rows (+δ_i, -δ_i)
    idx = np.stack([cover + shape_of, above + np.arange(A), below + np.arange(A)], axis=1).reshape(-1)
    val = np.stack([np.ones(A), d.delta, -d.delta], axis=1).reshape(-1)
    h.add_cols(-d.util.astype(float), d.n_min.astype(float), np.maximum(n_upper, d.n_min).astype(float),
               np.arange(0, 3 * A, 3), idx, val)
    # l_i: loss rows (-1, -1), budget (+1)
    idx = np.stack([above + np.arange(A), below + np.arange(A), np.full(A, budget)], axis=1).reshape(-1)
    val = np.tile([-1.0, -1.0, 1.0], A)
    h.add_cols(np.zeros(A), np.zeros(A), np.full(A, inf), np.arange(0, 3 * A, 3), idx, val)
    # artificial slots per shape (phase 1): a big penalty, never in the answer of a feasible P2
    penalty = ARTIFICIAL_COST * max(1.0, float(d.util.max(initial=0.0)))
    h.add_cols(np.full(T, penalty), np.zeros(T), np.full(T, inf), np.arange(T), cover + np.arange(T), -np.ones(T))
    first_pattern_col = 2 * A + T

    patterns: list[list[np.ndarray]] = [[] for _ in range(C)]
    seen: list[set[bytes]] = [set() for _ in range(C)]
    owner: list[int] = []  # the class of each pattern column, in the order they were added

    def add(c: int, a: np.ndarray) -> bool:
        key = a.tobytes()
        if not a.any() or key in seen[c]:
            return False
        seen[c].add(key)
        patterns[c].append(a.copy())
        owner.append(c)
        nz = np.flatnonzero(a)
        ri = np.concatenate([cover + nz, [klass + c]]).astype(np.int32)
        rv = np.concatenate([-a[nz].astype(float), [1.0]])
        h.add_col(0.0, 0.0, inf, ri, rv)
        return True

    # -- seed columns: each shape alone, and every server's contents in the starting placements
    for c in range(C):
        for t in np.flatnonzero(most[c] > 0).tolist():
            a = np.zeros(T, dtype=np.int64)
            a[t] = most[c][t]
            add(c, a)
    for x in start or []:
        for c, servers in enumerate(classes):
            for j in servers.tolist():
                a = np.bincount(shape_of, weights=x[:, j], minlength=T).astype(np.int64)
                add(c, a)

    bound: float | None = None
    value = 0.0
    lam_all, n_lp = np.zeros(0), np.zeros(A)
    converged = feasible = False
    iterations = exact_rounds = screened = 0
    clock = Deadline(time_limit, t0)
    while True:
        lp = h.solve()
        if not lp.optimal:
            break
        iterations += 1
        duals = lp.row_dual
        pi = np.maximum(-duals[cover:cover + T], 0.0)
        mu = np.maximum(-duals[klass:klass + C], 0.0)
        value = -lp.objective
        col_value = lp.x
        n_lp, lam_all = col_value[:A].copy(), col_value[first_pattern_col:].copy()
        feasible = bool(col_value[2 * A:first_pattern_col].max(initial=0.0) <= LP_ZERO)
        if clock.expired():
            break
        added = 0
        for c in range(C):
            a = greedy_pattern(pi, shapes, limits[c], most[c])
            if pi @ a - mu[c] > PRICE_TOL * max(1.0, mu[c]):
                added += add(c, a)
        if added:
            continue
        # no greedy pattern prices out: price exactly, which also certifies a bound
        exact_rounds += 1
        gain = 0.0
        complete = True  # every class priced (none skipped for time)
        for c in range(C):
            rem = clock.remaining()
            left = PRICE_SECONDS if rem is None else min(PRICE_SECONDS, rem)
            if left <= 0:
                complete = False
                break
            upper = fractional_bound(pi, shapes, limits[c], most[c])
            if upper - mu[c] <= PRICE_TOL * max(1.0, mu[c]):
                screened += 1
                gain += sizes[c] * max(0.0, upper - mu[c])
                continue
            a, exact_upper = exact_pattern(pi, shapes, limits[c], most[c], time_limit=left, seed=seed)
            upper = min(upper, exact_upper)
            gain += sizes[c] * max(0.0, upper - mu[c])
            if pi @ a - mu[c] > PRICE_TOL * max(1.0, mu[c]):
                added += add(c, a)
        if complete:
            u = value + gain
            bound = u if bound is None else min(bound, u)
        if not added:  # converged when the bound, too, says that no pattern prices out
            converged = complete and gain <= PRICE_TOL * max(1.0, abs(value))
            break
    info = {"colgen_iterations": iterations, "colgen_exact_rounds": exact_rounds, "colgen_screened": screened,
            "colgen_patterns": int(sum(len(p) for p in patterns)), "colgen_seconds": time.perf_counter() - t0,
            "colgen_lp_value": value, "colgen_converged": converged}
    out = [np.array(p, dtype=np.int64).reshape(len(p), T) for p in patterns]
    owned = np.array(owner, dtype=np.int64)
    lam_all = np.concatenate([lam_all, np.zeros(len(owned) - len(lam_all))])  # columns added after the last solve
    lam = [lam_all[owned == c] for c in range(C)]
    return Columns(out, lam, n_lp, bound, value, converged, feasible, info)


def round_columns(model: "DormModel", classes: list[np.ndarray], cols: Columns, shape_of: np.ndarray) -> np.ndarray | None:
    """A placement x (A, S) from the master LP's solution, independent of any MIP:
    each class uses floor(λ_cp) servers of pattern p, and its servers left over
    go to the patterns with the largest fractional λ; each application gets
    floor(n_i) containers (at least n_min) in the slots of its shape, class by
    class (n_min that misses a slot goes first-fit into the room left); what
    is left over is filled up. None when some application cannot get n_min."""
    from schedopt.partition.model import decode_patterns, fill_up

    d = model.data
    T = cols.patterns[0].shape[1]  # every class's array is (P_c, T), even with no pattern
    z = []
    slots = np.zeros((len(classes), T), dtype=np.int64)
    for c, servers in enumerate(classes):
        lam = cols.lam[c]
        zc = np.floor(lam + INTEGRAL_TOL).astype(np.int64)
        spare = len(servers) - int(zc.sum())
        for p in np.argsort(-(lam - zc), kind="stable")[:max(spare, 0)].tolist():
            if lam[p] - zc[p] > INTEGRAL_TOL:
                zc[p] += 1
        z.append(zc)
        if len(zc):
            slots[c] = zc @ cols.patterns[c]
    n = np.clip(floor_count(cols.n), d.n_min, d.n_max)
    y = np.zeros((d.A, len(classes)), dtype=np.int64)
    order = np.lexsort((np.arange(d.A), -d.util)).tolist()
    for want in (d.n_min, n):  # everyone's n_min first, then the rest of floor(n)
        for i in order:
            t, need = int(shape_of[i]), int(want[i]) - int(y[i].sum())
            for c in range(len(classes)):
                take = min(max(need, 0), int(slots[c, t]))
                y[i, c] += take
                slots[c, t] -= take
                need -= take
    x = decode_patterns(d, classes, y, z, cols.patterns, shape_of)
    if x is None:
        return None
    # n_min the rounded slots missed: first fit into what the patterns left free
    limit = d.cap * (1 + TOL) + TOL
    load = x.T.astype(float) @ d.demand
    for i in np.flatnonzero(x.sum(axis=1) < d.n_min).tolist():
        take = fill_first_fit(limit, load, d.demand[i], int(d.n_min[i] - x[i].sum()))
        x[i] += take
        load += take[:, None] * d.demand[i][None, :]
    if np.any(x.sum(axis=1) < d.n_min):
        return None
    return fill_up(model, x)
