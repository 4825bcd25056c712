"""Dorm's partition problem (Dorm §IV), compiled to arrays, and its metrics.

Applications i (the instance's jobs, one role each: ``container``) get x_ij
containers of demand d_i on server j. Dorm eq. 1-4:

    u_k   = Σ_i Σ_j x_ij·d_ik / C_k                   (eq. 1; utilization = Σ_k u_k)
    s_i   = n_i · max_k d_ik / C_k,  n_i = Σ_j x_ij   (eq. 2's actual dominant share)
    loss  = Σ_i |s_i - ŝ_i|                           (eq. 2; ŝ_i from weighted DRF)
    r_i   = 1 if x_ij differs from x_ij^(t-1) on any server j   (eq. 3)
    overhead = Σ_{i in A^t ∩ A^(t-1)} r_i             (eq. 4)

C_k is the cluster total of resource k (resources with C_k = 0 are left out
of every ratio). A^(t-1) is the set of applications in the instance's
``previous`` placement. ŝ_i comes from weighted DRF progressive filling in
whole containers on the cluster total, capped at n_max (DESIGN.md).

Shapes: A applications, S servers (expanded), R resources.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedopt.errors import FieldProblem, InputError
from schedopt.instance import Instance
from schedopt.tolerances import BOUND_NOISE, FIT_TOL, TINY
from schedopt.plan import Certificate, Objective, Plan, Proof, Status, Termination, relative_gap

OBJECTIVE_NAME = "resource_utilization"
TOL = FIT_TOL  # the partition's capacity slack: the library's one (tolerances.py)


@dataclass
class PartitionData:
    """``demand`` (A, R) per container; ``n_min``/``n_max``/``weight`` (A,);
    ``cap`` (S, R) per server; ``total`` (R,) = C_k; ``prev`` (A, S) previous
    containers; ``before`` (A,) app in A^(t-1); ``delta`` (A,) dominant share of
    one container; ``util`` (A,) Σ_k d_ik / C_k (utilization of one container);
    ``ub`` (A, S) most containers of i that server j can hold alone."""

    instance: Instance
    apps: list[str]
    role: list[str]
    demand: np.ndarray
    n_min: np.ndarray
    n_max: np.ndarray
    weight: np.ndarray
    cap: np.ndarray
    total: np.ndarray
    prev: np.ndarray
    before: np.ndarray
    delta: np.ndarray
    util: np.ndarray
    ub: np.ndarray
    servers: list[str]

    @property
    def A(self) -> int:
        return len(self.apps)

    @property
    def S(self) -> int:
        return len(self.servers)

    @property
    def R(self) -> int:
        return self.demand.shape[1]

    def server_classes(self) -> list[np.ndarray]:
        """Groups of servers with identical capacity vectors (server indices each,
        classes in order of their first server)."""
        if self.S == 0:
            return []
        _, first, inverse = np.unique(self.cap, axis=0, return_index=True, return_inverse=True)
        inverse = np.asarray(inverse).reshape(-1)
        return [np.flatnonzero(inverse == c) for c in np.argsort(first)]

    def aggregate(self, classes: list[np.ndarray]) -> "PartitionData":
        """The class relaxation: each class of identical servers becomes one
        "server" with the class's summed capacity. Every placement x gives a
        point of the relaxation (sum x over each class), with the same n_i,
        shares and utilization, and r_i = 1 whenever a class total changed
        (then some server changed too), so P2 on this data bounds P2 above."""
        cap = np.array([self.cap[c].sum(axis=0) for c in classes]).reshape(len(classes), self.R)
        prev = np.stack([self.prev[:, c].sum(axis=1) for c in classes], axis=1) if classes else np.zeros((self.A, 0), dtype=np.int64)
        ub = np.stack([np.minimum(self.ub[:, c].sum(axis=1), self.n_max) for c in classes], axis=1) if classes else np.zeros((self.A, 0), dtype=np.int64)
        names = [f"class{k}({self.servers[c[0]]} x{len(c)})" for k, c in enumerate(classes)]
        return PartitionData(instance=self.instance, apps=self.apps, role=self.role, demand=self.demand,
                             n_min=self.n_min, n_max=self.n_max, weight=self.weight, cap=cap, total=self.total,
                             prev=prev.astype(np.int64), before=self.before, delta=self.delta, util=self.util,
                             ub=ub.astype(np.int64), servers=names)


def compile_partition(instance: Instance) -> PartitionData:
    """Arrays for the partition problem; every job must have exactly one role."""
    problems = [FieldProblem(f"jobs[{i}].roles", "a Dorm application has one role (its container)")
                for i, job in enumerate(instance.jobs) if len(job.roles) != 1]
    if problems:
        raise InputError(instance.source, problems)
    A, R = len(instance.jobs), len(instance.resources)
    role = [job.role_names[0] for job in instance.jobs]
    demand = np.array([instance.vector(job.roles[r].demand) for job, r in zip(instance.jobs, role)]).reshape(A, R)
    n_min = np.array([job.roles[r].min for job, r in zip(instance.jobs, role)], dtype=np.int64)
    n_max = np.array([job.roles[r].max_count for job, r in zip(instance.jobs, role)], dtype=np.int64)
    weight = np.array([job.weight for job in instance.jobs], dtype=float)
    cap = instance.server_capacity
    total = instance.capacity_total
    servers = instance.server_names
    s_index = {s: j for j, s in enumerate(servers)}
    prev = np.zeros((A, len(servers)), dtype=np.int64)
    before = np.zeros(A, dtype=bool)
    for app, placement in (instance.previous or {}).items():
        i = instance.job_index[app]
        before[i] = True
        for server, counts in placement.items():
            prev[i, s_index[server]] = sum(counts.values())
    live = total > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(live, demand / np.where(live, total, 1.0), 0.0)
        # a demand on a resource the cluster lacks makes the app unplaceable
        impossible = np.any((demand > 0) & ~live, axis=1)
        per_server = np.where(demand[:, None, :] > 0, cap[None, :, :] / np.where(demand > 0, demand, 1.0)[:, None, :], np.inf)
    delta = ratio.max(axis=1) if R else np.zeros(A)
    util = ratio.sum(axis=1) if R else np.zeros(A)
    fit = np.floor(per_server.min(axis=2) + TOL) if R else np.full((A, len(servers)), np.inf)
    ub = np.minimum(np.where(np.isfinite(fit), fit, n_max[:, None]), n_max[:, None]).astype(np.int64)
    ub[impossible] = 0
    return PartitionData(instance=instance, apps=[j.id for j in instance.jobs], role=role, demand=demand,
                         n_min=n_min, n_max=n_max, weight=weight, cap=cap, total=total, prev=prev, before=before,
                         delta=delta, util=util, ub=np.maximum(ub, 0), servers=servers)


# ---- weighted DRF in whole containers ----------------------------------------------------------

def drf_containers(data: PartitionData) -> np.ndarray:
    """Weighted DRF progressive filling (Ghodsi et al.) in whole containers on
    the cluster total, capped at n_max: repeatedly the application with the
    least weighted dominant share n_i·δ_i / w_i (ties by order) gets one more
    container; an application whose next container does not fit, or that is
    at n_max, stops. Returns n̂ (A,)."""
    n = np.zeros(data.A, dtype=np.int64)
    used = np.zeros(data.R)
    limit = data.total * (1 + TOL) + TOL
    heap = [(0.0, i) for i in range(data.A) if data.n_max[i] > 0]
    heapq.heapify(heap)
    while heap:
        _, i = heapq.heappop(heap)
        if n[i] >= data.n_max[i] or np.any(used + data.demand[i] > limit):
            continue
        used += data.demand[i]
        n[i] += 1
        heapq.heappush(heap, (n[i] * data.delta[i] / data.weight[i], i))
    return n


# ---- budgets and metrics --------------------------------------------------------------------------

def budgets(data: PartitionData, fairness_threshold: float, adjustment_threshold: float) -> tuple[float, int]:
    """Dorm eq. 15-16 as printed: Σ l_i <= ceil(θ1·2m), Σ r_i <= ceil(θ2·|A^t ∩ A^(t-1)|)."""
    m = int(np.count_nonzero(data.total > 0))
    return float(math.ceil(fairness_threshold * 2 * m - TINY)), int(math.ceil(adjustment_threshold * int(data.before.sum()) - TINY))


def partition_metrics(data: PartitionData, x: np.ndarray, fair: np.ndarray | None = None) -> dict[str, Any]:
    """Dorm eq. 1-4 for the placement ``x`` (A, S)."""
    fair = drf_containers(data) if fair is None else fair
    n = x.sum(axis=1)
    live = data.total > 0
    used = n @ data.demand
    per_resource = {r: (float(used[k] / data.total[k]) if live[k] else 0.0) for k, r in enumerate(data.instance.resources)}
    share = n * data.delta
    fair_share = fair * data.delta
    changed = np.any(x != data.prev, axis=1) & data.before
    return {
        "utilization": per_resource,
        "resource_utilization": float(sum(per_resource.values())),
        "fairness_loss": float(np.abs(share - fair_share).sum()),
        "adjustment_overhead": int(changed.sum()),
        "adjusted": [data.apps[i] for i in np.flatnonzero(changed)],
        "dominant_share": {a: float(s) for a, s in zip(data.apps, share)},
        "drf_share": {a: float(s) for a, s in zip(data.apps, fair_share)},
        "admitted": int(np.count_nonzero(n)),
        "paused": int(np.count_nonzero(n == 0)),
        "containers": int(n.sum()),
    }


def placement_matrix(data: PartitionData, placement: dict[str, dict[str, dict[str, int]]]) -> np.ndarray:
    """A plan's placement as x (A, S); unknown names raise KeyError."""
    s_index = {s: j for j, s in enumerate(data.servers)}
    a_index = {a: i for i, a in enumerate(data.apps)}
    x = np.zeros((data.A, data.S), dtype=np.int64)
    for app, per_server in placement.items():
        for server, counts in per_server.items():
            x[a_index[app], s_index[server]] += sum(counts.values())
    return x


