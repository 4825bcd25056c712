"""``optimus-placement``: Optimus §4.2's placement scheme.

Servers are kept sorted by available capacity of one resource (the paper uses
CPU), most first. Jobs go smallest first (dominant share of their total
demand over the cluster). A job takes the first k servers, for the smallest k
whose servers can hold its tasks spread evenly: each server gets ⌊p/k⌋ or
⌈p/k⌉ PS and ⌊w/k⌋ or ⌈w/k⌉ workers (Theorem 1's principle). Then the k
servers are re-sorted. A job that fits on no prefix is paused.
"""

from __future__ import annotations

import time

import numpy as np

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.problem import TOL, JobPlacement, PlacementData, build_plan, compile_placement
from schedopt.plan import Plan, Status, Termination
from schedopt.registry import register


def even_split(n: int, k: int) -> np.ndarray:
    """n tasks over k servers, the first n mod k servers taking one more."""
    base, extra = divmod(int(n), k)
    out = np.full(k, base, dtype=np.int64)
    out[:extra] += 1
    return out


def optimus_place(data: PlacementData, sort_by: int) -> list[JobPlacement | None]:
    """Each job's (servers, PS per server, workers per server), or None if paused."""
    where: list[JobPlacement | None] = [None] * data.J
    free = data.cap.astype(float).copy()
    total = data.cap.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = (data.counts[:, :, None] * data.demand).sum(axis=1)
        size = np.where(total > 0, need / np.where(total > 0, total, 1.0), 0.0).max(axis=1) if data.J else np.zeros(0)
    order = np.lexsort((np.arange(data.S), -free[:, sort_by]))  # servers, most available first
    for j in np.lexsort((np.arange(data.J), size)).tolist():
        p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
        d_ps, d_w = data.demand[j]
        chosen = None
        for k in range(1, min(max(p, w, 1), data.S) + 1):
            pk, wk = even_split(p, k), even_split(w, k)[::-1]  # PS remainders first, worker remainders last
            load = pk[:, None] * d_ps + wk[:, None] * d_w
            if np.all(load <= free[order[:k]] * (1 + TOL) + TOL):
                chosen = (k, pk, wk, load)
                break
        if chosen is None:
            continue
        k, pk, wk, load = chosen
        servers = order[:k].copy()
        free[servers] -= load
        where[j] = (servers, pk, wk)
        # re-sort: only the k servers changed; put them back in place
        rest = order[k:]
        keys = -free[rest, sort_by]
        new_keys = -free[servers, sort_by]
        pos = np.searchsorted(keys, new_keys, side="right")
        by = np.lexsort((servers, pos))
        order = np.insert(rest, pos[by], servers[by])
    return where


@register("optimus-placement", problem="placement", exact=False, backend="numpy")
class OptimusPlacement:
    """Optimus §4.2: smallest job first onto the fewest most-available servers, tasks spread evenly."""

    def __init__(self, *, sort_resource: str | None = None):
        self.sort_resource = sort_resource

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_placement(instance)
        res = self.sort_resource or ("cpu" if "cpu" in instance.resources else instance.resources[0])
        if res not in instance.resources:
            raise InputError("optimus-placement", f'sort_resource: "{res}" is not a resource of the instance')
        where = optimus_place(data, instance.resources.index(res))
        return build_plan(data, where, solver=self.name, status=Status.HEURISTIC,
                          termination=Termination.COMPLETED, started=started, seed=seed,
                          options={"sort_resource": self.sort_resource})
