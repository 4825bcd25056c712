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

The paper leaves room after that: :func:`refined_place` (the default;
``refine=False`` for the paper's scheme alone) also tries best fit for whole
jobs in two orders, re-places the admitted jobs costliest-to-split first,
places every paused job that fits on what is left, swaps split jobs for
paused ones that cost less, and moves split jobs whole onto one server when
one has room. It never places fewer jobs nor, at as many jobs, a higher Σ T_j.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

from schedopt.deadline import NO_LIMIT, Deadline
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.incremental import place_keeping
from schedopt.placement.problem import TOL, JobPlacement, PlacementData, build_plan, compile_placement, transfer_time_s
from schedopt.plan import Plan, Status, Termination
from schedopt.registry import register


@lru_cache(maxsize=4096)
def even_split(n: int, k: int) -> np.ndarray:
    """n tasks over k servers, the first n mod k servers taking one more (read-only; cached:
    the placement tries the same few splits for every job)."""
    base, extra = divmod(int(n), k)
    out = np.full(k, base, dtype=np.int64)
    out[:extra] += 1
    out.flags.writeable = False
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
    need = p * d_ps + w * d_w
    if np.any(need > free[order].sum(axis=0) * (1 + TOL) + TOL * len(order)):
        return None  # not even the free capacity summed over every server holds the job
    # a server that holds neither one PS nor one worker leaves R unchanged: skip it (same split)
    room = free[order] * (1 + TOL) + TOL
    order = order[np.all(room >= d_ps, axis=1) | (np.all(room >= d_w, axis=1) if w else False)]
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


def dominant_share(data: PlacementData) -> np.ndarray:
    """(J,) each job's dominant share of the cluster's total capacity (the paper's job size)."""
    total = data.cap.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = (data.counts[:, :, None] * data.demand).sum(axis=1)
        return np.where(total > 0, need / np.where(total > 0, total, 1.0), 0.0).max(axis=1) if data.J else np.zeros(0)


def optimus_place(data: PlacementData, sort_by: int, *, jobs: np.ndarray | None = None, free: np.ndarray | None = None,
                  best_fit: bool = False) -> list[JobPlacement | None]:
    """Each job's (servers, PS per server, workers per server), or None if paused.

    ``jobs``: the jobs to place, in this order (default: all, smallest dominant
    share first, the paper's order); ``free`` (S, R) capacity to start from
    (default: all of it; updated in place when given). ``best_fit``: a job that
    fits whole on one server takes the fullest such server instead of the most
    available one (keeps room for larger jobs; T_j = 0 either way)."""
    where: list[JobPlacement | None] = [None] * data.J
    free = data.cap.astype(float).copy() if free is None else free
    if jobs is None:
        jobs = np.lexsort((np.arange(data.J), dominant_share(data)))
    order = np.lexsort((np.arange(data.S), -free[:, sort_by]))  # servers, most available first
    eligible_cache: dict[bytes, np.ndarray | None] = {}

    def eligible(d: np.ndarray) -> np.ndarray | None:
        """Servers that could hold one task of demand d when empty; None when all can."""
        key = d.tobytes()
        if key not in eligible_cache:
            ok = np.all(d <= data.cap * (1 + TOL) + TOL, axis=1)
            eligible_cache[key] = None if ok.all() else ok
        return eligible_cache[key]

    # jobs found unplaceable, by task demands: (p, w) counts. The free capacity only shrinks, and a
    # job with at least as many tasks of each role contains one of them, so it cannot be placed either
    # (the search below finds a placement whenever one exists: its last step tries every split)
    failed: dict[bytes, list[tuple[int, int]]] = {}
    for j in np.asarray(jobs).tolist():
        p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
        d_ps, d_w = data.demand[j]
        shape = d_ps.tobytes() + d_w.tobytes()
        if any(p >= fp and w >= fw for fp, fw in failed.get(shape, ())):
            continue
        # each role's candidate servers in the current order (all servers on a homogeneous cluster)
        e_ps, e_w = eligible(d_ps), eligible(d_w)
        ord_ps = order if e_ps is None else order[e_ps[order]]
        ord_w = order if e_w is None else order[e_w[order]]
        same = e_ps is None and e_w is None  # the paper's case: both roles on the same first k servers
        chosen = None
        at = -1  # best fit: the position in the order of the server taking the whole job
        if best_fit:
            whole = p * d_ps + w * d_w
            # servers with room for it in the sort resource form a prefix of the order; scan its tail
            end = int(np.searchsorted(-free[order, sort_by], -(whole[sort_by] - TOL) / (1 + TOL), side="right"))
            while end > 0 and at < 0:
                start = max(0, end - 64)
                fits = np.flatnonzero(np.all(whole <= free[order[start:end]] * (1 + TOL) + TOL, axis=1))
                if len(fits):  # the last fitting server in the order: the least available one
                    at = start + int(fits[-1])
                end = start
            if at >= 0:
                chosen = (order[at:at + 1], np.array([p], dtype=np.int64), np.array([w], dtype=np.int64), whole[None, :])
        for k in range(1, max(p, w, 1) + 1):
            if chosen is not None:
                break
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
                failed.setdefault(shape, []).append((p, w))
                continue
            servers, pk_s, wk_s = split
            chosen = (servers, pk_s, wk_s, pk_s[:, None] * d_ps + wk_s[:, None] * d_w)
            same = False  # the chosen servers need not be a prefix
        servers, pk_s, wk_s, load = chosen
        if at >= 0:
            rest = np.delete(order, at)
        elif same:
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


def job_times(data: PlacementData, where: list[JobPlacement | None]) -> np.ndarray:
    """(J,) T_j of each placed job (seconds per step; 0 when paused)."""
    return np.array([0.0 if pl is None else transfer_time_s(data.size_mb[j], int(data.counts[j, 0]), int(data.counts[j, 1]),
                                                             pl[1], pl[2], *data.bw[j]) for j, pl in enumerate(where)])


def split_cost(data: PlacementData) -> np.ndarray:
    """(J,) T_j of each job spread evenly over two servers: how much splitting it costs."""
    return np.array([transfer_time_s(data.size_mb[j], int(p), int(w), even_split(p, 2), even_split(w, 2)[::-1], *data.bw[j])
                     for j, (p, w) in enumerate(data.counts.tolist())])


def _load(data: PlacementData, j: int, pl: JobPlacement) -> np.ndarray:
    return pl[1][:, None] * data.demand[j, 0] + pl[2][:, None] * data.demand[j, 1]


def refined_place(data: PlacementData, sort_by: int, *, max_swaps: int = 500,
                  clock: Deadline = NO_LIMIT) -> tuple[list[JobPlacement | None], dict[str, int]]:
    """The paper's placement, then four passes where the paper leaves room; the
    placed count never drops and Σ T_j never rises:

    1. re-place the admitted jobs, the costliest to split (:func:`split_cost`)
       first, each whole job on the fullest server that holds it (best fit
       keeps the large free servers for the jobs that need them); kept when
       every job is placed again and Σ T_j is lower;
    2. fill: every paused job that fits on the free capacity is placed;
    3. swap: a split job gives way to a paused job whose T_j is lower (at most
       ``max_swaps`` tries), then fill again;
    4. consolidate: a split job moves whole onto one server that can hold it.
    Returns the placement and how many jobs each pass changed. Once ``clock``
    expires, the swaps (pass 3, the costly one) stop and
    consolidation is skipped, so an exact solver's starting
    placement keeps its time limit; passes 1-2 (one placement each) always run."""
    def late() -> bool:
        return clock.expired()

    share = dominant_share(data)
    tasks = data.counts.sum(axis=1)
    where = optimus_place(data, sort_by)
    orders = (None, np.lexsort((np.arange(data.J), share, tasks))) if any(pl is None for pl in where) else ()
    for order in orders:  # some job paused: best fit in two orders may place more
        bf = optimus_place(data, sort_by, jobs=order, best_fit=True)
        if (sum(pl is not None for pl in bf), -job_times(data, bf).sum()) > (sum(pl is not None for pl in where), -job_times(data, where).sum()):
            where = bf
    counters = {"replaced": 0, "filled": 0, "swapped": 0, "consolidated": 0}
    placed = [j for j, pl in enumerate(where) if pl is not None]
    cost = split_cost(data)
    # 1. the costliest to split first, best fit for whole jobs
    again = optimus_place(data, sort_by, jobs=np.array(sorted(placed, key=lambda j: (-cost[j], -share[j], j)), dtype=np.int64),
                          best_fit=True)
    if all(again[j] is not None for j in placed) and job_times(data, again).sum() < job_times(data, where).sum() - TOL:
        counters["replaced"] = len(placed)
        where = again
    free = data.cap.astype(float).copy()
    for j, pl in enumerate(where):
        if pl is not None:
            np.subtract.at(free, pl[0], _load(data, j, pl))

    def fill() -> int:
        paused = [j for j, pl in enumerate(where) if pl is None]
        order = np.array(sorted(paused, key=lambda j: (share[j], j)), dtype=np.int64)
        more = optimus_place(data, sort_by, jobs=order, free=free, best_fit=True)
        for j in paused:
            where[j] = more[j]
        return sum(more[j] is not None for j in paused)

    # 2. fill
    counters["filled"] += fill()
    # 3. swap a split job for a paused one that costs less
    times = job_times(data, where)
    tries = 0
    paused = sorted((j for j, pl in enumerate(where) if pl is None), key=lambda j: (cost[j], j))
    for v in np.argsort(-times, kind="stable").tolist():
        if times[v] <= 0 or tries >= max_swaps or not paused or late():
            break
        out = where[v]
        assert out is not None
        np.add.at(free, out[0], _load(data, v, out))
        swapped = False
        room = free.sum(axis=0) * (1 + TOL) + TOL * data.S  # what all servers hold together, v's share freed
        for u in paused:
            if tries >= max_swaps:
                break
            tries += 1
            if np.any(data.counts[u, 0] * data.demand[u, 0] + data.counts[u, 1] * data.demand[u, 1] > room):
                continue  # cannot fit even with every server's free capacity pooled: no placement to try
            trial = free.copy()
            got = optimus_place(data, sort_by, jobs=np.array([u]), free=trial, best_fit=True)[u]
            t_u = 0.0 if got is None else transfer_time_s(data.size_mb[u], int(data.counts[u, 0]), int(data.counts[u, 1]),
                                                          got[1], got[2], *data.bw[u])
            if got is not None and t_u < times[v] - TOL:
                where[u], where[v], free[:] = got, None, trial
                times[u], times[v] = t_u, 0.0
                paused = sorted([j for j in paused if j != u] + [v], key=lambda j: (cost[j], j))
                counters["swapped"] += 1
                swapped = True
                break
        if not swapped:  # v stays where it was
            np.subtract.at(free, out[0], _load(data, v, out))
    if counters["swapped"]:
        counters["filled"] += fill()
        times = job_times(data, where)
    # 4. consolidate split jobs onto one server
    for v in (np.argsort(-times, kind="stable").tolist() if not late() else []):
        pl = where[v]
        if times[v] <= 0 or pl is None:
            continue
        np.add.at(free, pl[0], _load(data, v, pl))
        whole = data.counts[v, 0] * data.demand[v, 0] + data.counts[v, 1] * data.demand[v, 1]
        fits = np.flatnonzero(np.all(whole <= free * (1 + TOL) + TOL, axis=1))
        if len(fits):
            k = int(fits[np.argmin(free[fits, sort_by])])  # the fullest server that holds it
            where[v] = (np.array([k]), data.counts[v, :1].copy(), data.counts[v, 1:].copy())
            counters["consolidated"] += 1
        np.subtract.at(free, where[v][0], _load(data, v, where[v]))  # type: ignore[index]
    return where, counters


@register("optimus-placement", problem="placement", exact=False, backend="numpy", accelerator_types=True)
class OptimusPlacement:
    """Optimus §4.2: smallest job first onto the fewest most-available servers, tasks spread evenly.
    ``refine`` (default): then the passes of :func:`refined_place` (best fit, fill, swap, consolidate;
    never fewer jobs, never a higher Σ T_j); ``refine=False`` is the paper's scheme alone.
    ``keep`` (default): running tasks stay where they run; only the rest is placed.
    ``bound`` (default, ours): the placed count's and Σ T_j's certified bounds (pattern certificates)."""

    def __init__(self, *, sort_resource: str | None = None, keep: bool = True, refine: bool = True,
                 max_swaps: int = 500, bound: bool = True):
        self.sort_resource = sort_resource
        self.keep = bool(keep)
        self.refine = bool(refine)
        self.max_swaps = int(max_swaps)
        self.bound = bool(bound)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_placement(instance)
        res = self.sort_resource or ("cpu" if "cpu" in instance.resources else instance.resources[0])
        if res not in instance.resources:
            raise InputError("optimus-placement", f'sort_resource: "{res}" is not a resource of the instance')
        if self.max_swaps < 0:
            raise InputError("optimus-placement", f"max_swaps: must be >= 0, got {self.max_swaps}")
        sort_by = instance.resources.index(res)
        passes: dict[str, int] = {}

        def place(d: PlacementData) -> list[JobPlacement | None]:
            if not self.refine:
                return optimus_place(d, sort_by)
            where, counts = refined_place(d, sort_by, max_swaps=self.max_swaps)
            passes.update(counts)
            return where

        where, counters = place_keeping(data, place, self.keep)
        admitted_bound = bound = cert = None
        metrics = {**counters, **passes}
        if self.bound:  # ours: the certified bounds of the class model's LP (docs/certificates.md)
            from schedopt.placement.relaxation import certified_bounds

            admitted_bound, bound, cert, info = certified_bounds(data, where)
            metrics.update(info)
        return build_plan(data, where, solver=self.name, status=Status.HEURISTIC,
                          termination=Termination.COMPLETED, started=started, seed=seed, metrics=metrics,
                          options={"sort_resource": self.sort_resource, "keep": self.keep, "refine": self.refine,
                                   "max_swaps": self.max_swaps, "bound": self.bound},
                          bound=bound, admitted_bound=admitted_bound, certificate=cert)
