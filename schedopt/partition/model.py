"""Dorm's utilization-fairness model (Dorm P2) as every backend receives it, and
the decoding of a class-mode answer into containers per server: below column
generation (``colgen.py``) and the driver (``dorm.py``), as ``placement/classes.py``
is for placement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from schedopt.partition.problem import TOL, PartitionData, fill_first_fit
from schedopt.results import StageResult
from schedopt.tolerances import FIT_TOL, INTEGRAL_TOL


@dataclass
class DormModel:
    """What every backend needs: the arrays, ŝ's container counts and both budgets."""

    data: PartitionData
    fair: np.ndarray  # n̂_i from weighted DRF (A,)
    fairness_budget: float  # ceil(θ1·2m)
    adjustment_budget: int  # ceil(θ2·|A^t ∩ A^(t-1)|)
    # class mode only: per "server" (class) c, its maximal packing patterns (P_c, T),
    # the shape index of each application (A,) and the class's server count
    patterns: list[np.ndarray] | None = None
    shape_of: np.ndarray | None = None
    class_size: list[int] | None = None
    # class mode only: valid bin-packing cuts Σ_i a_i·y_ic <= b, as (class c, a (A,) int, b int)
    class_cuts: list[tuple[int, np.ndarray, int]] | None = None

    def big_m(self) -> tuple[np.ndarray, np.ndarray]:
        """The smallest valid big-M of eq. 13 and eq. 14 per (i, j): x_ij can
        fall by at most x_ij^(t-1) and rise by at most ub_ij - x_ij^(t-1)."""
        down = self.data.prev.astype(np.int64)
        up = np.maximum(self.data.ub - self.data.prev, 0).astype(np.int64)
        return down, up


@dataclass
class DormSolution:
    """A Dorm stage's solution (``schedopt.results.StageResult.solution``): containers ``x``
    (A, S) per application and server; ``z``, in class mode with patterns, the servers per
    pattern of each class. The stage's ``bound`` is a proven upper bound on Σ_k u_k;
    ``proven`` False: ``x`` is optimal for an approximation or relaxation only, not for P2."""

    x: np.ndarray
    z: list[np.ndarray] | None = None


class DormBackend(Protocol):
    def solve_model(self, model: DormModel, *, time_limit: float | None, seed: int | None,
                    rel_gap: float | None = None) -> StageResult[DormSolution]: ...


#: the dual-feasible functions u^(k), k = 1..DFF_K, that give the class model's packing cuts
DFF_K = 4


def dff_cuts(data: PartitionData, classes: list[np.ndarray], k_max: int = DFF_K) -> list[tuple[int, np.ndarray, int]]:
    """Bin-packing cuts for the class relaxation (Fekete and Schepers' dual-feasible
    functions). On one server, any containers that fit have Σ u(d_ir/C_r) <= 1 per
    resource r for u^(k)(x) = x when (k+1)·x is an integer, else floor((k+1)·x)/k;
    so a class of m servers holds Σ_i u^(k)(d_ir/C_r)·y_ic <= m. Scaled by k(k+1)
    to integers: (class, coefficients (A,), right-hand side), distinct, non-trivial."""
    cuts: list[tuple[int, np.ndarray, int]] = []
    for c, servers in enumerate(classes):
        cap = data.cap[servers[0]]
        seen: set[bytes] = set()
        for r in np.flatnonzero(cap > 0).tolist():
            x = np.clip(data.demand[:, r] / cap[r], 0.0, 1.0)
            for k in range(1, k_max + 1):
                scaled = (k + 1) * x
                whole = np.abs(scaled - np.round(scaled)) <= INTEGRAL_TOL
                a = np.where(whole, np.round(scaled).astype(np.int64) * k,
                             np.floor(scaled + INTEGRAL_TOL).astype(np.int64) * (k + 1))
                if not a.any() or a.tobytes() in seen:
                    continue
                seen.add(a.tobytes())
                cuts.append((c, a, len(servers) * k * (k + 1)))
    return cuts


def pack_classes(data: PartitionData, classes: list[np.ndarray], y: np.ndarray) -> np.ndarray:
    """Class counts y (A, C) onto servers, x (A, S): per class, the best (most
    utilization placed) of :func:`spread_classes` (even spread, then shed),
    :func:`first_fit_decreasing_classes` (largest containers first, each on the
    first servers with room) and :func:`dot_product_classes` (each server filled
    by the containers that match its free capacity). Containers that fit nowhere
    are left out."""
    candidates = [spread_classes(data, classes, y), first_fit_decreasing_classes(data, classes, y),
                  dot_product_classes(data, classes, y)]
    x = candidates[0].copy()
    for servers in classes:
        placed = [float(data.util @ cand[:, servers].sum(axis=1)) for cand in candidates]
        x[:, servers] = candidates[int(np.argmax(placed))][:, servers]  # ties: the first (spread)
    return x


