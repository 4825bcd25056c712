"""Packing identical servers exactly: the maximal ways to fill one server
(Gilmore-Gomory patterns), shared by Dorm's class model and exact placement's."""

from __future__ import annotations

import heapq

import numpy as np
from schedopt.tolerances import FIT_TOL, INTEGRAL_TOL, TINY

def item_key(resources: list[str], vector: np.ndarray) -> str:
    """A packed item's name in a certificate (a placement part, a Dorm container shape): its
    resource vector, e.g. ``cpu=8,gpu=1,mem_gb=20``."""
    return ",".join(f"{r}={float(v):.9g}" for r, v in zip(resources, vector.tolist()))


#: capacity tolerance, the checkers' (relative and absolute)
TOL = FIT_TOL  # the library's capacity slack (tolerances.py)


def maximal_patterns(shapes: np.ndarray, capacity: np.ndarray, limit: int = 20000) -> np.ndarray | None:
    """Every maximal way to fill one server of ``capacity`` (R,) with containers
    of the given ``shapes`` (T, R): count vectors q (P, T) with Σ_t q_t·shape_t
    <= capacity to which no container can be added. None if more than ``limit``."""
    T = len(shapes)
    room_tol = capacity * (1 + TOL) + TOL
    fits_alone = [bool(np.all(shapes[t] <= room_tol)) for t in range(T)]
    out: list[list[int]] = []
    q = [0] * T

    def rec(t: int, load: np.ndarray) -> bool:
        if len(out) > limit:
            return False
        if t == T:
            left = room_tol - load
            if not any(fits_alone[u] and np.all(shapes[u] <= left) for u in range(T)):
                out.append(list(q))
            return True
        if not fits_alone[t]:
            return rec(t + 1, load)
        pos = shapes[t] > 0
        most = int(np.floor(np.min((room_tol[pos] - load[pos]) / shapes[t][pos]))) if pos.any() else 0
        for k in range(max(most, 0), -1, -1):
            q[t] = k
            if not rec(t + 1, load + k * shapes[t]):
                return False
        q[t] = 0
        return True

    if not rec(0, np.zeros_like(capacity, dtype=float)):
        return None
    return np.array(out, dtype=np.int64).reshape(len(out), T)


#: branch-and-bound nodes :func:`best_packing` explores before it answers with its bound
BEST_PACKING_NODES = 500_000


class _SuffixBounds:
    """What :meth:`bound` needs about shapes ``k..`` (values, shapes (T, R), ``most``, resource
    prices ρ), precomputed for every k, so a node's bound costs O(R) (not O(T·R))."""

    def __init__(self, value: np.ndarray, shapes: np.ndarray, most: np.ndarray, rho: np.ndarray):
        T, R = shapes.shape
        whole = value * most
        reduced = most * np.maximum(0.0, value - shapes @ rho)
        # suffix sums / maxima from k to the end, with an empty suffix (k = T) at the end
        self.every = np.concatenate([np.cumsum(whole[::-1])[::-1], [0.0]]).tolist()
        self.lagrangian = np.concatenate([np.cumsum(reduced[::-1])[::-1], [0.0]]).tolist()
        uses = shapes > 0
        free = np.where(uses, 0.0, whole[:, None])  # (T, R): shapes that use none of r, at most
        rate = np.where(uses, value[:, None] / np.where(uses, shapes, 1.0), 0.0)
        self.free = np.concatenate([np.cumsum(free[::-1], axis=0)[::-1], np.zeros((1, R))]).tolist()
        self.rate = np.concatenate([np.maximum.accumulate(rate[::-1], axis=0)[::-1], np.zeros((1, R))]).tolist()
        self.rho = rho.tolist()
        self.R = R

    def bound(self, room: tuple[float, ...] | list[float], k: int) -> float:
        """An upper bound on what shapes ``k..`` add within ``room``, the least of: every shape at
        ``most``; the Lagrangian ρ·room + Σ most_t·max(0, value_t − ρ·shape_t) (any ρ >= 0 bounds
        it); per resource r, the shapes using none of r at ``most`` plus room_r at the best
        value per unit of r."""
        best = self.every[k]
        lag = self.lagrangian[k]
        free, rate, rho = self.free[k], self.rate[k], self.rho
        for r in range(self.R):
            left = room[r] if room[r] > 0.0 else 0.0
            lag += rho[r] * left
            per = free[r] + left * rate[r]
            if per < best:
                best = per
        return lag if lag < best else best


