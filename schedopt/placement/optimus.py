"""``optimus-placement``: Optimus §4.2's placement scheme.

Servers are kept sorted by available capacity of one resource (the paper uses
CPU), most first. Jobs go smallest first (dominant share of their total
demand over the cluster). A job takes the first k servers, for the smallest k
whose servers can hold its tasks spread evenly: each server gets ⌊p/k⌋ or
⌈p/k⌉ PS and ⌊w/k⌋ or ⌈w/k⌉ workers (Theorem 1's principle). Then the k
servers are re-sorted.

Where no even split fits but some uneven one does (3 PS + 1 worker on two
servers of 2 slots: 2+0 and 1+1), the job is not paused: :func:`fewest_prefix_split`
finds, exactly, the shortest prefix of the server order that holds the job in
any split, and that split is used. A job is paused only when it fits nowhere.

On a heterogeneous cluster (the Optimus testbed has CPU servers for PS and
GPU servers for workers) each role takes the first k servers *that could hold
one of its tasks*; on a homogeneous cluster both lists are the whole order and
this is the paper's scheme.
"""

from __future__ import annotations

import time

import numpy as np

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.incremental import place_keeping
from schedopt.placement.problem import TOL, JobPlacement, PlacementData, build_plan, compile_placement
from schedopt.plan import Plan, Status, Termination
from schedopt.registry import register


def even_split(n: int, k: int) -> np.ndarray:
    """n tasks over k servers, the first n mod k servers taking one more."""
    base, extra = divmod(int(n), k)
    out = np.full(k, base, dtype=np.int64)
    out[:extra] += 1
    return out