def dot_product_classes(data: PartitionData, classes: list[np.ndarray], y: np.ndarray) -> np.ndarray:
    """Class counts y (A, C) onto servers, x (A, S), one server at a time: the
    server takes, one container at a time, the application whose demand (as
    shares of the server) has the largest dot product with the server's free
    capacity (shares), among those that fit, until none fits (the "dot product"
    rule for vector bin packing: it fills the resources a server has most of
    first, so they run out together). Applications whose class total is
    unchanged keep their previous servers. Containers that fit nowhere are left out."""
    x = np.zeros((data.A, data.S), dtype=np.int64)
    for c, servers in enumerate(classes):
        same = keep_unchanged(data, x, y, c, servers)
        cap = data.cap[servers[0]]
        inv = np.where(cap > 0, 1.0 / np.where(cap > 0, cap, 1.0), 0.0)  # (R,)
        share = data.demand * inv  # (A, R)
        limit = data.cap[servers] * (1 + TOL) + TOL
        load = x[:, servers].T.astype(float) @ data.demand  # (k, R)
        need = np.where(same, 0, y[:, c]).astype(np.int64)
        for s_idx, j in enumerate(servers.tolist()):
            while need.any():
                free = limit[s_idx] - load[s_idx]
                fits = (need > 0) & np.all(data.demand <= free, axis=1)
                if not fits.any():
                    break
                i = int(np.argmax(np.where(fits, share @ np.maximum(free * inv, 0.0), -np.inf)))
                x[i, j] += 1
                load[s_idx] += data.demand[i]
                need[i] -= 1
    return x


def keep_unchanged(data: PartitionData, x: np.ndarray, y: np.ndarray, c: int, servers: np.ndarray) -> np.ndarray:
    """Applications whose count in class c is unchanged keep their previous servers
    there (written into x (A, S)); returns which ones, (A,) booleans."""
    prev_c = data.prev[:, servers]
    same = y[:, c] == prev_c.sum(axis=1)
    x[np.ix_(np.flatnonzero(same), servers)] = prev_c[same]
    return same


def first_fit_decreasing_classes(data: PartitionData, classes: list[np.ndarray], y: np.ndarray) -> np.ndarray:
    """Class counts y (A, C) onto servers, x (A, S): in each class, applications
    whose class total is unchanged keep their previous servers; the others go
    largest container first (share of one server), each first-fit."""
    x = np.zeros((data.A, data.S), dtype=np.int64)
    for c, servers in enumerate(classes):
        same = keep_unchanged(data, x, y, c, servers)
        limit = data.cap[servers] * (1 + TOL) + TOL
        load = x[:, servers].T.astype(float) @ data.demand
        size = (data.demand / np.where(data.cap[servers[0]] > 0, data.cap[servers[0]], np.inf)).max(axis=1)
        for i in np.lexsort((np.arange(data.A), -size)).tolist():
            if same[i] or y[i, c] <= 0:
                continue
            take = fill_first_fit(limit, load, data.demand[i], int(y[i, c]))
            x[i, servers] = take
            load += take[:, None] * data.demand[i][None, :]
    return x


def spread_classes(data: PartitionData, classes: list[np.ndarray], y: np.ndarray) -> np.ndarray:
    """Class counts y (A, C) onto servers, x (A, S). In each class, an application
    whose class total is unchanged keeps its previous servers. The others are
    spread evenly over the class's identical servers (each gets the floor or the
    ceiling of its share, the remainders dealt round-robin), so a server's load
    is the class average plus at most one container per application. Overloaded
    servers then shed containers (largest first); those go first-fit wherever
    they fit in the class. Containers that fit nowhere are left out."""
    x = np.zeros((data.A, data.S), dtype=np.int64)
    for c, servers in enumerate(classes):
        k = len(servers)
        same = keep_unchanged(data, x, y, c, servers)
        cap = data.cap[servers] * (1 + TOL) + TOL
        size = (data.demand / np.where(data.cap[servers[0]] > 0, data.cap[servers[0]], np.inf)).max(axis=1)
        order = [i for i in np.lexsort((np.arange(data.A), -size)).tolist() if not same[i] and y[i, c] > 0]
        pointer = 0
        for i in order:
            base, rem = divmod(int(y[i, c]), k)
            row = np.full(k, base, dtype=np.int64)
            row[(pointer + np.arange(rem)) % k] += 1
            pointer = (pointer + rem) % k
            x[i, servers] = row
        # shed from overloaded servers, largest containers first
        load = x[:, servers].T.astype(float) @ data.demand
        shed = np.zeros(data.A, dtype=np.int64)
        for s_idx in np.flatnonzero(np.any(load > cap, axis=1)).tolist():
            j = servers[s_idx]
            for i in order:
                while x[i, j] > 0 and np.any(load[s_idx] > cap[s_idx]):
                    x[i, j] -= 1
                    load[s_idx] -= data.demand[i]
                    shed[i] += 1
        # re-place what was shed, first fit in the class
        for i in order:
            need = int(shed[i])
            if need == 0:
                continue
            d = data.demand[i]
            take = fill_first_fit(cap, load, d, need)
            x[i, servers] += take
            load += take[:, None] * d[None, :]
    return x


