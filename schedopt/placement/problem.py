"""The placement problem (Optimus §4.2, Appendix; DESIGN.md): given each job's
task counts (the instance's ``allocation``), choose counts per server.

Per job with p parameter servers and w workers, model size S (MB, ``model_size``)
and per-end bandwidths B_ps, B_worker (MB/s, ``bandwidth``), with p_k, w_k the
tasks on server k (DESIGN.md, from the Appendix):

    T_j = max( max_{k: p_k > 0} (S/p)·(w - w_k)/B_ps,  max_{k: w_k > 0} (S/p)·(p - p_k)/B_worker )

seconds per step spent on cross-server transfers, and DLTAP's cross-node
PS-worker pairs p·w - Σ_k p_k·w_k. One-role jobs have T_j = 0 and no pairs.
Objective: place the most jobs, then minimise Σ_j T_j.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedopt.errors import FieldProblem, InputError
from schedopt.instance import TWO_ROLES, Instance
from schedopt.plan import Certificate, Objective, Plan, Status, Termination, relative_gap
from schedopt.tolerances import FIT_TOL

#: objective kind -> (plan objective name, metric holding its value)
OBJECTIVE_NAMES = {"sum": ("total_transfer_time", "total_transfer_time_s"),
                   "max": ("max_transfer_time", "max_transfer_time_s"),
                   "cross_pairs": ("cross_node_pairs", "cross_node_pairs")}
TOL = FIT_TOL  # the library's capacity slack (tolerances.py)


@dataclass
class PlacementData:
    """``counts`` (J, 2) tasks of (ps, worker) — one-role jobs use slot 1 (as
    workers, no PS); ``demand`` (J, 2, R) per task; ``size_mb`` (J,);
    ``bw`` (J, 2) MB/s at a PS and at a worker; ``cap`` (S, R)."""

    instance: Instance
    jobs: list[str]
    roles: list[tuple[str, ...]]
    counts: np.ndarray
    demand: np.ndarray
    size_mb: np.ndarray
    bw: np.ndarray
    cap: np.ndarray
    servers: list[str]
    #: where each job runs now (instance ``previous``), sparse like a placement; None: no job runs
    prev: list["JobPlacement | None"] | None = None
    #: (S, R) load of tasks kept in place, already taken out of ``cap`` (incremental placement)
    bound_load: np.ndarray | None = None
    #: the R column names: the instance's resources, then on a typed cluster one column per accelerator
    #: type (:data:`TYPE_COLUMN`), which a task of a job given that type demands once and only servers
    #: of that type hold (a reduction: every placement solver and checker reads types as capacity)
    resources: list[str] | None = None

    @property
    def J(self) -> int:
        return len(self.jobs)

    @property
    def S(self) -> int:
        return len(self.servers)


#: the name of a typed cluster's column for accelerator type τ (``None``: servers without a type)
TYPE_COLUMN = "type:{}"


def type_columns(instance: Instance) -> tuple[list[str], np.ndarray, dict[str | None, int]]:
    """On a cluster whose servers name accelerator types: the extra columns' names, their
    capacity (S, T) (a number no placement reaches on a server of that type, 0 elsewhere) and each
    type's column. Nothing on an untyped cluster."""
    if not instance.has_types:
        return [], np.zeros((len(instance.server_names), 0)), {}
    kinds = instance.accelerators
    column = {kind: t for t, kind in enumerate(kinds)}
    tasks = float(sum(sum(c.values()) for c in (instance.allocation or {}).values())) + 1.0
    cap = np.zeros((len(instance.server_names), len(kinds)))
    k = 0
    for srv in instance.servers:
        cap[k:k + srv.count, column[srv.accelerator]] = tasks
        k += srv.count
    return [TYPE_COLUMN.format(kind if kind is not None else "none") for kind in kinds], cap, column


