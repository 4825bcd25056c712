"""Incremental placement: keep running tasks where they are, place only the rest.

A scheduler calls placement every round with jobs already running. Re-placing
every job from scratch moves tasks (each move restarts its job) even when
nothing about the job changed. Here, before a heuristic runs:

1. each running job keeps, per role, up to its new count of its running tasks
   on the servers they run on (the servers holding most of them first, so a
   shrinking job leaves its smallest outposts);
2. kept tasks whose server no longer has room (its capacity shrank) are let go,
   in job order, until the server fits;
3. the heuristic places what is left (new jobs, and the tasks a job grows by)
   on the capacity the kept tasks leave free;
4. a job whose remaining tasks find no room is paused, and its kept tasks are
   released (its placement is all or nothing).

Everything is per job and sparse: O(tasks) beyond the heuristic's own cost.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from schedopt.placement.problem import TOL, JobPlacement, PlacementData

Placer = Callable[[PlacementData], list[JobPlacement | None]]


def _keep_role(old_servers: np.ndarray, old_counts: np.ndarray, n: int) -> np.ndarray:
    """Of the running tasks ``old_counts`` (k,) on ``old_servers``, the ones a
    role with n tasks now keeps: all if n >= their total, else the servers
    holding most first (ties by server index)."""
    if n >= int(old_counts.sum()):
        return old_counts.copy()
    keep = np.zeros_like(old_counts)
    left = n
    for i in np.lexsort((old_servers, -old_counts)).tolist():
        take = min(int(old_counts[i]), left)
        keep[i] = take
        left -= take
        if left == 0:
            break
    return keep


def place_incrementally(data: PlacementData, place: Placer) -> tuple[list[JobPlacement | None], dict[str, int]]:
    """``place`` run on what the running jobs' kept tasks leave; the merged
    placement and counters (``kept_in_place`` tasks, ``released`` tasks let go
    for lack of room)."""
    if data.prev is None:
        return place(data), {"kept_in_place": 0, "released": 0}
    J = data.J
    kept: list[JobPlacement | None] = [None] * J
    free = data.cap.astype(float).copy()
    for j, old in enumerate(data.prev):
        if old is None:
            continue
        servers, old_p, old_w = old
        kp = _keep_role(servers, old_p, int(data.counts[j, 0]))
        kw = _keep_role(servers, old_w, int(data.counts[j, 1]))
        on = (kp + kw) > 0
        if on.any():
            kept[j] = (servers[on], kp[on], kw[on])
            np.subtract.at(free, servers[on], kp[on, None] * data.demand[j, 0] + kw[on, None] * data.demand[j, 1])
    released = 0
    over = np.flatnonzero(np.any(free < -TOL * np.maximum(1.0, data.cap), axis=1))
    if len(over):  # capacity shrank under running tasks: let go of kept tasks there, job by job
        for k in over.tolist():
            for j in range(J):
                if np.all(free[k] >= -TOL * np.maximum(1.0, data.cap[k])):
                    break
                pl = kept[j]
                if pl is None or k not in pl[0]:
                    continue
                i = int(np.flatnonzero(pl[0] == k)[0])
                free[k] += pl[1][i] * data.demand[j, 0] + pl[2][i] * data.demand[j, 1]
                released += int(pl[1][i] + pl[2][i])
                on = np.arange(len(pl[0])) != i
                kept[j] = (pl[0][on], pl[1][on], pl[2][on]) if on.any() else None
    rest = data.counts.copy()
    for j, pl in enumerate(kept):
        if pl is not None:
            rest[j, 0] -= int(pl[1].sum())
            rest[j, 1] -= int(pl[2].sum())
    todo = np.flatnonzero(rest.sum(axis=1) > 0)
    where: list[JobPlacement | None] = list(kept)
    if len(todo):
        sub = replace(data, jobs=[data.jobs[j] for j in todo], roles=[data.roles[j] for j in todo], counts=rest[todo],
                      demand=data.demand[todo], size_mb=data.size_mb[todo], bw=data.bw[todo],
                      cap=np.maximum(free, 0.0), prev=None, bound_load=data.cap - np.maximum(free, 0.0))
        for j, pl in zip(todo.tolist(), place(sub)):
            if pl is None:
                where[j] = None  # all or nothing: the job's kept tasks are released
                continue
            where[j] = _merge(kept[j], pl) if kept[j] is not None else _strip(pl)
    n_kept = sum(int(pl[1].sum() + pl[2].sum()) for j, pl in enumerate(kept) if pl is not None and where[j] is not None)
    return where, {"kept_in_place": n_kept, "released": released}


def _merge(a: JobPlacement, b: JobPlacement) -> JobPlacement:
    """Two parts of one job's placement as one (servers sorted)."""
    servers = np.concatenate([a[0], b[0]])
    uniq, inv = np.unique(servers, return_inverse=True)
    ps = np.bincount(inv, weights=np.concatenate([a[1], b[1]]), minlength=len(uniq)).astype(np.int64)
    w = np.bincount(inv, weights=np.concatenate([a[2], b[2]]), minlength=len(uniq)).astype(np.int64)
    return _strip((uniq, ps, w))


def _strip(pl: JobPlacement) -> JobPlacement:
    """Without servers that got no task."""
    on = (pl[1] + pl[2]) > 0
    return pl if on.all() else (pl[0][on], pl[1][on], pl[2][on])


def place_keeping(data: PlacementData, place: Placer, keep: bool) -> tuple[list[JobPlacement | None], dict[str, int]]:
    """The heuristics' entry point: incremental when ``keep`` and some job runs,
    else ``place`` from scratch."""
    if keep and data.prev is not None:
        return place_incrementally(data, place)
    return place(data), {}