def fewest_prefix_split(free: np.ndarray, order: np.ndarray, p: int, w: int,
                        d_ps: np.ndarray, d_w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The shortest prefix of ``order`` whose servers hold p PS and w workers in
    *some* split, and that split, or None when no split on all servers fits.

    ``free`` (S, R) free capacity, ``d_ps``/``d_w`` (R,) per-task demand. With two
    task kinds the set of placeable (PS, workers) pairs is down-closed, so it is
    kept as R[b] = most PS placeable with b workers; each server adds by a
    (max, +) convolution over b. Exact; O(prefix · (w+1)²). Returns
    (servers, PS per server, workers per server) for the servers that got a task.
    """
    b = np.arange(w + 1)
    reach = np.full(w + 1, -1, dtype=np.int64)  # R[b]; -1 = b workers cannot be placed
    reach[0] = 0
    rows: list[np.ndarray] = []  # R after each server, for the walk back
    picks: list[np.ndarray] = []  # argmax b on each server
    for s in order.tolist():
        slack = free[s][None, :] * (1 + TOL) + TOL - b[:, None] * d_w[None, :]  # (w+1, R) left after b workers
        fits_w = np.all(slack >= 0, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            per = np.where(d_ps[None, :] > 0, np.floor(slack / np.where(d_ps > 0, d_ps, 1.0)[None, :]), np.inf)
        amax = np.where(fits_w, np.minimum(per.min(axis=1) if len(d_ps) else np.inf, p), -1).astype(np.int64)
        # new[b'] = max_{b <= b'} R[b' - b] + amax[b], both parts placeable
        cand = np.full((w + 1, w + 1), -1, dtype=np.int64)  # [b', b]
        for bb in range(w + 1):
            if amax[bb] < 0:
                break  # more workers do not fit either
            prev = reach[: w + 1 - bb]
            cand[bb:, bb] = np.where(prev >= 0, np.minimum(prev + amax[bb], p), -1)
        pick = cand.argmax(axis=1)
        reach = cand[b, pick]
        rows.append(reach.copy())
        picks.append(pick)
        if reach[w] >= p:
            break
    if not rows or rows[-1][w] < p:
        return None
    n = len(rows)
    ps_k, w_k = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    need_p, need_w = p, w
    for k in range(n - 1, -1, -1):  # walk back: server k takes pick workers and what PS the rest cannot
        bb = int(picks[k][need_w])
        before = rows[k - 1][need_w - bb] if k else (0 if need_w - bb == 0 else -1)
        a = max(0, need_p - max(int(before), 0))
        ps_k[k], w_k[k] = a, bb
        need_p, need_w = need_p - a, need_w - bb
    used = (ps_k + w_k) > 0
    return order[:n][used], ps_k[used], w_k[used]


def optimus_place(data: PlacementData, sort_by: int) -> list[JobPlacement | None]:
    """Each job's (servers, PS per server, workers per server), or None if paused."""
    where: list[JobPlacement | None] = [None] * data.J
    free = data.cap.astype(float).copy()
    total = data.cap.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = (data.counts[:, :, None] * data.demand).sum(axis=1)
        size = np.where(total > 0, need / np.where(total > 0, total, 1.0), 0.0).max(axis=1) if data.J else np.zeros(0)
    order = np.lexsort((np.arange(data.S), -free[:, sort_by]))  # servers, most available first
    eligible_cache: dict[bytes, np.ndarray | None] = {}

    def eligible(d: np.ndarray) -> np.ndarray | None:
        """Servers that could hold one task of demand d when empty; None when all can."""
        key = d.tobytes()
        if key not in eligible_cache:
            ok = np.all(d <= data.cap * (1 + TOL) + TOL, axis=1)
            eligible_cache[key] = None if ok.all() else ok
        return eligible_cache[key]

    for j in np.lexsort((np.arange(data.J), size)).tolist():
        p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
        d_ps, d_w = data.demand[j]
        # each role's candidate servers in the current order (all servers on a homogeneous cluster)
        e_ps, e_w = eligible(d_ps), eligible(d_w)
        ord_ps = order if e_ps is None else order[e_ps[order]]
        ord_w = order if e_w is None else order[e_w[order]]
        same = e_ps is None and e_w is None  # the paper's case: both roles on the same first k servers
        chosen = None
        for k in range(1, max(p, w, 1) + 1):
            kp, kw = min(k, len(ord_ps), max(p, 1)), min(k, len(ord_w), max(w, 1))
            if (p and kp == 0) or (w and kw == 0):
                break
            pk, wk = even_split(p, kp), even_split(w, kw)[::-1]  # PS remainders first, worker remainders last
            if same:
                n = max(kp, kw)
                servers = order[:n]
                pk_s, wk_s = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
                pk_s[:kp], wk_s[:kw] = pk, wk
            else:
                servers, inv = np.unique(np.concatenate([ord_ps[:kp], ord_w[:kw]]), return_inverse=True)
                pk_s = np.bincount(inv[:kp], weights=pk, minlength=len(servers)).astype(np.int64)
                wk_s = np.bincount(inv[kp:], weights=wk, minlength=len(servers)).astype(np.int64)
            load = pk_s[:, None] * d_ps + wk_s[:, None] * d_w
            if np.all(load <= free[servers] * (1 + TOL) + TOL):
                chosen = (servers, pk_s, wk_s, load)
                break
            if kp == len(ord_ps) and kw == len(ord_w):
                break
        if chosen is None:  # no even split fits: any split on the fewest servers, if one exists
            split = fewest_prefix_split(free, order, p, w, d_ps, d_w)
            if split is None:
                continue
            servers, pk_s, wk_s = split
            chosen = (servers, pk_s, wk_s, pk_s[:, None] * d_ps + wk_s[:, None] * d_w)
            same = False  # the chosen servers need not be a prefix
        servers, pk_s, wk_s, load = chosen
        if same:
            rest = order[len(servers):]  # the chosen servers are a prefix of the order
        else:
            rest = order[~np.isin(order, servers)]
        free[servers] -= load  # every chosen server got at least one task (kp <= p, kw <= w)
        where[j] = (servers.copy(), pk_s, wk_s)
        # re-sort: only the chosen servers changed; put them back in place
        keys = -free[rest, sort_by]
        new_keys = -free[servers, sort_by]
        pos = np.searchsorted(keys, new_keys, side="right")
        by = np.lexsort((servers, pos))
        order = np.insert(rest, pos[by], servers[by])
    return where


@register("optimus-placement", problem="placement", exact=False, backend="numpy")
class OptimusPlacement:
    """Optimus §4.2: smallest job first onto the fewest most-available servers, tasks spread evenly.
    ``keep`` (default): running tasks stay where they run; only the rest is placed."""

    def __init__(self, *, sort_resource: str | None = None, keep: bool = True):
        self.sort_resource = sort_resource
        self.keep = bool(keep)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_placement(instance)
        res = self.sort_resource or ("cpu" if "cpu" in instance.resources else instance.resources[0])
        if res not in instance.resources:
            raise InputError("optimus-placement", f'sort_resource: "{res}" is not a resource of the instance')
        sort_by = instance.resources.index(res)
        where, counters = place_keeping(data, lambda d: optimus_place(d, sort_by), self.keep)
        return build_plan(data, where, solver=self.name, status=Status.HEURISTIC,
                          termination=Termination.COMPLETED, started=started, seed=seed, metrics=counters,
                          options={"sort_resource": self.sort_resource, "keep": self.keep})
