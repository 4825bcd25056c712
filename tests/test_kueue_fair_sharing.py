"""Kueue's fair sharing in ``kueue-admission`` (issue 52): share values, the admission tournament and
fair-sharing preemption with its two strategies. The situations follow Kueue's own fair-sharing
preemption tests (``pkg/scheduler/preemption/preemption_fair_test.go``, Apache-2.0: three queues
of 3 CPUs and one of 0 in a cohort, running workloads and one incoming); the manifests are ours."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.kueue_import import import_kueue
from tests.conftest import assert_checked

PREEMPTION = "  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}\n"


def cq(name: str, nominal: str, *, weight: str | None = None) -> str:
    return (f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n"
            f"  cohortName: all\n{PREEMPTION}" + (f"  fairSharing: {{weight: '{weight}'}}\n" if weight else "")
            + "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default\n"
              f"      resources:\n      - {{name: cpu, nominalQuota: {nominal}}}")


def wl(name: str, queue: str, cpu: str, *, running: bool = True, priority: int = 0, created: int = 0) -> str:
    out = (f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, "
           f"creationTimestamp: '2026-01-01T00:00:{created:02d}Z'}}\nspec:\n  queueName: {queue}\n  priority: {priority}\n"
           "  podSets:\n  - name: main\n    count: 1\n"
           f"    template: {{spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}}}")
    if running:
        out += ("\nstatus:\n  admission:\n    clusterQueue: " + queue
                + "\n    podSetAssignments:\n    - name: main\n      count: 1\n      flavors: {cpu: default}")
    return out


def units(queue: str, n: int, **kw: object) -> list[str]:
    return [wl(f"{queue}{i}", queue, "1", **kw) for i in range(1, n + 1)]  # type: ignore[arg-type]


def decide(tmp_path: Path, *docs: str, weights: dict[str, str] | None = None,
           **options: object) -> tuple[schedopt.Instance, schedopt.Plan]:
    weights = weights or {}
    base = ["apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}",
            *(cq(q, "3", weight=weights.get(q)) for q in "abc"), cq("preemptible", "0")]
    path = tmp_path / "case.yaml"
    path.write_text("\n---\n".join([*base, *docs]))
    inst = import_kueue([path])
    return inst, assert_checked(inst, schedopt.solve(inst, "kueue-admission", **{"fair_sharing": True, **options}))


#: situation -> (workloads, the incoming one's queue and CPUs, the workloads Kueue preempts)
CASES = {
    "reclaim nominal from user using the most":
        (units("a", 3) + units("b", 5) + units("c", 1), ("c", "1"), {"b1"}),
    "reclaim borrowable quota from user using the most":
        (units("a", 3) + units("b", 5) + units("c", 1), ("a", "1"), {"b1"}),
    "preempt one from each CQ borrowing":
        ([wl("a1", "a", "500m"), wl("a2", "a", "500m"), wl("a3", "a", "3"),
          wl("b1", "b", "500m"), wl("b2", "b", "500m"), wl("b3", "b", "3")], ("c", "2"), {"a1", "b1"}),
    "can't preempt when everyone under nominal": (units("a", 3) + units("b", 3) + units("c", 3), ("c", "1"), set()),
    "can't preempt when it would switch the imbalance": (units("a", 3) + units("b", 5), ("a", "2"), set()),
    "can preempt lower priority workloads from same CQ":
        ([wl("a1_low", "a", "1", priority=-1), wl("a2_low", "a", "1", priority=-1), *units("a", 4)[2:], *units("b", 5)],
         ("a", "2"), {"a1_low", "a2_low"}),
    "can preempt a combination of same CQ and highest user":
        ([wl("a_low", "a", "1", priority=-1), *units("a", 3)[1:], *units("b", 6)], ("a", "2"), {"a_low", "b1"}),
    "preempt huge workload if there is no other option, as long as the target CQ gets a lower share":
        ([wl("b1", "b", "9")], ("a", "2"), {"b1"}),
    "can't preempt huge workload if the incoming is also huge": ([wl("a1", "a", "2"), wl("b1", "b", "7")], ("a", "5"), set()),
    "can't preempt 2 smaller workloads if the incoming is huge":
        ([wl("b1", "b", "2"), wl("b2", "b", "2"), wl("b3", "b", "3")], ("a", "6"), set()),
    "prefer to preempt workloads that don't make the target CQ have the biggest share":
        ([wl("b1", "b", "2"), wl("b2", "b", "1"), wl("b3", "b", "2"), wl("c1", "c", "1")], ("a", "3500m"), {"b2"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fair_sharing_preemption_as_kueue_decides(case: str, tmp_path: Path) -> None:
    admitted, (queue, cpu), expected = CASES[case]
    incoming = wl("incoming", queue, cpu, running=False, priority=0, created=1)
    inst, plan = decide(tmp_path, *admitted, incoming)
    assert set(plan.metrics["preempted"]) == expected, plan.metrics
    assert ("incoming" in plan.allocation) == bool(expected)
    assert all(j.id in plan.allocation for j in inst.jobs if j.id not in expected and j.id != "incoming")


def test_share_values_and_weights_decide_who_is_admitted_first(tmp_path: Path) -> None:
    """One CPU free; a borrows 2, b borrows 0, each has one pending 1-CPU workload (a's older).
    Classic ordering admits a's (both borrow; older first); fair sharing admits b's (its share
    with it, 112, is below a's, 334); with b's weight 0.25 its share is 445 and a's goes first."""
    docs = [*units("a", 5), *units("b", 3), wl("a_new", "a", "1", running=False, created=1),
            wl("b_new", "b", "1", running=False, created=2)]
    _, classic = decide(tmp_path, *docs, fair_sharing=False)
    assert "a_new" in classic.allocation and "b_new" not in classic.allocation
    _, fair = decide(tmp_path, *docs)
    assert "b_new" in fair.allocation and "a_new" not in fair.allocation
    assert fair.metrics["share_values"] == {"a": 223.0, "b": 112.0, "c": 0.0, "preemptible": 0.0}  # ceil(2000/9), ceil(1000/9)
    inst, weighted = decide(tmp_path, *docs, weights={"b": "0.25"})
    assert inst.queues[1].fair_sharing_weight == 0.25
    assert "a_new" in weighted.allocation and "b_new" not in weighted.allocation


def test_fair_sharing_options_and_refusals(tmp_path: Path) -> None:
    with pytest.raises(schedopt.InputError, match="preemption_strategies"):
        decide(tmp_path, preemption_strategies="LessThanInitialShare,LessThanOrEqualToFinalShare")
    _, plan = decide(tmp_path, *units("a", 3), *units("b", 5), wl("incoming", "a", "2", running=False, created=1),
                     preemption_strategies="LessThanInitialShare")
    assert plan.metrics["preempted"] == []  # a's share with it (223) is not below b's (223)
    tree = schedopt.testing.random_cohort_tree_instance(0)
    with pytest.raises(schedopt.InputError, match="hierarchical cohorts"):
        schedopt.solve(tree, "kueue-admission", fair_sharing=True)
    path = tmp_path / "weight.yaml"
    path.write_text(cq("a", "3", weight="-1"))
    with pytest.raises(schedopt.InputError, match="fairSharing.weight"):
        import_kueue([path])
