"""Hierarchical cohorts (Kueue's Cohort objects with a parent and quotas of their own, issue 52 §4):
the quota rows (``allocation/rows.py``) against Kueue's resource tree written out here from its
definitions (subtree quota, local quota kept by a lending limit, usage bubbling up past it, the
borrowing limit of every node with a parent), on random usages (the exact solvers against brute
force on the same kit: tests/test_quotas.py); manifests with Cohort objects imported and admitted as Kueue's cohort page says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import schedopt
from schedopt.allocation.rows import quota_rows
from schedopt.kueue_import import import_kueue
from schedopt.testing import random_cohort_tree_instance
from tests.conftest import assert_checked


def kueue_tree_holds(inst: schedopt.Instance, flavor: str, resource: str, use: dict[str, float]) -> bool:
    """Whether queue usages ``use`` (queue -> amount of one resource of one flavor) respect every
    queue's and cohort's quota as Kueue's resource nodes define them (resource_node.go's
    SubtreeQuota, localQuota, Usage; available() >= 0 at every node)."""
    queues = {q.name: q for q in inst.queues or []}
    cohorts = {c.name: c for c in inst.cohorts or []}
    parent = {c.name: c.parent for c in inst.cohorts or []}
    for q in queues.values():
        if q.cohort is not None:
            parent.setdefault(q.cohort, None)
    for c in list(parent.values()):
        if c is not None:
            parent.setdefault(c, None)

    def quota(node: tuple[str, str]):  # type: ignore[no-untyped-def]
        holder = queues[node[1]] if node[0] == "queue" else cohorts.get(node[1])
        return None if holder is None else holder.quotas.get(flavor, {}).get(resource)

    def children(name: str) -> list[tuple[str, str]]:
        return [("queue", q.name) for q in queues.values() if q.cohort == name] + \
               [("cohort", c) for c, p in parent.items() if p == name]

    def subtree(node: tuple[str, str]) -> float:
        qt = quota(node)
        own = qt.nominal if qt is not None else 0.0
        return own if node[0] == "queue" else own + sum(subtree(c) - local(c) for c in children(node[1]))

    def local(node: tuple[str, str]) -> float:
        qt = quota(node)
        return max(0.0, subtree(node) - qt.lending_limit) if qt is not None and qt.lending_limit is not None else 0.0

    def usage(node: tuple[str, str]) -> float:
        if node[0] == "queue":
            return use.get(node[1], 0.0)
        return sum(max(0.0, usage(c) - local(c)) for c in children(node[1]))

    for q in queues.values():
        qt = quota(("queue", q.name))
        if qt is None and use.get(q.name, 0.0) > 0:
            return False  # a flavor or resource the queue does not list
        if qt is not None and q.cohort is None and use.get(q.name, 0.0) > qt.nominal:
            return False
        if qt is not None and q.cohort is not None and qt.borrowing_limit is not None and \
                use.get(q.name, 0.0) > qt.nominal + qt.borrowing_limit:
            return False
    for name, above in parent.items():
        node = ("cohort", name)
        qt = quota(node)
        if above is None and usage(node) > subtree(node):
            return False
        if above is not None and qt is not None and qt.borrowing_limit is not None and usage(node) > subtree(node) + qt.borrowing_limit:
            return False
    return True


@pytest.mark.parametrize("seed", range(12))
def test_quota_rows_are_kueues_resource_tree(seed: int) -> None:
    """On 300 random GPU usages per flavor and seed (servers scaled so no quota row is implied by the
    capacity), the rows (with the type's capacity) hold exactly when Kueue's tree does."""
    doc = random_cohort_tree_instance(seed).to_dict()
    for srv in doc["servers"]:  # room for every quota: no row is left out as implied by the capacity
        srv["count"] = srv.get("count", 1) * 20
    inst = schedopt.Instance.from_dict(doc)
    rows = quota_rows(inst)
    names = [q.name for q in inst.queues or []]
    rng = np.random.default_rng(seed)
    g = inst.resources.index("gpu")
    agree = 0
    for t, flavor in enumerate(inst.flavors):
        cap = inst.accelerator_capacity[t, g]
        mine = np.flatnonzero(rows.types[:, t] & (rows.resource == g))
        for _ in range(300):
            u = rng.integers(0, 7, size=len(names)).astype(float) * (rng.random(len(names)) < 0.8)
            by_rows = bool(np.all(rows.member[mine].astype(float) @ u <= rows.rhs[mine] + 1e-9)) and u.sum() <= cap + 1e-9
            by_tree = kueue_tree_holds(inst, flavor, "gpu", dict(zip(names, u.tolist()))) and u.sum() <= cap + 1e-9
            assert by_rows == by_tree, (flavor, dict(zip(names, u)), [rows.names[k] for k in mine])
            agree += 1
    assert agree >= 300


def cohort(name: str, quota: str, parent: str | None = None) -> str:
    """A Cohort object with its own cpu quota on default-flavor (``quota``: the resource's fields)."""
    return (f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {name}}}\nspec:\n"
            + (f"  parentName: {parent}\n" if parent else "")
            + "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default-flavor\n"
            + f"      resources:\n      - {{name: cpu, {quota}}}")


