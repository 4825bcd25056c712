"""``kube-default``: the Kubernetes default scheduler's scoring (the baseline DLTAP builds on).

Pods (one per task) are placed one at a time, each job's PS pods then its
workers, jobs in instance order (the queue). For each pod:

1. *filter* (NodeResourcesFit): nodes whose free capacity holds the pod's demand;
2. *score*, as the default profile of kube-scheduler (plugins NodeResourcesFit
   with the LeastAllocated strategy and NodeResourcesBalancedAllocation, weight
   1 each; pkg/scheduler/framework/plugins/noderesources), over the scored
   resources (default ``cpu`` and ``memory`` with weight 1; option ``resources``):
   - least-allocated: per resource ``((alloc - req)·100) / alloc`` in integer
     arithmetic (0 when req > alloc), then ``Σ score·weight / Σ weight``,
     integer division; ``req`` is the node's requests plus the pod's, where a pod
     that does not request ``cpu`` (``memory``) counts Kubernetes' non-zero
     default of 100 m CPU (200 MiB);
   - balanced-allocation: fractions min(1, req/alloc) of the requested amounts
     (no defaults), std = |f1 - f2| / 2 for two resources or the population std
     for more, score ``int64((1 - std)·100)``;
   a resource a node has none of is left out, and so is a scalar resource (any
   but cpu and memory) the pod does not request. Quantities are exact integers
   (milli-CPU, bytes, milli-units), so the truncations are Kubernetes' own;
3. the highest total wins; ties are broken by a seeded uniform random choice
   (kube-scheduler's selectHost samples ties uniformly).

Not modelled: other plugins of the default profile (they score these pods
equally), and percentageOfNodesToScore (every feasible node is scored, as with
``percentageOfNodesToScore: 100``).

A job is placed whole or not at all (gang): if a pod fits nowhere, the job's
pods placed so far are taken back and the job is paused.

Nodes with the same capacity and the same load score the same for every pod, so
the scheduler keeps them in groups (:class:`NodeGroups`) and scores groups, not
nodes: 100,000 pods on 16,000 nodes take seconds, not minutes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.problem import TOL, JobPlacement, PlacementData, build_plan, compile_placement
from schedopt.plan import Plan, Status, Termination
from schedopt.placement.incremental import place_keeping
from schedopt.registry import register
from schedopt.tolerances import IMPROVE_TOL

TIE_TOL = IMPROVE_TOL  # scores within it are ties
MAX_NODE_SCORE = 100
#: kube-scheduler's non-zero defaults for a pod that does not request cpu / memory
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY_BYTES = 200 * 1024 * 1024
#: memory resource names and their unit in bytes (the default profile scores ``memory``)
MEMORY_UNITS = {"memory": 1.0, "mem_gb": 1e9, "mem_gib": 2.0 ** 30, "mem_mb": 1e6, "mem_mib": 2.0 ** 20}
DEFAULT_RESOURCES = {"cpu": 1, "memory": 1}


@dataclass
class ScoredResources:
    """The resources the score plugins read, as indices into the instance's
    resources: ``idx`` (k,), ``weight`` (k,) LeastAllocated weights, ``scale``
    (k,) integer units per instance unit, ``scalar`` (k,) not cpu/memory,
    ``default`` (k,) the non-zero default request in instance units (0: none)."""

    idx: np.ndarray
    weight: np.ndarray
    scale: np.ndarray
    scalar: np.ndarray
    default: np.ndarray
    names: list[str]

    @property
    def k(self) -> int:
        return len(self.idx)


def scored_resources(instance_resources: list[str], resources: dict[str, int] | None, solver: str) -> ScoredResources:
    """Map the scoring resources (``{name: weight}``; default cpu and memory, 1
    each) to the instance's. ``memory`` stands for the instance's memory
    resource (``memory`` in bytes, or ``mem_gb``/``mem_gib``/``mem_mb``/``mem_mib``).
    Default resources the instance lacks are skipped (a node without them);
    a resource named explicitly must exist."""
    explicit = resources is not None
    spec = dict(DEFAULT_RESOURCES if resources is None else resources)
    idx, weight, scale, scalar, default, names = [], [], [], [], [], []
    for name, w in spec.items():
        target = name
        if name == "memory" and name not in instance_resources:
            target = next((r for r in MEMORY_UNITS if r in instance_resources), name)
        if target not in instance_resources:
            if explicit:
                raise InputError(solver, f'resources: "{name}" is not a resource of the instance '
                                         f'({", ".join(instance_resources)})')
            continue
        idx.append(instance_resources.index(target))
        weight.append(int(w))
        names.append(target)
        if target == "cpu":
            scale.append(1000.0)
            scalar.append(False)
            default.append(DEFAULT_MILLI_CPU / 1000.0)
        elif target in MEMORY_UNITS:
            scale.append(MEMORY_UNITS[target])
            scalar.append(False)
            default.append(DEFAULT_MEMORY_BYTES / MEMORY_UNITS[target])
        else:
            scale.append(1000.0)
            scalar.append(True)
            default.append(0.0)
    return ScoredResources(np.array(idx, dtype=np.int64), np.array(weight, dtype=np.int64), np.array(scale),
                           np.array(scalar, dtype=bool), np.array(default), names)


def _ints(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Quantities as exact integers (milli-CPU, bytes, milli-units)."""
    return np.rint(x * scale).astype(np.int64)