def decode_patterns(data: PartitionData, classes: list[np.ndarray], y: np.ndarray, z: list[np.ndarray],
                    patterns: list[np.ndarray], shape_of: np.ndarray) -> np.ndarray | None:
    """Exact packing from the pattern model: the servers of class c take the
    patterns z_c chose (z_c[p] servers each), and each pattern's slots of
    shape t take containers of the applications of shape t in order. None when
    a class holds previous containers that must stay put (then the spread
    packing is used)."""
    x = np.zeros((data.A, data.S), dtype=np.int64)
    for c, servers in enumerate(classes):
        same = y[:, c] == data.prev[:, servers].sum(axis=1)
        if np.any(same & (data.prev[:, servers].sum(axis=1) > 0)):
            return None
        need = y[:, c].astype(np.int64).copy()
        queues: dict[int, list[int]] = {}
        for i in np.flatnonzero(need > 0).tolist():
            queues.setdefault(int(shape_of[i]), []).append(i)
        s_iter = iter(servers.tolist())
        for p in np.flatnonzero(z[c] > 0).tolist():
            for _ in range(int(z[c][p])):
                j = next(s_iter)
                for t in np.flatnonzero(patterns[c][p]).tolist():
                    slots = int(patterns[c][p][t])
                    queue = queues.get(t, [])
                    while slots and queue:
                        i = queue[0]
                        k = min(slots, int(need[i]))
                        x[i, j] += k
                        need[i] -= k
                        slots -= k
                        if need[i] == 0:
                            queue.pop(0)
        if need.sum() > 0:
            return None  # the patterns do not cover y (cannot happen for an exact solution)
    return x


def fill_up(model: DormModel, x: np.ndarray, targets: np.ndarray | None = None) -> np.ndarray:
    """Greedy repair and improvement of a placement: applications in order of
    utilization per container (highest first) get more containers, one at a
    time on the first server with room, while the result stays within n_max
    (and ``targets``, if given), the fairness-loss budget and the adjustment
    budget. Containers are only added, so capacity and n_min stay met."""
    d = model.data
    x = x.copy()
    load = x.T.astype(float) @ d.demand
    limit = d.cap * (1 + TOL) + TOL
    n = x.sum(axis=1)
    fair = model.fair * d.delta
    loss = np.abs(n * d.delta - fair)
    changed = np.any(x != d.prev, axis=1) & d.before
    cap_n = d.n_max if targets is None else np.minimum(d.n_max, targets)
    for i in np.lexsort((np.arange(d.A), -d.util)).tolist():
        dem = d.demand[i]
        pos = dem > 0
        while n[i] < cap_n[i]:
            new_loss = abs((n[i] + 1) * d.delta[i] - fair[i])
            if new_loss > loss[i] and loss.sum() - loss[i] + new_loss > model.fairness_budget + FIT_TOL:
                break
            if d.before[i] and not changed[i] and changed.sum() + 1 > model.adjustment_budget:
                break
            fits = np.all(load[:, pos] + dem[pos] <= limit[:, pos], axis=1) if pos.any() else np.ones(d.S, dtype=bool)
            if not fits.any():
                break
            j = int(np.argmax(fits))
            x[i, j] += 1
            load[j] += dem
            n[i] += 1
            loss[i] = new_loss
            changed[i] = d.before[i] and bool(np.any(x[i] != d.prev[i]))
    return x


def p2_feasible(model: DormModel, x: np.ndarray) -> bool:
    d = model.data
    n = x.sum(axis=1)
    loss = np.abs(n * d.delta - model.fair * d.delta).sum()
    changed = int((np.any(x != d.prev, axis=1) & d.before).sum())
    return bool(np.all(n >= d.n_min) and np.all(n <= d.n_max) and loss <= model.fairness_budget + FIT_TOL
                and changed <= model.adjustment_budget)