def build_plan(data: PartitionData, x: np.ndarray | None, *, solver: str, status: Status, termination: Termination,
               started: float, bound: float | None = None, seed: int | None = None,
               options: dict[str, Any] | None = None, metrics: dict[str, Any] | None = None,
               message: str | None = None, fair: np.ndarray | None = None, proof: Proof | None = None) -> Plan:
    """A partition Plan from the placement ``x`` (A, S) (None: no plan);
    ``fair``: the DRF counts n̂ if the caller has them already; ``proof``: the
    certificate of ``bound`` (an upper bound on Σ_k u_k)."""
    fair = drf_containers(data) if fair is None else fair
    metrics = dict(metrics or {})
    if x is None:
        x = np.zeros((data.A, data.S), dtype=np.int64)
        value = None
    else:
        value = float(data.util @ x.sum(axis=1))
    if value is not None and bound is not None and bound < value:
        if value - bound > BOUND_NOISE * max(1.0, abs(value)):
            metrics["bound_rejected"] = bound  # a bound below a feasible plan's value is a bug: state none
            bound = None
        else:
            bound = value  # solver tolerance; never a better-than-optimal claim
    if bound is None or value is None:
        proof = None
    all_metrics = partition_metrics(data, x, fair)
    all_metrics.update(metrics)
    n = x.sum(axis=1)
    allocation = {data.apps[i]: {data.role[i]: int(n[i])} for i in range(data.A) if n[i] > 0}
    placement = {
        data.apps[i]: {data.servers[j]: {data.role[i]: int(x[i, j])} for j in np.flatnonzero(x[i])}
        for i in range(data.A) if n[i] > 0
    }
    return Plan(
        instance=data.instance.name, problem="partition", solver=solver, status=status, termination=termination,
        objective=Objective(name=OBJECTIVE_NAME, sense="max", value=value, bound=bound,
                            gap=relative_gap(value, bound), admitted=int(np.count_nonzero(n))),
        solve_seconds=time.perf_counter() - started, allocation=allocation, placement=placement,
        paused=[data.apps[i] for i in range(data.A) if n[i] == 0], metrics=all_metrics, seed=seed,
        options=options or {}, message=message,
        certificate=Certificate(bound=proof.model_copy(update={"value": bound})) if proof is not None else None,
    )


