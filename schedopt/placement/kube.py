"""``kube-default``: a Kubernetes-style scheduler (the baseline DLTAP builds on).

Pods (one per task) are placed one at a time, each job's PS pods then its
workers, jobs in instance order (the queue). For each pod:

1. *filter*: nodes whose free capacity holds the pod's demand;
2. *score* (DLTAP eq. 1): Σ_i weight_i × score_i over two priorities, each 0-100:
   - least-allocated: mean over resources of (capacity - requested)/capacity × 100,
   - balanced-allocation: (1 - std of requested/capacity over resources) × 100,
   where "requested" includes the pod and resources a node has none of are left out
   of its means. With ``integer_scores`` (default, as Kubernetes) each score is
   truncated to an integer, which makes ties common;
3. the highest score wins; ties are broken by a seeded uniform random choice.

A job is placed whole or not at all (gang): if a pod fits nowhere, the job's
pods placed so far are taken back and the job is paused.

Nodes with the same capacity and the same load score the same for every pod, so
the scheduler keeps them in groups (:class:`NodeGroups`) and scores groups, not
nodes: 100,000 pods on 16,000 nodes take seconds, not minutes.
"""

from __future__ import annotations

import time

import numpy as np

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.problem import TOL, JobPlacement, PlacementData, build_plan, compile_placement
from schedopt.plan import Plan, Status, Termination
from schedopt.placement.incremental import place_keeping
from schedopt.registry import register

TIE_TOL = 1e-9


def default_scores(cap: np.ndarray, used: np.ndarray, demand: np.ndarray, *, weight_least: float,
                   weight_balanced: float, integer: bool) -> np.ndarray:
    """Eq. 1 score of placing a pod of ``demand`` (R,) on nodes of capacity ``cap``
    (G, R) carrying ``used`` (G, R); -inf where the pod does not fit."""
    req = used + demand
    fits = np.all(req <= cap * (1 + TOL) + TOL, axis=1)
    has = cap > 0
    n = np.maximum(has.sum(axis=1), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(has, np.minimum(req / np.where(has, cap, 1.0), 1.0), 0.0)
    least = (np.where(has, 1.0 - frac, 0.0) * 100.0).sum(axis=1) / n
    mean = frac.sum(axis=1) / n
    std = np.sqrt((np.where(has, frac - mean[:, None], 0.0) ** 2).sum(axis=1) / n)
    balanced = (1.0 - std) * 100.0
    if integer:
        least, balanced = np.floor(least + 1e-9), np.floor(balanced + 1e-9)
    return np.where(fits, weight_least * least + weight_balanced * balanced, -np.inf)


class NodeGroups:
    """Nodes grouped by identical (capacity, load). ``cap`` (S, R)."""

    def __init__(self, cap: np.ndarray, score_fn, rng: np.random.Generator):
        self.cap = cap.astype(float)
        self.used = np.zeros_like(self.cap)
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
                 integer_scores: bool = True, keep: bool = True):
        self.weight_least_allocated = weight_least_allocated
        self.weight_balanced_allocation = weight_balanced_allocation
        self.integer_scores = integer_scores
        self.keep = bool(keep)  # running pods stay bound to their nodes; only new pods are scheduled

    def options(self) -> dict:
        return {"weight_least_allocated": self.weight_least_allocated,
                "weight_balanced_allocation": self.weight_balanced_allocation, "integer_scores": self.integer_scores,
                "keep": self.keep}

    #: role slots in the order a job's pods are scheduled; slot 0 = PS, 1 = worker
    role_order: tuple[int, ...] = (0, 1)
    #: role slots whose pods get :meth:`bonus`
    bonus_slots: tuple[int, ...] = ()

    def bonus(self, data: PlacementData, j: int, slot: int, nodes: np.ndarray, workers_on: np.ndarray) -> np.ndarray:
        """Extra score (k,) of this job's next pod of ``slot`` on ``nodes`` (k,), which hold
        ``workers_on`` (k,) of the job's workers."""
        return np.zeros(len(nodes))

    def place(self, data: PlacementData, seed: int | None) -> list[JobPlacement | None]:
        for name, v in (("weight_least_allocated", self.weight_least_allocated),
                        ("weight_balanced_allocation", self.weight_balanced_allocation)):
            if not (v >= 0):
                raise InputError(self.name, f"{name}: must be >= 0, got {v}")
        rng = np.random.default_rng(0 if seed is None else seed)  # no seed: still deterministic

        def score(cap: np.ndarray, used: np.ndarray, d: np.ndarray) -> np.ndarray:
            return default_scores(cap, used, d, weight_least=self.weight_least_allocated,
                                  weight_balanced=self.weight_balanced_allocation, integer=self.integer_scores)

        groups = NodeGroups(data.cap, score, rng)
        where: list[JobPlacement | None] = [None] * data.J
        for j in range(data.J):
            placed: list[tuple[int, int]] = []  # (node, slot)
            per_slot: dict[int, dict[int, int]] = {0: {}, 1: {}}
            ok = True
            for slot in self.role_order:
                n = int(data.counts[j, slot])
                if n == 0:
                    continue
                d = data.demand[j, slot]
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
                    groups.move(node, -data.demand[j, slot])
                continue
            servers = np.array(sorted(set(per_slot[0]) | set(per_slot[1])), dtype=np.int64)
            pk = np.array([per_slot[0].get(int(s), 0) for s in servers], dtype=np.int64)
            wk = np.array([per_slot[1].get(int(s), 0) for s in servers], dtype=np.int64)
            where[j] = (servers, pk, wk)
        return where

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_placement(instance)
        where, counters = place_keeping(data, lambda d: self.place(d, seed), self.keep)
        return build_plan(data, where, solver=self.name, status=Status.HEURISTIC, termination=Termination.COMPLETED,
                          started=started, seed=seed, options=self.options(), metrics=counters)


@register("kube-default", problem="placement", exact=False, backend="numpy")
class KubeDefault(KubeScheduler):
    """Kubernetes default scheduling: filter, least-allocated + balanced-allocation scores, seeded random ties."""