def compile_placement(instance: Instance) -> PlacementData:
    """Arrays of the jobs the instance's ``allocation`` gives counts for (others are not placed).
    On a typed cluster the job's type (``allocation_accelerators``) is a column of its demand."""
    alloc = instance.allocation or {}
    type_names, type_cap, type_col = type_columns(instance)
    given_types = instance.allocation_accelerators or {}
    problems = []
    jobs, roles, counts, demand, size, bw = [], [], [], [], [], []
    for i, job in enumerate(instance.jobs):
        if job.id not in alloc:
            continue
        given = alloc[job.id]
        missing = [r for r in job.roles if r not in given]
        if missing:
            problems.append(FieldProblem(f"allocation.{job.id}", f"counts for roles {missing} are required"))
            continue
        two = len(job.roles) == 2
        if two and (job.model_size is None or job.bandwidth is None):
            problems.append(FieldProblem(f"jobs[{i}]", "a PS/worker job needs model_size and bandwidth for placement"))
            continue
        jobs.append(job.id)
        roles.append(TWO_ROLES if two else (None, job.role_names[0]))
        c = (given["ps"], given["worker"]) if two else (0, given[job.role_names[0]])
        counts.append(c)
        d = np.zeros((2, len(instance.resources) + len(type_names)))
        R0 = len(instance.resources)
        if two:
            d[0, :R0], d[1, :R0] = instance.vector(job.roles["ps"].demand), instance.vector(job.roles["worker"].demand)
        else:
            d[1, :R0] = instance.vector(job.roles[job.role_names[0]].demand)
        if type_names:
            if job.id not in given_types or given_types[job.id] not in type_col:
                problems.append(FieldProblem(f"allocation_accelerators.{job.id}",
                                             "the servers name accelerator types: give the type the job's counts run on"))
                continue
            d[:, R0 + type_col[given_types[job.id]]] = 1.0  # every task runs on a server of its job's type
        demand.append(d)
        size.append(float(job.model_size or 0.0))
        bw.append((job.bandwidth.ps, job.bandwidth.worker) if job.bandwidth else (1.0, 1.0))
    if problems:
        raise InputError(instance.source, problems)
    R = len(instance.resources) + len(type_names)
    return PlacementData(instance=instance, jobs=jobs, roles=roles,
                         counts=np.array(counts, dtype=np.int64).reshape(-1, 2),
                         demand=np.array(demand).reshape(-1, 2, R), size_mb=np.array(size), bw=np.array(bw).reshape(-1, 2),
                         cap=np.hstack([instance.server_capacity, type_cap]) if type_names else instance.server_capacity,
                         servers=instance.server_names, prev=_previous_placement(instance, jobs, roles),
                         resources=list(instance.resources) + type_names)


def _previous_placement(instance: Instance, jobs: list[str], roles: list[tuple[str | None, str]]) -> list["JobPlacement | None"] | None:
    """Each job's running placement from ``instance.previous`` (sparse, servers sorted)."""
    if not instance.previous:
        return None
    index = {name: k for k, name in enumerate(instance.server_names)}
    out: list[JobPlacement | None] = []
    for job_id, names in zip(jobs, roles):
        per_server = instance.previous.get(job_id)
        if not per_server:
            out.append(None)
            continue
        items = sorted((index[srv], c.get(names[0], 0) if names[0] else 0, c.get(names[1], 0))
                       for srv, c in per_server.items())
        items = [it for it in items if it[1] or it[2]]
        out.append((np.array([i[0] for i in items], dtype=np.int64), np.array([i[1] for i in items], dtype=np.int64),
                    np.array([i[2] for i in items], dtype=np.int64)) if items else None)
    return out if any(pl is not None for pl in out) else None


def kept_tasks(new: "JobPlacement", old: "JobPlacement") -> tuple[int, int]:
    """(PS, workers) of a job that stay on their servers: Σ_k min(new_k, old_k) per role."""
    _, a, b = np.intersect1d(new[0], old[0], assume_unique=True, return_indices=True)
    return int(np.minimum(new[1][a], old[1][b]).sum()), int(np.minimum(new[2][a], old[2][b]).sum())


def movement_metrics(data: PlacementData, where: list["JobPlacement | None"]) -> dict[str, int]:
    """Against the running placement: ``kept_tasks`` Σ_k min(new, old) over roles;
    ``moved_tasks`` the tasks that could have stayed and did not, Σ_r min(n_r,
    old_r) - kept_r, over placed running jobs; ``moved_jobs`` placed running
    jobs whose placement changes at all (each is a restart); ``stopped_jobs``
    running jobs not placed."""
    kept = moved = moved_jobs = stopped = 0
    for j, old in enumerate(data.prev or []):
        if old is None:
            continue
        new = where[j]
        if new is None:
            stopped += 1
            continue
        kp, kw = kept_tasks(new, old)
        p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
        p_old, w_old = int(old[1].sum()), int(old[2].sum())
        kept += kp + kw
        moved += min(p, p_old) - kp + min(w, w_old) - kw
        # unchanged exactly when every task, old and new, is a kept one
        moved_jobs += not (kp == p == p_old and kw == w == w_old)
    return {"kept_tasks": kept, "moved_tasks": moved, "moved_jobs": moved_jobs, "stopped_jobs": stopped}


def transfer_time_s(size_mb: float, p: int, w: int, pk: np.ndarray, wk: np.ndarray, bw_ps: float, bw_worker: float) -> float:
    """T_j for one job from its per-server counts pk, wk (DESIGN.md)."""
    if p == 0 or w == 0 or len(pk) <= 1:
        return 0.0  # no PS or no worker, or the whole job on one server: nothing crosses the network
    unit = size_mb / p
    t_ps = np.where(pk > 0, unit * (w - wk) / bw_ps, 0.0)
    t_w = np.where(wk > 0, unit * (p - pk) / bw_worker, 0.0)
    return float(max(t_ps.max(initial=0.0), t_w.max(initial=0.0)))