COHORTS = "\n---\n".join([
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: default-flavor}",
    cohort("root", "nominalQuota: 2"),
    cohort("org-a", "nominalQuota: 0, borrowingLimit: BORROW", parent="root"),
    cohort("org-b", "nominalQuota: 0, lendingLimit: LEND", parent="root")])


def cq(name: str, cohort: str, nominal: int) -> str:
    return (f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  cohortName: {cohort}\n"
            f"  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default-flavor\n      resources:\n"
            f"      - {{name: cpu, nominalQuota: {nominal}}}")


def wl(name: str, queue: str, pods: int) -> str:
    return (f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns}}\n"
            f"spec:\n  queueName: {queue}\n  podSets:\n  - name: main\n    count: {pods}\n    minCount: 1\n"
            "    template: {spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 1}}}]}}")


@pytest.mark.parametrize("borrow,lend,most", [
    (100, 4, 14),  # org-b lends all of b1's 4: 8 + 2 + 4
    (1, 4, 9),     # org-a borrows at most 1 beyond its subtree's 8
    (100, 1, 11),  # org-b keeps 4 - 1 = 3 for its own subtree: 8 + 2 + 1
    (100, 0, 10),  # org-b lends nothing: org-a's 8 and the root's pool 2
])
def test_a_queue_borrows_through_the_tree_within_every_limit(borrow: int, lend: int, most: int, tmp_path: Path) -> None:
    """Queues a1 (4 CPUs) and a2 (4) in org-a, b1 (4) in org-b, under root with a pool of 2: one big
    workload in a1 (minCount 1) gets what Kueue's tree allows: org-a's subtree 8, plus at most its
    borrowing limit from the root's pool 2 and what org-b lends (its lending limit)."""
    docs = [COHORTS.replace("BORROW", str(borrow)).replace("LEND", str(lend)),
            cq("a1", "org-a", 4), cq("a2", "org-a", 4), cq("b1", "org-b", 4), wl("big", "a1", 20)]
    path = tmp_path / "tree.yaml"
    path.write_text("\n---\n".join(d.strip("\n") for d in docs))
    inst = import_kueue([path])
    assert {c.name: c.parent for c in inst.cohorts} == {"root": None, "org-a": "root", "org-b": "root"}
    assert inst.servers[0].capacity["cpu"] == 14  # without Node objects: every nominal quota, the pools' too
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    assert plan.allocation["big"]["worker"] == most
    best = assert_checked(inst, schedopt.solve(inst, "optimus-milp"))
    assert best.allocation["big"]["worker"] == most


def test_cohort_manifests_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: c}\nspec: {fairSharing: {weight: 2}}")
    with pytest.raises(schedopt.InputError, match="spec.fairSharing"):
        import_kueue([path])
    path.write_text(cohort("org-a", "nominalQuota: 0, borrowingLimit: 3"))  # a root cohort with a borrowing limit
    with pytest.raises(schedopt.InputError, match="borrowingLimit.*without a parent"):
        import_kueue([path])
    doc = random_cohort_tree_instance(0).to_dict()
    doc["cohorts"][0]["parent"] = "team-x"  # org under team-x under org: a cycle
    with pytest.raises(schedopt.InputError, match="own ancestor"):
        schedopt.Instance.from_dict(doc)