# ---- first-fit packing -----------------------------------------------------------------------------

def first_fit(data: PartitionData, counts: np.ndarray, *, order: np.ndarray | None = None,
              load: np.ndarray | None = None, whole: bool = False) -> np.ndarray:
    """Place ``counts`` (A,) containers first-fit onto servers in index order,
    applications in ``order`` (default: largest dominant share of one container
    first). ``whole``: an application that does not fit entirely gets none
    (Swarm: it waits); else it keeps the containers that fit. Returns x (A, S)."""
    x = np.zeros((data.A, data.S), dtype=np.int64)
    load = np.zeros_like(data.cap) if load is None else load.copy()
    limit = data.cap * (1 + TOL) + TOL
    order = np.lexsort((np.arange(data.A), -data.delta)) if order is None else order
    for i in order.tolist():
        need = int(counts[i])
        if need <= 0:
            continue
        d = data.demand[i]
        take = fill_first_fit(limit, load, d, need)
        if whole and take.sum() < need:
            continue
        x[i] = take
        load = load + take[:, None] * d[None, :]
    return x


def fill_first_fit(limit: np.ndarray, load: np.ndarray, d: np.ndarray, need: int) -> np.ndarray:
    """Up to ``need`` containers of demand ``d`` (R,) first-fit over servers with
    ``limit`` and ``load`` (S, R): how many each server takes (S,). A
    demand-free container fits anywhere: all go to the first server."""
    pos = d > 0
    if pos.any():
        room = np.clip(np.floor(np.min((limit[:, pos] - load[:, pos]) / d[pos], axis=1) + TOL), 0, need).astype(np.int64)
    else:
        room = np.zeros(len(limit), dtype=np.int64)
        room[:1] = need
    return np.clip(need - (np.cumsum(room) - room), 0, room)


# ---- packing patterns of identical servers -----------------------------------------------------------

def container_shapes(data: PartitionData) -> tuple[np.ndarray, np.ndarray]:
    """Distinct container demand vectors: (shapes (T, R), shape index of each application (A,))."""
    if data.A == 0:
        return np.zeros((0, data.R)), np.zeros(0, dtype=np.int64)
    shapes, index = np.unique(data.demand, axis=0, return_inverse=True)
    return shapes, np.asarray(index).reshape(-1)