def kube_scores(cap: np.ndarray, load: np.ndarray, pod: np.ndarray, spec: ScoredResources, *, R: int,
                weight_least: float, weight_balanced: float) -> np.ndarray:
    """The default profile's score of a pod on nodes: ``cap`` (G, R + k) capacity,
    ``load`` (G, R + k) the nodes' requests, ``pod`` (R + k,) the pod's; columns
    R.. hold the scored resources' non-zero-defaulted requests (LeastAllocated).
    The filter is :func:`fits`; these are the score plugins alone."""
    G = len(cap)
    if spec.k == 0:
        return np.full(G, weight_balanced * MAX_NODE_SCORE, dtype=float)
    alloc = _ints(cap[:, spec.idx], spec.scale)  # (G, k)
    pod_req = pod[spec.idx]
    # a scalar resource the pod does not request is left out (as a node without it)
    active = (alloc > 0) & ~(spec.scalar & (pod_req == 0))[None, :]
    safe = np.where(alloc > 0, alloc, 1)
    # NodeResourcesFit, LeastAllocated: integer per-resource scores, integer weighted mean
    req_least = _ints(load[:, R:] + pod[R:], spec.scale)
    per = np.where(req_least > alloc, 0, ((alloc - req_least) * MAX_NODE_SCORE) // safe)
    w = np.where(active, spec.weight[None, :], 0)
    w_sum = w.sum(axis=1)
    least = np.where(w_sum > 0, (per * w).sum(axis=1) // np.where(w_sum > 0, w_sum, 1), 0)
    # NodeResourcesBalancedAllocation: requested amounts (no defaults), fractions capped at 1
    req_bal = _ints(load[:, spec.idx] + pod_req, spec.scale)
    frac = np.where(active, np.minimum(req_bal / safe, 1.0), 0.0)
    n = active.sum(axis=1)
    std = np.zeros(G)
    two = n == 2
    if two.any():
        pair = np.where(active[two])[1].reshape(-1, 2)
        rows = frac[two]
        std[two] = np.abs((rows[np.arange(len(rows)), pair[:, 0]] - rows[np.arange(len(rows)), pair[:, 1]]) / 2)
    many = n > 2
    if many.any():
        rows, act = frac[many], active[many]
        mean = rows.sum(axis=1) / n[many]
        std[many] = np.sqrt((np.where(act, rows - mean[:, None], 0.0) ** 2).sum(axis=1) / n[many])
    balanced = np.trunc((1.0 - std) * float(MAX_NODE_SCORE))
    return weight_least * least + weight_balanced * balanced


def fits(cap: np.ndarray, load: np.ndarray, pod: np.ndarray, R: int) -> np.ndarray:
    """NodeResourcesFit's filter: nodes (G,) whose free capacity holds the pod."""
    return np.all(load[:, :R] + pod[:R] <= cap[:, :R] * (1 + TOL) + TOL, axis=1)


class NodeGroups:
    """Nodes grouped by identical (capacity, load). ``cap`` (S, R)."""

    def __init__(self, cap: np.ndarray, score_fn, rng: np.random.Generator, load: np.ndarray | None = None):
        self.cap = cap.astype(float)
        self.used = np.zeros_like(self.cap) if load is None else load.astype(float).copy()
        self.score_fn = score_fn
        self.rng = rng
        S, R = self.cap.shape
        self.g_cap = np.zeros((0, R))
        self.g_used = np.zeros((0, R))
        self.g_score = np.zeros(0)
        self.size = np.zeros(0, dtype=np.int64)
        self.members: list[list[int]] = []
        self.key: dict[bytes, int] = {}
        self.group_of = np.zeros(S, dtype=np.int64)
        self.pos = np.zeros(S, dtype=np.int64)
        self.demand = np.zeros(R)
        self._rebuild(range(S))

    # -- group bookkeeping
    def _key(self, node: int) -> bytes:
        return self.cap[node].tobytes() + self.used[node].tobytes()

    def _rebuild(self, nodes) -> None:
        """Regroup ``nodes`` from scratch (also drops empty groups)."""
        self.key, self.members = {}, []
        caps, useds = [], []
        for s in nodes:
            k = self._key(s)
            g = self.key.get(k)
            if g is None:
                g = self.key[k] = len(self.members)
                self.members.append([])
                caps.append(self.cap[s])
                useds.append(self.used[s])
            self.group_of[s] = g
            self.pos[s] = len(self.members[g])
            self.members[g].append(s)
        R = self.cap.shape[1]
        self.g_cap = np.array(caps).reshape(-1, R)
        self.g_used = np.array(useds).reshape(-1, R)
        self.size = np.array([len(m) for m in self.members], dtype=np.int64)
        self.g_score = self.score_fn(self.g_cap, self.g_used, self.demand)
        self.g_score[self.size == 0] = -np.inf

    def _remove(self, node: int) -> None:
        g = int(self.group_of[node])
        lst = self.members[g]
        i, last = int(self.pos[node]), lst[-1]
        lst[i] = last
        self.pos[last] = i
        lst.pop()
        self.size[g] -= 1
        if self.size[g] == 0:
            self.g_score[g] = -np.inf  # an empty group offers no node

    def _add(self, node: int) -> None:
        k = self._key(node)
        g = self.key.get(k)
        if g is None:
            g = self.key[k] = len(self.members)
            self.members.append([])
            if g == len(self.size):  # grow the group arrays geometrically
                extra = max(g, 16)
                self.g_cap = np.vstack([self.g_cap, np.zeros((extra, self.g_cap.shape[1]))])
                self.g_used = np.vstack([self.g_used, np.zeros((extra, self.g_used.shape[1]))])
                self.g_score = np.append(self.g_score, np.full(extra, -np.inf))
                self.size = np.append(self.size, np.zeros(extra, dtype=np.int64))
            self.g_cap[g], self.g_used[g] = self.cap[node], self.used[node]
        if self.size[g] == 0:
            self.g_score[g] = self.score_fn(self.cap[node:node + 1], self.used[node:node + 1], self.demand)[0]
        self.group_of[node] = g
        self.pos[node] = len(self.members[g])
        self.members[g].append(node)
        self.size[g] += 1

    def move(self, node: int, delta: np.ndarray) -> None:
        """Change a node's load by ``delta`` (R,)."""
        self._remove(node)
        self.used[node] += delta
        self._add(node)
        if len(self.members) > 4 * max(int(np.count_nonzero(self.size)), 1) + 256:
            self._rebuild(range(len(self.cap)))  # drop the empty groups

    # -- scheduling
    def set_demand(self, demand: np.ndarray) -> None:
        """Score every group for pods of ``demand`` (R,)."""
        self.demand = np.asarray(demand, dtype=float)
        G = len(self.members)
        self.g_score[:G] = np.where(self.size[:G] > 0, self.score_fn(self.g_cap[:G], self.g_used[:G], self.demand), -np.inf)

    def node_scores(self, nodes: np.ndarray) -> np.ndarray:
        return self.g_score[self.group_of[nodes]]

    def pick(self, bonus_nodes: np.ndarray | None = None, bonus: np.ndarray | None = None) -> int | None:
        """The node a pod goes to: highest score, ties uniformly at random; None if
        it fits nowhere. ``bonus`` (k,) is added to the scores of ``bonus_nodes`` (k,)."""
        G = len(self.members)
        size, eff = self.size[:G], self.g_score[:G]  # empty groups score -inf
        has_bonus = bonus_nodes is not None and len(bonus_nodes) > 0
        if has_bonus:
            b_score = self.node_scores(bonus_nodes) + bonus
            # a group's plain members: those without a bonus
            plain = size.copy()
            np.subtract.at(plain, self.group_of[bonus_nodes], 1)
            eff = np.where(plain > 0, eff, -np.inf)
            best = max(eff.max(initial=-np.inf), b_score.max())
        else:
            plain = size
            best = eff.max(initial=-np.inf)
        if best == -np.inf:
            return None
        tied = np.flatnonzero(eff >= best - TIE_TOL)
        cum = np.cumsum(plain[tied])
        n_plain = int(cum[-1]) if len(cum) else 0
        b_tied = np.flatnonzero(b_score >= best - TIE_TOL) if has_bonus else np.zeros(0, dtype=np.int64)
        r = int(self.rng.integers(n_plain + len(b_tied)))
        if r >= n_plain:
            return int(bonus_nodes[b_tied[r - n_plain]])
        g = int(tied[np.searchsorted(cum, r, side="right")])
        lst = self.members[g]
        excluded = set(bonus_nodes.tolist()) if has_bonus else ()
        while True:  # uniform over the group's plain members (bonus nodes are few)
            node = lst[int(self.rng.integers(len(lst)))]
            if node not in excluded:
                return node


class KubeScheduler:
    """Kubernetes-style pod-at-a-time placement; subclasses change the pod order and scores."""

    def __init__(self, *, weight_least_allocated: float = 1.0, weight_balanced_allocation: float = 1.0,
                 resources: dict[str, int] | None = None, keep: bool = True, bound: bool = False):
        self.bound = bool(bound)  # ours, not Kubernetes': the certified bounds (pattern certificates)
        for name, v in (("weight_least_allocated", weight_least_allocated),
                        ("weight_balanced_allocation", weight_balanced_allocation)):
            if not (isinstance(v, (int, float)) and v >= 0):
                raise InputError(self.name, f"{name}: must be a number >= 0, got {v!r}")
        if resources is not None:
            if not isinstance(resources, dict) or not resources:
                raise InputError(self.name, f"resources: expected a map resource -> weight, got {resources!r}")
            for r, w in resources.items():
                # NodeResourcesFitArgs.scoringStrategy.resources: weights are integers in 1..100
                if not (isinstance(w, int) and not isinstance(w, bool) and 1 <= w <= MAX_NODE_SCORE):
                    raise InputError(self.name, f"resources.{r}: weight must be an integer in 1..100, got {w!r}")
        self.weight_least_allocated = weight_least_allocated
        self.weight_balanced_allocation = weight_balanced_allocation
        self.resources = dict(resources) if resources is not None else None
        self.keep = bool(keep)  # running pods stay bound to their nodes; only new pods are scheduled

    def options(self) -> dict:
        return {"weight_least_allocated": self.weight_least_allocated,
                "weight_balanced_allocation": self.weight_balanced_allocation, "resources": self.resources,
                "keep": self.keep, "bound": self.bound}

    #: role slots in the order a job's pods are scheduled; slot 0 = PS, 1 = worker
    role_order: tuple[int, ...] = (0, 1)
    #: role slots whose pods get :meth:`bonus`
    bonus_slots: tuple[int, ...] = ()

    def bonus(self, data: PlacementData, j: int, slot: int, nodes: np.ndarray, workers_on: np.ndarray) -> np.ndarray:
        """Extra score (k,) of this job's next pod of ``slot`` on ``nodes`` (k,), which hold
        ``workers_on`` (k,) of the job's workers."""
        return np.zeros(len(nodes))

    def pod_requests(self, data: PlacementData, spec: ScoredResources) -> np.ndarray:
        """Each job's pod requests per role, (J, 2, R + k): the demand, then the
        scored resources with kube-scheduler's non-zero default where the role
        does not request cpu / memory at all."""
        R = data.demand.shape[2]
        out = np.zeros((data.J, 2, R + spec.k))
        out[:, :, :R] = data.demand
        out[:, :, R:] = data.demand[:, :, spec.idx]
        instance = data.instance
        for j, job_id in enumerate(data.jobs):
            job = instance.jobs[instance.job_index[job_id]]
            for slot, role in enumerate(data.roles[j]):
                if role is None:
                    continue
                declared = job.roles[role].demand
                for i, name in enumerate(spec.names):
                    if spec.default[i] > 0 and name not in declared:
                        out[j, slot, R + i] = spec.default[i]
        return out

    def place(self, data: PlacementData, seed: int | None, spec: ScoredResources | None = None) -> list[JobPlacement | None]:
        rng = np.random.default_rng(0 if seed is None else seed)  # no seed: still deterministic
        if spec is None:
            spec = scored_resources(data.instance.resources, self.resources, self.name)
        R = data.cap.shape[1]

        def score(cap: np.ndarray, used: np.ndarray, pod: np.ndarray) -> np.ndarray:
            total = kube_scores(cap, used, pod, spec, R=R, weight_least=self.weight_least_allocated,
                                weight_balanced=self.weight_balanced_allocation)
            return np.where(fits(cap, used, pod, R), total, -np.inf)

        # nodes carry (capacity, requests) over the instance's resources, then the scored
        # resources' non-zero-defaulted requests; pods bound already (incremental) count as requests
        bound = data.bound_load if data.bound_load is not None else np.zeros_like(data.cap)
        allocatable = data.cap + bound
        cap = np.hstack([allocatable, allocatable[:, spec.idx]])
        groups = NodeGroups(cap, score, rng, load=np.hstack([bound, bound[:, spec.idx]]))
        pods = self.pod_requests(data, spec)
        where: list[JobPlacement | None] = [None] * data.J
        for j in range(data.J):
            placed: list[tuple[int, int]] = []  # (node, slot)
            per_slot: dict[int, dict[int, int]] = {0: {}, 1: {}}
            ok = True
            for slot in self.role_order:
                n = int(data.counts[j, slot])
                if n == 0:
                    continue
                d = pods[j, slot]
                groups.set_demand(d)
                for _ in range(n):
                    if slot in self.bonus_slots:
                        nodes = np.fromiter(per_slot[1].keys(), dtype=np.int64, count=len(per_slot[1]))
                        extra = self.bonus(data, j, slot, nodes, np.fromiter(per_slot[1].values(), dtype=float, count=len(nodes)))
                        node = groups.pick(nodes, extra)
                    else:
                        node = groups.pick()
                    if node is None:
                        ok = False
                        break
                    groups.move(node, d)
                    placed.append((node, slot))
                    per_slot[slot][node] = per_slot[slot].get(node, 0) + 1
                if not ok:
                    break
            if not ok:  # gang: take the job's pods back
                for node, slot in reversed(placed):
                    groups.move(node, -pods[j, slot])
                continue
            servers = np.array(sorted(set(per_slot[0]) | set(per_slot[1])), dtype=np.int64)
            pk = np.array([per_slot[0].get(int(s), 0) for s in servers], dtype=np.int64)
            wk = np.array([per_slot[1].get(int(s), 0) for s in servers], dtype=np.int64)
            where[j] = (servers, pk, wk)
        return where

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_placement(instance)
        spec = scored_resources(instance.resources, self.resources, self.name)
        where, counters = place_keeping(data, lambda d: self.place(d, seed, spec), self.keep)
        message = None
        if spec.k == 0:
            message = (f"no scored resource ({', '.join(self.resources or DEFAULT_RESOURCES)}) in the instance: every "
                       f"node that fits scores the same; give resources={{name: weight}} to score others")
        admitted_bound = bound = cert = None
        if self.bound:
            from schedopt.placement.relaxation import certified_bounds

            admitted_bound, bound, cert, info = certified_bounds(data, where)
            counters = {**counters, **info}
        return build_plan(data, where, solver=self.name, status=Status.HEURISTIC, termination=Termination.COMPLETED,
                          started=started, seed=seed, options=self.options(), metrics=counters, message=message,
                          bound=bound, admitted_bound=admitted_bound, certificate=cert)


@register("kube-default", problem="placement", exact=False, backend="numpy", accelerator_types=True)
class KubeDefault(KubeScheduler):
    """Kubernetes default scheduling: filter, least-allocated + balanced-allocation scores, seeded random ties."""
