"""The capacity rows of the one allocation model (checker side: the instance alone).

Every allocation solver and the checker read the model's capacity rows from
here: one row per (accelerator type, resource) pair, named ``r@type`` (plain
``r`` for servers without a type), then the queues' quota rows (Kueue's
ClusterQueue semantics, below). Prices in certificates name these rows.
Nothing here imports a solver.

Tenants' quotas as linear capacity rows (issue 39 §1).

For a queue q, a flavor f (an accelerator type) and a resource r, let u_q be
what q's admitted jobs on f use of r. With n_q the nominal quota, b_q the
borrowing limit and l_q the lending limit (Kueue's ``nominalQuota``,
``borrowingLimit``, ``lendingLimit``), a plan keeps:

- a queue outside any cohort:  u_q <= n_q;
- a queue in a cohort with b_q set:  u_q <= n_q + b_q;
- each cohort c: the part g_q = n_q - l_q of each member's quota (0 without l_q)
  is kept for that member whether it uses it or not, so
  Σ_{q in c} max(u_q, g_q) <= Σ_{q in c} n_q, which is the set of linear rows
  Σ_{q in S} u_q <= Σ_{q in c} n_q - Σ_{q in c \\ S} g_q  for every nonempty S ⊆ c
  (S = c is the cohort's total; a member without l_q adds nothing to the others' rows
  beyond S = c's). Rows implied by others (all g_q = 0 outside S) are left out,
  and so is any row whose limit is at least the type's capacity of its resource
  (the capacity row holds it: a cohort whose quotas cover the cluster adds nothing).

Hierarchical cohorts (``Instance.cohorts``) generalise the cohort rows to Kueue's resource tree
(:class:`CohortTree`): one family of rows per root and per cohort with a borrowing limit.

A flavor or resource a queue does not list is one it cannot use (Kueue: a
ClusterQueue admits only resources its resource groups cover): u_q <= 0.
Jobs without a queue are bounded by the cluster's capacity only.

Each row is a capacity: the allocation models append them to the per-type
resources (:func:`typed_resource_names`), so the LP bound prices them (certificates name them),
the exact models, the greedy and the checker respect them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedopt.instance import MAX_LENDING_MEMBERS, Instance  # lenders per cohort: validated on load


@dataclass
class QuotaRows:
    """``names`` (Q,), ``rhs`` (Q,) the rows' limits; ``member`` (Q, queues) whether
    queue k's use counts in row i; ``types`` (Q, types) whether use on type t counts in it
    (one type, or every type for a shared flavor's row) and ``resource`` (Q,) the resource
    index each row bounds."""

    names: list[str]
    rhs: np.ndarray
    member: np.ndarray
    types: np.ndarray
    resource: np.ndarray

    @property
    def Q(self) -> int:
        return len(self.names)


def shared_flavor(instance: Instance, queue: Any, resource: str) -> str | None:
    """The shared flavor (``Instance.shared_flavors``) under which ``queue`` holds its quota of
    ``resource`` (None: under each type's own flavor, or none)."""
    return next((f for f in instance.shared_flavors or [] if resource in queue.quotas.get(f, {})), None)


def quota_rows(instance: Instance) -> QuotaRows:
    """The rows of ``instance.queues`` (none without queues): per type's flavor and resource, then
    per shared flavor and resource (a row over every type)."""
    queues = instance.queues or []
    flavors = instance.flavors
    T = len(flavors)
    names: list[str] = []
    rhs: list[float] = []
    member: list[np.ndarray] = []
    types_of: list[np.ndarray] = []
    resource_of: list[int] = []

    capacity = instance.accelerator_capacity  # (types, R)

    def add(name: str, queues_in: list[int], limit: float, on: np.ndarray, r: int) -> None:
        if limit >= capacity[on, r].sum():
            return  # implied by the types' capacity: the jobs of all queues together use no more
        row = np.zeros(len(queues), dtype=bool)
        row[queues_in] = True
        names.append(name)
        rhs.append(max(0.0, float(limit)))
        member.append(row)
        types_of.append(on)
        resource_of.append(r)

    tree = CohortTree(instance)
    holders = [(f, None) for f in flavors] + [(g, True) for g in instance.shared_flavors or []]
    for t, (f, shared) in enumerate(holders):
        on = np.ones(T, dtype=bool) if shared else np.arange(T) == t
        for r, res in enumerate(instance.resources):
            # the queues whose use of res counts under flavor f
            counted = [k for k, q in enumerate(queues) if (shared_flavor(instance, q, res) == f if shared
                                                           else shared_flavor(instance, q, res) is None)]
            for k in counted:
                q = queues[k]
                quota = q.quotas.get(f, {}).get(res)
                if quota is None:
                    if not shared:
                        add(f"quota[{q.name}]:{res}@{f} (not covered)", [k], 0.0, on, r)
                elif q.cohort is None:
                    add(f"quota[{q.name}]:{res}@{f}", [k], quota.nominal, on, r)
                elif quota.borrowing_limit is not None:
                    add(f"quota[{q.name}]:{res}@{f} (nominal + borrowing limit)", [k],
                        quota.nominal + quota.borrowing_limit, on, r)
            for cohort in tree.bounded:
                for inside, out, limit in tree.rows(cohort, f, res):
                    inside = [k for k in inside if k in counted]
                    if not inside:
                        continue
                    label = f"cohort[{cohort}]:{res}@{f}" + (" (subtree quota + borrowing limit)" if tree.parent.get(cohort) else "") \
                        + (f" without {'+'.join(out)}" if out else "")
                    add(label, inside, limit, on, r)
    Q = len(names)
    return QuotaRows(names=names, rhs=np.array(rhs, dtype=float),
                     member=np.array(member, dtype=bool).reshape(Q, len(queues)),
                     types=np.array(types_of, dtype=bool).reshape(Q, T), resource=np.array(resource_of, dtype=np.int64))

class CohortTree:
    """The queues' cohorts as Kueue's resource tree (hierarchical cohorts; a flat cohort is a root
    whose children are its queues). Per flavor and resource, a node n has its nominal quota N_n,
    lending limit L_n and borrowing limit B_n (a queue's own; a cohort's from ``Instance.cohorts``).
    Kueue's subtree quota is S_n = N_n for a queue, N_n + Σ_children (S_c - local_c) for a cohort,
    where local_c = max(0, S_c - L_c) (0 without L_c) is kept for c's subtree; a cohort's usage is
    U_n = Σ_children max(0, U_c - local_c). A plan keeps U_root <= S_root and U_n <= S_n + B_n at
    every node with a parent and B_n. Each is a maximum of linear forms: for every set X of lending
    nodes under n (none below another), Σ_{queues under n, under no node of X} u_q <= bound_n +
    Σ_{lending nodes under n, outside X and its subtrees} local_m (X empty: every queue)."""

    def __init__(self, instance: Instance):
        self.queues = instance.queues or []
        self.cohorts = {c.name: c for c in instance.cohorts or []}
        self.parent: dict[str, str | None] = {c.name: c.parent for c in instance.cohorts or []}
        self.children: dict[str, list[str]] = {}  # cohort -> child cohorts, in listing order
        self.members: dict[str, list[int]] = {}  # cohort -> its queues (direct children)
        for k, q in enumerate(self.queues):
            if q.cohort is not None:
                self.members.setdefault(q.cohort, []).append(k)
                self.parent.setdefault(q.cohort, None)
        for c in instance.cohorts or []:
            if c.parent is not None:
                self.children.setdefault(c.parent, []).append(c.name)
                self.parent.setdefault(c.parent, None)
        # roots, then cohorts with a borrowing limit on some resource: the nodes whose bound is a row
        self.bounded = sorted(n for n, p in self.parent.items() if p is None) + sorted(
            n for n, p in self.parent.items() if p is not None and any(
                qt.borrowing_limit is not None for per in self.cohorts[n].quotas.values() for qt in per.values()))

    def _own(self, cohort: str, f: str, res: str) -> Any:
        c = self.cohorts.get(cohort)
        return c.quotas.get(f, {}).get(res) if c is not None else None

    def subtree(self, node: tuple[str, Any], f: str, res: str) -> tuple[float, float]:
        """(S_n, local_n) of a node ("queue", k) or ("cohort", name)."""
        kind, key = node
        if kind == "queue":
            qt = _quota(self.queues[key], f, res)
            total = qt.nominal if qt is not None else 0.0
        else:
            qt = self._own(key, f, res)
            total = (qt.nominal if qt is not None else 0.0) + sum(
                s - loc for s, loc in (self.subtree(c, f, res) for c in self.nodes_under(key)))
        local = max(0.0, total - qt.lending_limit) if qt is not None and qt.lending_limit is not None else 0.0
        return total, local

    def nodes_under(self, cohort: str) -> list[tuple[str, Any]]:
        """The direct children of a cohort: its queues (listing order), then its child cohorts."""
        return [("queue", k) for k in self.members.get(cohort, [])] + [("cohort", c) for c in self.children.get(cohort, [])]

    def rows(self, cohort: str, f: str, res: str) -> list[tuple[list[int], tuple[str, ...], float]]:
        """The linear rows of the cohort's bound (class docstring): (queues counted, the lending nodes
        left out by name, limit); X in order of size, then of the lending nodes' order (depth first)."""
        total, _ = self.subtree(("cohort", cohort), f, res)
        if self.parent.get(cohort) is not None:
            qt = self._own(cohort, f, res)
            if qt is None or qt.borrowing_limit is None:
                return []
            total += qt.borrowing_limit
        # the lending nodes under the cohort (local > 0): (node, local, its queues, the nodes under it), depth first
        lending: list[tuple[tuple[str, Any], float, frozenset[int], frozenset[tuple[str, Any]]]] = []

        def walk(name: str) -> tuple[frozenset[int], frozenset[tuple[str, Any]]]:
            queues: frozenset[int] = frozenset()
            below: frozenset[tuple[str, Any]] = frozenset()
            for child in self.nodes_under(name):
                qs, bs = (frozenset([child[1]]), frozenset()) if child[0] == "queue" else walk(child[1])
                _, local = self.subtree(child, f, res)
                if local > 0:
                    lending.append((child, local, qs, bs))
                queues, below = queues | qs, below | bs | {child}
            return queues, below

        everyone, _ = walk(cohort)
        assert len(lending) <= MAX_LENDING_MEMBERS  # Instance validation refuses more
        out = []
        for size in range(len(lending) + 1):
            for left in itertools.combinations(range(len(lending)), size):
                if any(lending[a][0] in lending[b][3] for a in left for b in left if a != b):
                    continue  # a node under another left-out one: that row is the other's
                gone = frozenset().union(*(lending[a][2] for a in left)) if left else frozenset()
                under_gone = frozenset().union(*(lending[a][3] | {lending[a][0]} for a in left)) if left else frozenset()
                inside = [k for k in sorted(everyone) if k not in gone]
                if not inside:
                    continue
                kept = sum(loc for node, loc, _, _ in lending if node not in under_gone)
                out.append((inside, tuple(self.name(lending[a][0]) for a in left), total + kept))
        return out

    def name(self, node: tuple[str, Any]) -> str:
        return self.queues[node[1]].name if node[0] == "queue" else node[1]


def _quota(queue, flavor: str, resource: str):  # type: ignore[no-untyped-def]
    return queue.quotas.get(flavor, {}).get(resource)


def queue_index(instance: Instance) -> dict[str, int]:
    return {q.name: k for k, q in enumerate(instance.queues or [])}


def quota_use(rows: QuotaRows, queue: int | None, t: int, use: np.ndarray) -> np.ndarray:
    """A job's use of each quota row (n, Q) from its use of the resources (n, R) on type t."""
    out = np.zeros((use.shape[0], rows.Q))
    if queue is None or rows.Q == 0:
        return out
    hit = np.flatnonzero(rows.member[:, queue] & rows.types[:, t])
    out[:, hit] = use[:, rows.resource[hit]]
    return out


def resource_key(resource: str, accelerator: str | None) -> str:
    """The name of resource ``resource`` on servers of type ``accelerator`` (``gpu@v100``;
    plain ``gpu`` for servers without a type), as prices in certificates name it."""
    return resource if accelerator is None else f"{resource}@{accelerator}"


def typed_resource_names(instance: Instance) -> list[str]:
    """The capacity rows: the (type, resource) pairs in the order of
    :attr:`Instance.accelerators` then resources, then the queues' quota rows (quotas.py)."""
    return [resource_key(r, kind) for kind in instance.accelerators for r in instance.resources] + quota_rows(instance).names


def capacity_vector(instance: Instance) -> np.ndarray:
    """The limits of :func:`typed_resource_names`' rows."""
    return np.concatenate([instance.accelerator_capacity.reshape(-1), quota_rows(instance).rhs])


def accelerator_usage(instance: Instance, allocation: dict[str, dict[str, int]],
                      accelerators: dict[str, str | None]) -> np.ndarray:
    """Σ tasks·demand per (type, resource), shape (types, resources); a job of
    ``allocation`` whose type is missing or unknown is counted nowhere."""
    kinds = {kind: t for t, kind in enumerate(instance.accelerators)}
    used = np.zeros((len(kinds), len(instance.resources)))
    demands = instance.role_demands()  # (J, 2, R)
    jobs, types, counts = [], [], []
    for job_id, per_role in allocation.items():
        t = kinds.get(accelerators[job_id]) if job_id in accelerators else None
        if t is None:
            continue
        j = instance.job_index[job_id]
        names = instance.jobs[j].role_names
        jobs.append(j)
        types.append(t)
        counts.append([per_role.get(names[0], 0), per_role.get(names[1], 0) if len(names) == 2 else 0])
    if jobs:
        c = np.array(counts, dtype=float).reshape(len(jobs), 2)
        np.add.at(used, np.array(types), np.einsum("jk,jkr->jr", c, demands[np.array(jobs)]))
    return used


def accelerator_utilization(instance: Instance, allocation: dict[str, dict[str, int]],
                            accelerators: dict[str, str | None]) -> dict[str, float]:
    """Used / capacity per (type, resource) with capacity > 0, named ``r@type``."""
    used = accelerator_usage(instance, allocation, accelerators)
    cap = instance.accelerator_capacity
    out = {}
    for t, kind in enumerate(instance.accelerators):
        for r, name in enumerate(instance.resources):
            if cap[t, r] > 0:
                out[resource_key(name, kind)] = float(used[t, r] / cap[t, r])
    return out
