"""Prices for the ``dorm-lagrangian`` certificate (solver side: it drives HiGHS; the
replay is :mod:`schedopt.partition.certificates`).

The Lagrangian dual of Dorm's P2 with the servers' packings and both budgets priced
is the LP (Dantzig and Wolfe's master)

    max  Σ_i Σ_n util_i·n·w_in
    s.t. Σ_{i of shape t} Σ_n n·w_in <= Σ_c Σ_p a_cpt·λ_cp        (π_t)  shape t's containers sit in packings
         Σ_p λ_cp <= m_c                                       (μ_c)  class c has m_c servers
         Σ_i Σ_n δ_i·|n - n̂_i|·w_in <= B1                      (λ1)   Dorm eq. 15
         Σ_i Σ_n r_i(n)·w_in <= B2                             (λ2)   Dorm eq. 16
         Σ_n w_in = 1,  w, λ >= 0                                      one count per application

over each application's counts n (columns, all of them) and each server class's packings
a (generated: the pricing problem is one server's knapsack over π, a short search of
:func:`schedopt.packing.best_packing` first, then HiGHS's MILP). At every round the replay's formula at the
round's duals is a proven bound (whatever the LP's accuracy), equal to the LP's value
once no packing prices out; the lowest is kept. Artificial columns at a high price keep
the master feasible before the packings that cover n_min exist.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from schedopt.backends.lp import INF, IncrementalLp, solve_milp_dense
from schedopt.deadline import Deadline
from schedopt.packing import best_packing, item_key
from schedopt.partition.certificates import bound_from, dorm_lagrangian_bound
from schedopt.partition.problem import PartitionData, budgets, container_shapes, drf_containers
from schedopt.plan import Proof
from schedopt.tolerances import FIT_TOL, PRICE_TOL, REL_TOL

#: the most counts per application priced as columns (beyond: both ends, n̂, the previous
#: count and an even grid; the replay maximises over every count anyway)
MAX_COUNT_COLUMNS = 400
#: pricing rounds at most (each adds at most one packing per server class)
MAX_ROUNDS = 2000
#: the pricing knapsack: HiGHS's time per call (s), the short search's nodes when HiGHS proves
#: nothing (the final bound is recomputed by check's own search,
#: :func:`~schedopt.partition.certificates.dorm_lagrangian_bound`)
PRICE_SECONDS = 2.0
PRICE_NODES = 2000
#: knapsack nodes a second the final bound's search may count on (a time limit's share left)
NODES_PER_SECOND = 50_000


@dataclass
class DormLagrangian:
    """The bound its proof (kind ``dorm-lagrangian``) gives, and the column generation's rounds,
    seconds and whether it converged (then the bound is the LP's value, to the knapsacks' search)."""

    bound: float
    proof: Proof
    info: dict[str, float | int | bool] = field(default_factory=dict)


def _counts(lo: int, hi: int, fair: int, prev: int | None) -> np.ndarray:
    if hi - lo + 1 <= MAX_COUNT_COLUMNS:
        return np.arange(lo, hi + 1)
    grid = np.linspace(lo, hi, MAX_COUNT_COLUMNS - 3).round().astype(np.int64)
    extra = [min(max(fair, lo), hi)] + ([prev] if prev is not None and lo <= prev <= hi else [])
    return np.unique(np.concatenate([grid, extra]))


def dorm_lagrangian(data: PartitionData, thresholds: tuple[float, float] | None, *,
                    time_limit: float | None = None, bound_time_s: float = 0.0,
                    seed: int | None = None) -> DormLagrangian | None:
    """The ``dorm-lagrangian`` bound on P2 with ``thresholds`` (θ1, θ2) (None: capacity and
    n_max only, a baseline's plans). Stops when no packing prices out or at ``time_limit``
    seconds (then the best round's prices: still a proven bound, above the LP's); None when no
    LP was solved in time. Under a time limit the bound's final knapsack search gets what the
    column generation left of it, and ``bound_time_s`` seconds more when it converged."""
    clock = Deadline(time_limit)
    t0 = time.perf_counter()
    shapes, shape_of = container_shapes(data)
    T, A = len(shapes), data.A
    classes = data.server_classes()
    C = len(classes)
    p2 = thresholds is not None
    b1, b2 = budgets(data, *thresholds) if p2 else (0.0, 0)
    fair = drf_containers(data)
    prev = data.prev.sum(axis=1)
    lo = data.n_min if p2 else np.zeros(A, dtype=np.int64)
    hi = np.maximum(np.minimum(data.n_max, data.ub.sum(axis=1)), lo)
    most = np.bincount(shape_of, weights=data.n_max, minlength=T) if A else np.zeros(T)
    with_adjust = p2 and bool(data.before.any())
    # -- rows: shapes, classes, the two budgets, one convexity row per application
    F, J, V = T + C, T + C + 1, T + C + 2
    lp = IncrementalLp(seed=0 if seed is None else int(seed))
    lp.add_rows(np.concatenate([np.full(T + C + 2, -INF), np.ones(A)]),
                np.concatenate([np.zeros(T), [len(c) for c in classes], [b1 + REL_TOL if p2 else INF],
                                [b2 if with_adjust else INF], np.ones(A)]))
    # -- columns: each application's counts
    cost, starts, index, value = [], [], [], []
    for i in range(A):
        for n in _counts(int(lo[i]), int(hi[i]), int(fair[i]), int(prev[i]) if data.before[i] else None).tolist():
            starts.append(len(index))
            cost.append(-float(data.util[i]) * n)
            entries = [(int(shape_of[i]), float(n)), (F, float(data.delta[i]) * abs(n - int(fair[i])) if p2 else 0.0),
                       (J, 1.0 if with_adjust and data.before[i] and n != prev[i] else 0.0), (V + i, 1.0)]
            for row, coef in entries:
                if coef:
                    index.append(row)
                    value.append(coef)
    # artificial slack on the shape rows and the budgets (a high price: they leave once packings cover)
    big = 1e3 * max(1.0, float(data.util.max(initial=0.0)) * float(max(1, hi.max(initial=1))))
    for row in list(range(T)) + ([F] if p2 else []) + ([J] if with_adjust else []):
        starts.append(len(index))
        cost.append(big)
        index.append(row)
        value.append(-1.0)
    if cost:
        lp.add_cols(np.array(cost), np.zeros(len(cost)), np.full(len(cost), INF), np.array(starts), np.array(index),
                    np.array(value))
    # a first packing per class and shape: that shape alone, as many as fit
    for c, servers in enumerate(classes):
        for t in range(T):
            q = best_packing(shapes, (np.arange(T) == t).astype(float), data.cap[servers[0]], most)[1]
            if q.any():
                _add_packing(lp, q, T + c)
    best_bound, best_duals, converged, rounds = np.inf, None, False, 0
    while rounds < MAX_ROUNDS:
        rounds += 1
        res = lp.solve()
        if not res.optimal:
            break
        y = np.maximum(-res.row_dual, 0.0)  # HiGHS: a binding <= row of a minimisation has dual <= 0
        pi, mu = y[:T], y[T:T + C]
        lam1 = float(y[F]) if p2 else 0.0
        lam2 = float(y[J]) if with_adjust else 0.0
        values = np.zeros(data.S)
        entering = []
        for c, servers in enumerate(classes):
            cap = data.cap[servers[0]]
            v, q, upper = best_packing(shapes, pi, cap, most, node_limit=PRICE_NODES)  # a short search first
            if not _enters(v, mu[c]) and _enters(upper, mu[c]):  # it proves nothing: the exact pricing
                v, q, upper = _price_packing(shapes, pi, cap, most, seed, clock.remaining())
            values[servers] = upper
            if _enters(v, mu[c]) and q.any():
                entering.append((q, T + c))
        bound = bound_from(data, shape_of, pi, values, lam1, lam2, thresholds, fair)
        if bound < best_bound:
            best_bound, best_duals = bound, (pi.copy(), lam1, lam2)
        if not entering:
            converged = True
            break
        if clock.expired():
            break
        for q, row in entering:
            _add_packing(lp, q, row)
    if best_duals is None:  # no LP solved in time
        return None
    pi, lam1, lam2 = best_duals
    proof = Proof(kind="dorm-lagrangian",
                  prices={item_key(data.instance.resources, shapes[t]): float(pi[t]) for t in np.flatnonzero(pi > 0)},
                  fairness_price=lam1 if p2 else None, adjustment_price=lam2 if with_adjust else None)
    # the bound as check replays it (the full knapsack search on every class; under a time limit
    # the nodes the time left allows, shared by the classes, and ``bound_time_s`` more once the
    # prices are final (converged): the bound is then at least the replay's)
    left = clock.remaining()
    extra = bound_time_s if converged else 0.0
    pool = None if left is None else int(max(PRICE_NODES * C, NODES_PER_SECOND * (max(left, 0.0) + extra)))
    bound = dorm_lagrangian_bound(data, proof.prices, proof.fairness_price, proof.adjustment_price, thresholds,
                                  pool=pool)
    return DormLagrangian(float(bound), proof,
                          {"lagrangian_rounds": rounds, "lagrangian_seconds": time.perf_counter() - t0,
                           "lagrangian_converged": converged})


def _price_packing(shapes: np.ndarray, pi: np.ndarray, cap: np.ndarray, most: np.ndarray,
                   seed: int | None, left_s: float | None) -> tuple[float, np.ndarray, float]:
    """The pricing problem, one server's knapsack max π·q (HiGHS's MILP; the short search of
    :func:`~schedopt.packing.best_packing` when HiGHS proves nothing): (value, q, upper bound)."""
    use = np.flatnonzero(pi > 0)
    if len(use):
        room = cap * (1 + FIT_TOL) + FIT_TOL
        res = solve_milp_dense(-pi[use], shapes[use].T, room, np.zeros(len(use)), most[use].astype(float),
                               time_limit=PRICE_SECONDS if left_s is None else max(0.01, min(PRICE_SECONDS, left_s)),
                               seed=seed)
        if res.x is not None and res.dual_bound is not None:
            q = np.zeros(len(pi), dtype=np.int64)
            q[use] = np.round(res.x).astype(np.int64)
            if np.all(q @ shapes <= room):
                return float(pi @ q), q, max(float(pi @ q), -res.dual_bound)
    return best_packing(shapes, pi, cap, most, node_limit=PRICE_NODES)


def _enters(value: float, mu: float) -> bool:
    """A packing worth ``value`` prices out against the class's dual μ."""
    return value > mu + PRICE_TOL * max(1.0, mu)


def _add_packing(lp: IncrementalLp, q: np.ndarray, class_row: int) -> None:
    """A packing column: its containers per shape on the shape rows, 1 on its class's row."""
    rows = np.flatnonzero(q)
    lp.add_col(0.0, 0.0, INF, np.concatenate([rows, [class_row]]), np.concatenate([-q[rows].astype(float), [1.0]]))