def knapsack_prices(shapes: np.ndarray, values: np.ndarray, most: np.ndarray, room: np.ndarray,
                    sweeps: int = 30) -> np.ndarray:
    """Resource prices ρ >= 0 (R,) making L(ρ) = ρ·room + Σ_t most_t·max(0, values_t - ρ·shapes_t)
    small (L is the LP dual of the knapsack's relaxation: every ρ >= 0 bounds it; this one
    comes from exact minimisations along each coordinate in turn, deterministic)."""
    R = shapes.shape[1]
    rho = np.zeros(R)
    for _ in range(sweeps):
        before = rho.copy()
        for r in range(R):
            s = shapes[:, r]
            a = values - shapes @ rho + s * rho[r]  # value_t less the other resources' prices
            use = (s > 0) & (a > 0) & (most > 0)
            if not use.any():
                rho[r] = 0.0
                continue
            brk = a[use] / s[use]  # above ρ_r = brk_t shape t stops paying: L's slope rises by most_t·s_t
            order = np.argsort(-brk, kind="stable")
            rising = np.cumsum((most[use] * s[use]).astype(float)[order])
            k = int(np.searchsorted(rising, room[r], side="right"))  # the first breakpoint where the slope turns < 0
            rho[r] = 0.0 if k == len(order) else float(brk[order][k])
        if np.allclose(rho, before, rtol=0, atol=TINY):
            break
    return rho


