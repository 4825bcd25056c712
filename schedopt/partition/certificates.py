"""Replaying partition certificates from the instance alone (checker side; docs/certificates.md).

``utilization-lagrangian``: prices μ_k >= 0 on the cluster totals C_k. Every
plan within capacity and n_max has Σ_k u_k = Σ_i n_i·util_i with
util_i = Σ_k d_ik / C_k (Dorm eq. 1) and Σ_i n_i·d_i <= C, so

    Σ_k u_k <= Σ_i n_i·(util_i - μ·d_i) + μ·C <= μ·C + Σ_i n_max_i·max(0, util_i - μ·d_i).

Applications demanding a resource of capacity 0 cannot be placed and add nothing.

``dorm-lagrangian``: prices π_t >= 0 on container shapes t (a shape is a demand
vector, keyed ``cpu=2,mem_gb=8``; a shape not named costs 0), λ1 >= 0 on the
fairness-loss budget B1 (Dorm eq. 15) and λ2 >= 0 on the adjustment budget B2
(eq. 16). Server j holds containers that fit it, so Σ_{i of shape t} x_ij packs
one server and Σ_i π_t(i)·n_i <= Σ_j V_j(π), V_j the most priced shapes server j
holds (an exact knapsack, :func:`schedopt.packing.best_packing`). Adding
λ1·(B1 - Σ_i l_i) >= 0 and λ2·(B2 - Σ_i r_i) >= 0, with l_i = δ_i·|n_i - n̂_i|
(eq. 11-12; ŝ_i = n̂_i·δ_i) and r_i = 1 whenever n_i differs from the previous
count of an application in A^(t-1) (eq. 13-14: a changed count changes a server),
every plan meeting P2 has

    Σ_k u_k <= Σ_j V_j(π) + λ1·B1 + λ2·B2
               + Σ_i max_{n_min_i <= n <= hi_i} [(util_i - π_t(i))·n - λ1·δ_i·|n - n̂_i| - λ2·r_i(n)],

hi_i = the most containers the servers hold of i alone, capped by n_max_i. The
bracket is concave in n but for r_i, so its maximum is at n_min_i, hi_i, n̂_i
clipped, or the previous count. A plan that states no thresholds (a baseline)
claims no budgets: λ1 = λ2 = 0 and n from 0.
"""

from __future__ import annotations

import numpy as np

from schedopt.allocation.certificates import finite_nonneg, price_vector
from schedopt.claims import Replay
from schedopt.instance import Instance
from schedopt.packing import BEST_PACKING_NODES, best_packing, item_key
from schedopt.partition.problem import PartitionData, budgets, compile_partition, container_shapes, drf_containers
from schedopt.tolerances import REL_TOL, capacity_limit


def replay_utilization(instance: Instance, plan, proof) -> float:
    """U(μ): the upper bound on Σ_k u_k that the proof's prices give."""
    mu = price_vector(instance, proof.prices)
    total = instance.capacity_total
    live = total > 0
    bound = float(mu @ capacity_limit(total))
    for job in instance.jobs:
        role = job.roles[job.role_names[0]]
        d = instance.vector(role.demand)
        if np.any((d > 0) & ~live):
            continue
        util = float((d[live] / total[live]).sum())
        bound += role.max_count * max(0.0, util - float(mu @ d))
    return bound