def cross_pairs(p: int, w: int, pk: np.ndarray, wk: np.ndarray) -> int:
    """DLTAP's cross-node PS-worker pairs: p·w - Σ_k p_k·w_k."""
    return int(p * w - int(pk @ wk))


#: a job's placement: (servers (k,), ps per server (k,), workers per server (k,)); None = paused
JobPlacement = tuple[np.ndarray, np.ndarray, np.ndarray]


def placement_metrics(data: PlacementData, where: list[JobPlacement | None]) -> dict[str, Any]:
    """Metrics of a placement given per job (sparse: only the servers it uses)."""
    per_job_t = {}
    pairs = 0
    load = np.zeros_like(data.cap, dtype=float)
    for j, pl in enumerate(where):
        if pl is None:
            continue
        servers, pk, wk = pl
        p, w = data.counts[j]
        per_job_t[data.jobs[j]] = transfer_time_s(data.size_mb[j], p, w, pk, wk, *data.bw[j])
        pairs += cross_pairs(p, w, pk, wk)
        np.add.at(load, servers, pk[:, None] * data.demand[j, 0] + wk[:, None] * data.demand[j, 1])
    in_use = load.sum(axis=1) > 0
    used = int(np.count_nonzero(in_use))
    with np.errstate(divide="ignore", invalid="ignore"):
        free_frac = np.where(data.cap > 0, (data.cap - load) / data.cap, 0.0)
    placed = sum(pl is not None for pl in where)
    movement = movement_metrics(data, where) if data.prev is not None else {}
    return {
        **movement,
        "transfer_time_s": per_job_t,
        "total_transfer_time_s": float(sum(per_job_t.values())),
        "max_transfer_time_s": float(max(per_job_t.values(), default=0.0)),
        "cross_node_pairs": int(pairs),
        "servers_used": used,
        "placed": int(placed),
        "paused": int(len(data.instance.jobs) - placed),
        # fragmentation: free capacity left on servers in use, per resource (mean fraction of their capacity)
        "fragmentation": {r: float(free_frac[in_use, k].mean()) if used else 0.0
                          for k, r in enumerate(data.instance.resources)},
    }


def build_plan(data: PlacementData, where: list[JobPlacement | None], *, solver: str, status: Status,
               termination: Termination, started: float, bound: float | None = None, seed: int | None = None,
               options: dict[str, Any] | None = None, metrics: dict[str, Any] | None = None,
               message: str | None = None, objective: str = "sum", admitted_bound: int | None = None,
               certificate: Certificate | None = None) -> Plan:
    m = placement_metrics(data, where)
    m.update(metrics or {})
    obj_name, metric = OBJECTIVE_NAMES[objective]
    value = float(m[metric])
    allocation, placement = {}, {}
    for j, pl in enumerate(where):
        if pl is None:
            continue
        names = data.roles[j]
        allocation[data.jobs[j]] = {r: int(data.counts[j, k]) for k, r in enumerate(names) if r is not None}
        per_server = {}
        for s_idx, a, b in zip(pl[0].tolist(), pl[1].tolist(), pl[2].tolist()):
            counts = {r: n for r, n in zip(names, (a, b)) if r is not None and n > 0}
            if counts:
                per_server[data.servers[s_idx]] = counts
        placement[data.jobs[j]] = per_server
    return Plan(instance=data.instance.name, problem="placement", solver=solver, status=status, termination=termination,
                objective=Objective(name=obj_name, sense="min", value=value, bound=bound, gap=relative_gap(value, bound),
                                    admitted=len(allocation), admitted_bound=admitted_bound),
                certificate=certificate,
                solve_seconds=time.perf_counter() - started, allocation=allocation, placement=placement,
                paused=[j.id for j in data.instance.jobs if j.id not in allocation], metrics=m, seed=seed,
                options=options or {}, message=message)


def coefficients(data: PlacementData) -> tuple[np.ndarray, np.ndarray]:
    """(c_ps, c_w), each (J,): seconds of T_j per remote peer; 0 for one-role jobs."""
    p = data.counts[:, 0].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = np.where(p > 0, data.size_mb / np.where(p > 0, p, 1.0), 0.0)
    two = (data.counts[:, 0] > 0) & (data.counts[:, 1] > 0)
    return np.where(two, unit / data.bw[:, 0], 0.0), np.where(two, unit / data.bw[:, 1], 0.0)


def objective_value(data: PlacementData, where: list[JobPlacement | None], objective: str) -> float:
    """The stage-2 objective of a placement, recomputed from the data."""
    vals = []
    for j, pl in enumerate(where):
        if pl is None:
            continue
        p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
        if objective == "cross_pairs":
            vals.append(float(cross_pairs(p, w, pl[1], pl[2])))
        else:
            vals.append(transfer_time_s(data.size_mb[j], p, w, pl[1], pl[2], *data.bw[j]))
    if objective == "max":
        return max(vals, default=0.0)
    return float(sum(vals))