def greedy_fills(shapes: np.ndarray, values: np.ndarray, room: np.ndarray, most: np.ndarray, keys: list[np.ndarray],
                 usable: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """The best of greedy fills of one server: for each key (T,), shapes (T, R) largest key first
    (ties by index), each as many times as fit in ``room`` (R,), at most ``most`` (T,); shapes
    where ``usable`` (T,) is False are left out. Returns (value, counts (T,)); (0, zeros) when no
    fill is worth more than nothing."""
    T = len(values)
    best_value, best_q = 0.0, np.zeros(T, dtype=np.int64)
    for key in keys:
        left = room.astype(float).copy()
        q = np.zeros(T, dtype=np.int64)
        got = 0.0
        for t in np.lexsort((np.arange(T), -key)).tolist():
            if usable is not None and not usable[t]:
                continue
            pos = shapes[t] > 0
            k = int(most[t]) if not pos.any() else int(min(most[t], np.floor(np.min(left[pos] / shapes[t][pos]) + INTEGRAL_TOL)))
            if k > 0:
                q[t] = k
                left -= k * shapes[t]
                got += k * float(values[t])
        if got > best_value:
            best_value, best_q = got, q
    return best_value, best_q


def _greedy_start(shapes: np.ndarray, values: np.ndarray, most: np.ndarray, room: np.ndarray,
                  rho: np.ndarray) -> tuple[float, list[int]]:
    """A first packing for the search to beat: the best of greedy fills (shapes by value less ρ's
    price, by value per largest share, by value)."""
    share = shapes / np.where(room > 0, room, np.inf)
    value, q = greedy_fills(shapes, values, room, most,
                            [values - shapes @ rho, values / np.maximum(share.max(axis=1), TINY), values])
    return value, q.tolist()


def best_packing(shapes: np.ndarray, values: np.ndarray, capacity: np.ndarray, most: np.ndarray | None = None,
                 *, node_limit: int = BEST_PACKING_NODES) -> tuple[float, np.ndarray, float]:
    """The most value one server of ``capacity`` (R,) holds: max Σ_t values_t·q_t over
    integer q >= 0 with Σ_t q_t·shapes_t <= capacity (the checkers' tolerance) and
    q <= ``most`` (T,) (default: what fits alone). Best-first branch and bound,
    shapes by value per share of the server, each node bounded by
    :class:`_SuffixBounds`. Returns (value, q (T,), upper): ``upper`` equals
    ``value`` when the search finished within ``node_limit`` nodes, else it is the
    best bound still open; either way no packing is worth more than ``upper``.
    Shapes of value <= 0 are never packed (they add nothing to a maximum)."""
    T, R = shapes.shape if len(shapes) else (0, len(capacity))
    room_tol = capacity * (1 + TOL) + TOL
    q_best = np.zeros(T, dtype=np.int64)
    if T == 0:
        return 0.0, q_best, 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(shapes > 0, room_tol[None, :] / np.where(shapes > 0, shapes, 1.0), np.inf).min(axis=1)
    cap_count = np.floor(fit + INTEGRAL_TOL)
    limit = cap_count if most is None else np.minimum(cap_count, np.asarray(most, dtype=float))
    use = np.flatnonzero((values > 0) & (limit > 0))
    if not len(use):
        return 0.0, q_best, 0.0
    if not np.all(np.isfinite(limit[use])):
        raise ValueError("a shape that uses no resource needs a finite `most`")
    share = shapes[use] / np.where(room_tol > 0, room_tol, np.inf)
    density = values[use] / np.maximum(share.max(axis=1), TINY)
    order = use[np.lexsort((use, -density))]
    v = [float(values[t]) for t in order]
    s = [[float(x) for x in shapes[t]] for t in order]
    m = [int(limit[t]) for t in order]
    n = len(order)
    rho_arr = knapsack_prices(shapes[order], values[order].astype(float), limit[order], room_tol)
    best = list(_greedy_start(shapes[order], values[order].astype(float), limit[order], room_tol, rho_arr))
    tol = TINY
    # best first: the node of the largest bound is expanded next, so when the node limit
    # stops the search the bound left open is as low as the nodes spent can make it
    # a node is (−bound, id, depth k, value so far, room left); its counts are a path of
    # (parent id, count) entries, so a node costs O(R) memory, not O(T)
    heap: list[tuple[float, int, int, float, tuple[float, ...]]] = []
    parent: list[int] = [-1]
    count: list[int] = [0]

    def counts_of(node: int) -> list[int]:
        path = []
        while node > 0:
            path.append(count[node])
            node = parent[node]
        return path[::-1]

    root = tuple(float(x) for x in room_tol)
    suffix = _SuffixBounds(values[order].astype(float), shapes[order].astype(float), limit[order].astype(float), rho_arr)
    heapq.heappush(heap, (-suffix.bound(root, 0), 0, 0, 0.0, root))
    nodes = 0
    while heap:
        neg_bound, node, k, got, room = heap[0]
        if -neg_bound <= best[0] + tol * max(1.0, -neg_bound):
            heap.clear()  # no open node can beat the best packing
            break
        if nodes >= node_limit:
            break
        heapq.heappop(heap)
        nodes += 1
        most_k = m[k]
        for r in range(R):
            if s[k][r] > 0:
                most_k = min(most_k, int(room[r] / s[k][r] + INTEGRAL_TOL))
        for c in range(max(most_k, 0), -1, -1):
            child_room = tuple(room[r] - c * s[k][r] for r in range(R))
            child_got = got + c * v[k]
            if child_got > best[0]:
                best[0], best[1] = child_got, counts_of(node) + [c] + [0] * (n - k - 1)
            if k + 1 == n:
                continue
            bound = child_got + suffix.bound(child_room, k + 1)
            if bound > best[0] + tol * max(1.0, bound):
                parent.append(node)
                count.append(c)
                heapq.heappush(heap, (-bound, len(parent) - 1, k + 1, child_got, child_room))
    open_bound = max((-entry[0] for entry in heap), default=0.0)
    q_best[order] = best[1]
    return best[0], q_best, max(best[0], open_bound)