def shape_prices(data: PartitionData, prices: dict[str, float] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(shapes (T, R), shape of each application (A,), π (T,)) from a proof's prices;
    ValueError for a bad price or a shape no application has."""
    shapes, shape_of = container_shapes(data)
    keys = [item_key(data.instance.resources, s) for s in shapes]
    index = {k: t for t, k in enumerate(keys)}
    pi = np.zeros(len(shapes))
    unknown = sorted(set(prices or {}) - set(index))
    if unknown:
        raise ValueError(f"prices name shapes no application has: {unknown[:3]}")
    for key, value in (prices or {}).items():
        pi[index[key]] = finite_nonneg(value, f"price of shape {key!r}")
    return shapes, shape_of, pi


#: a shared node pool (:func:`server_values`) first gives each server class this many nodes
FIRST_PASS_NODES = 20_000


def server_values(data: PartitionData, shapes: np.ndarray, shape_of: np.ndarray, pi: np.ndarray,
                  node_limit: int = BEST_PACKING_NODES, pool: int | None = None) -> np.ndarray:
    """(S,) upper bounds on V_j(π), the most priced shapes one server holds (exact unless
    the knapsack search hits its node limit, then its open bound); a shape at most
    Σ n_max of its applications per server. ``pool`` (a solver short of time): at most this
    many nodes over all classes, each class first searched to :data:`FIRST_PASS_NODES`, then
    the unfinished ones, in turn, to what the pool has left (never past ``node_limit`` a class:
    a replay, which searches each to ``node_limit``, finds a value no higher)."""
    most = np.bincount(shape_of, weights=data.n_max, minlength=len(shapes)) if data.A else np.zeros(len(shapes))
    out = np.zeros(data.S)
    if not np.any(pi > 0):
        return out
    classes = data.server_classes()
    if pool is None:
        for members in classes:
            out[members] = best_packing(shapes, pi, data.cap[members[0]], most, node_limit=node_limit)[2]
        return out
    first = min(node_limit, FIRST_PASS_NODES, max(1, pool // max(1, len(classes))))
    left, open_classes = pool, []
    for members in classes:
        value, _, upper = best_packing(shapes, pi, data.cap[members[0]], most, node_limit=first)
        out[members] = upper
        left -= first
        if upper > value:
            open_classes.append(members)
    for members in open_classes:
        if left <= first:
            break
        reach = min(node_limit, left)
        out[members] = min(float(out[members[0]]), best_packing(shapes, pi, data.cap[members[0]], most, node_limit=reach)[2])
        left -= reach
    return out


def app_terms(data: PartitionData, reduced: np.ndarray, fair: np.ndarray, lam1: float, lam2: float,
              claims_p2: bool) -> np.ndarray:
    """(A,) max over n of (util_i - π_t(i))·n - λ1·δ_i·|n - n̂_i| - λ2·r_i(n) (see the module)."""
    hi = np.minimum(data.n_max, data.ub.sum(axis=1))
    lo = data.n_min if claims_p2 else np.zeros(data.A, dtype=np.int64)
    hi = np.maximum(hi, lo)
    prev = data.prev.sum(axis=1)

    def g(n: np.ndarray) -> np.ndarray:
        return reduced * n - lam1 * data.delta * np.abs(n - fair)

    best = np.maximum.reduce([g(lo), g(hi), g(np.clip(fair, lo, hi))])
    if claims_p2 and data.before.any():
        kept = g(prev.astype(float))
        can_keep = data.before & (prev >= lo) & (prev <= hi)
        best = np.where(data.before, np.maximum(best - lam2, np.where(can_keep, kept, -np.inf)), best)
    return best


def dorm_lagrangian_bound(data: PartitionData, prices: dict[str, float] | None, fairness_price: float | None,
                          adjustment_price: float | None, thresholds: tuple[float, float] | None, *,
                          node_limit: int = BEST_PACKING_NODES, pool: int | None = None) -> float:
    """The bound the module docstring states; ``thresholds`` (θ1, θ2): the plan claims P2 with
    them (None: a plan without Dorm's budgets, λ1 = λ2 = 0 required). The replay searches each
    knapsack to :data:`~schedopt.packing.BEST_PACKING_NODES` nodes; a smaller ``node_limit`` (a
    solver short of time) gives a bound at least as high (the best-first search's open bound
    only falls as it goes), so a stated bound computed so still passes the replay; so does one
    searched with a shared ``pool`` of nodes (:func:`server_values`)."""
    lam1, lam2 = finite_nonneg(fairness_price, "fairness_price"), finite_nonneg(adjustment_price, "adjustment_price")
    if thresholds is None and (lam1 or lam2):
        raise ValueError("budget prices on a plan that states no fairness/adjustment thresholds")
    shapes, shape_of, pi = shape_prices(data, prices)
    return bound_from(data, shape_of, pi, server_values(data, shapes, shape_of, pi, node_limit, pool), lam1, lam2,
                      thresholds)


def bound_from(data: PartitionData, shape_of: np.ndarray, pi: np.ndarray, values: np.ndarray, lam1: float,
               lam2: float, thresholds: tuple[float, float] | None, fair: np.ndarray | None = None) -> float:
    """Σ_j V_j + λ1·B1 + λ2·B2 + Σ_i (the application's term), with ``values`` (S,) the V_j;
    ``fair``: weighted DRF's counts n̂ (A,) when the caller has them (a loop over prices)."""
    bound = float(values.sum())
    if data.A == 0:
        return bound
    b1, b2 = budgets(data, *thresholds) if thresholds is not None else (0.0, 0)
    bound += lam1 * (b1 + REL_TOL) + lam2 * b2  # the checker lets the loss exceed B1 by REL_TOL
    fair = (drf_containers(data) if fair is None else fair).astype(float)
    return bound + float(app_terms(data, data.util - pi[shape_of], fair, lam1, lam2, thresholds is not None).sum())


def plan_thresholds(plan) -> tuple[float, float] | None:
    """(θ1, θ2) a Dorm plan claims P2 with, None for a plan without them."""
    options = getattr(plan, "options", None) or {}
    if "fairness_threshold" not in options:
        return None
    return float(options["fairness_threshold"]), float(options["adjustment_threshold"])


def replay_dorm_lagrangian(instance: Instance, plan, proof) -> float:
    return dorm_lagrangian_bound(compile_partition(instance), proof.prices, proof.fairness_price,
                                 proof.adjustment_price, plan_thresholds(plan))


CERTIFICATES = {"utilization-lagrangian": Replay("bound", replay_utilization),
                "dorm-lagrangian": Replay("bound", replay_dorm_lagrangian)}
