"""kube-default and dltap: Kubernetes-style scores and DLTAP's aggregation (DLTAP Fig. 1, eq. 1-3)."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.placement.kube import kube_scores, scored_resources
from schedopt.placement.problem import cross_pairs
from tests.conftest import assert_checked
from tests.test_placement import placement_instance, ps_job


def test_fig1_cross_node_transfers() -> None:
    """DLTAP Fig. 1: (a) wk1, wk3 on s1, ps1, ps2 on s2, wk2 on s3: 6 cross-node
    transfers; (b) wk1, wk3, ps1 on s1, ps2 on s2, wk2 on s3: 4."""
    assert cross_pairs(2, 3, np.array([0, 2, 0]), np.array([2, 0, 1])) == 6
    assert cross_pairs(2, 3, np.array([1, 1, 0]), np.array([2, 0, 1])) == 4


#: the DLTAP figures' servers have task slots; score them as Kubernetes scores cpu and memory
SLOT = {"slot": 1}


def fig1() -> schedopt.Instance:
    return placement_instance([ps_job("j", 2, 3)], servers=3, slots=2)


@pytest.mark.parametrize("seed", range(20))
def test_dltap_reaches_the_ideal_on_fig1(seed: int) -> None:
    plan = assert_checked(fig1(), schedopt.solve(fig1(), "dltap", seed=seed, resources=SLOT))
    assert plan.metrics["cross_node_pairs"] == 4


def test_kube_default_is_not_always_ideal_on_fig1() -> None:
    pairs = [assert_checked(fig1(), schedopt.solve(fig1(), "kube-default", seed=s, resources=SLOT)).metrics["cross_node_pairs"]
             for s in range(20)]
    assert min(pairs) == 4 and max(pairs) > 4


# ---- kube-scheduler's own test tables (pkg/scheduler/framework/plugins/noderesources) ---------
# Each case: node capacities and existing requests over (cpu, memory[, nvidia.com/gpu]), the
# pod's request, the scored resources {name: weight}, and the scores Kubernetes' test expects.

K8S_RESOURCES = ["cpu", "memory", "nvidia.com/gpu"]


def k8s_scores(nodes: list[tuple[float, ...]], existing: list[tuple[float, ...]], pod: tuple[float, ...],
               resources: dict[str, int] | None, plugin: str) -> list[int]:
    """One plugin's scores (``least`` or ``balanced``) on each node."""
    spec = scored_resources(K8S_RESOURCES, resources, "kube-default")
    pad = lambda v: np.array(list(v) + [0.0] * (3 - len(v)), dtype=float)  # noqa: E731
    cap = np.array([pad(n) for n in nodes])
    load = np.array([pad(e) for e in existing])
    pod_v = pad(pod)
    cap_full = np.hstack([cap, cap[:, spec.idx]])
    load_full = np.hstack([load, load[:, spec.idx]])
    pod_full = np.concatenate([pod_v, pod_v[spec.idx]])
    w_least, w_bal = (1.0, 0.0) if plugin == "least" else (0.0, 1.0)
    got = kube_scores(cap_full, load_full, pod_full, spec, R=3, weight_least=w_least, weight_balanced=w_bal)
    return [int(x) for x in got]


LEAST = [  # least_allocated_test.go, TestLeastAllocatedScoringStrategy
    ("nothing scheduled, nothing requested", [(4000, 10000)] * 2, [(0, 0)] * 2, (0, 0), None, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", [(4000, 10000), (6000, 10000)],
     [(0, 0)] * 2, (3000, 5000), None, [37, 50]),
    ("no resources requested, pods scheduled with resources", [(10000, 20000)] * 2, [(6000, 0), (6000, 5000)],
     (0, 0), None, [70, 57]),
    ("resources requested, pods scheduled with resources", [(10000, 20000)] * 2, [(3000, 0), (3000, 5000)],
     (3000, 5000), None, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", [(10000, 20000), (10000, 50000)],
     [(3000, 0), (3000, 5000)], (3000, 5000), None, [57, 60]),
    ("requested resources exceed node capacity", [(4000, 10000)] * 2, [(3000, 0), (3000, 5000)], (3000, 0), None,
     [50, 25]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
     [(4000, 10000), (6000, 10000)], [(0, 0)] * 2, (3000, 5000), {"memory": 2, "cpu": 1}, [41, 50]),
    ("bypass extended resource if the pod does not request", [(6000, 10000, 0), (6000, 10000, 4)], [(0, 0, 0)] * 2,
     (3000, 5000, 0), {"cpu": 1, "memory": 1, "nvidia.com/gpu": 1}, [50, 50]),
    ("honor extended resource if the pod requests", [(6000, 10000, 4), (6000, 10000, 10)], [(0, 0, 0)] * 2,
     (3000, 5000, 2), {"cpu": 1, "memory": 1, "nvidia.com/gpu": 1}, [50, 60]),
    ("if the node doesn't have a resource", [(6000, 10000, 0), (6000, 10000, 4)], [(0, 0, 0)] * 2, (3000, 4000, 0),
     {"nvidia.com/gpu": 2, "cpu": 1, "memory": 1}, [55, 55]),
]

BALANCED = [  # balanced_allocation_test.go, TestNodeResourcesBalancedAllocation
    ("resources requested, pods scheduled with resources", [(10000, 20000)] * 2, [(3000, 0), (3000, 5000)],
     (3000, 5000), None, [82, 95]),
    ("node without the scalar resource should skip the scalar resource", [(3500, 40000, 8), (3500, 40000, 0)],
     [(0, 0, 0)] * 2, (3000, 5000, 0), {"cpu": 1, "memory": 1, "nvidia.com/gpu": 1}, [63, 63]),
]


@pytest.mark.parametrize("name, nodes, existing, pod, resources, want", LEAST, ids=[c[0] for c in LEAST])
def test_least_allocated_matches_kubernetes(name, nodes, existing, pod, resources, want) -> None:
    assert k8s_scores(nodes, existing, pod, resources, "least") == want


@pytest.mark.parametrize("name, nodes, existing, pod, resources, want", BALANCED, ids=[c[0] for c in BALANCED])
def test_balanced_allocation_matches_kubernetes(name, nodes, existing, pod, resources, want) -> None:
    assert k8s_scores(nodes, existing, pod, resources, "balanced") == want


def test_integer_truncations_as_kubernetes() -> None:
    # least-allocated: per-resource integer scores (2, 53), then (2 + 53) // 2 = 27 (not floor(27.5...) = 28)
    assert k8s_scores([(34, 28)], [(24, 11)], (9, 2), None, "least") == [27]
    # balanced: fractions 13/15, 10/15 in float64; int64((1 - std)·100) truncates 89.999... to 89
    assert k8s_scores([(15, 15)], [(6, 9)], (7, 1), None, "balanced") == [89]


def _two_nodes_gpu() -> schedopt.Instance:
    return schedopt.Instance.from_dict({
        "name": "k8s-cpu-memory", "resources": ["cpu", "gpu", "memory"],
        "servers": [{"name": "a", "capacity": {"cpu": 16, "gpu": 1, "memory": 64}},
                    {"name": "b", "capacity": {"cpu": 8, "gpu": 8, "memory": 64}}],
        "jobs": [{"id": "j", "roles": {"worker": {"demand": {"cpu": 2, "gpu": 1, "memory": 8}}}}],
        "allocation": {"j": {"worker": 1}}})


@pytest.mark.parametrize("seed", range(5))
def test_default_profile_scores_cpu_and_memory_only(seed: int) -> None:
    # A: least (87 + 87) // 2 = 87, balanced 100 -> 187; B: (75 + 87) // 2 = 81, balanced 93 -> 174
    inst = _two_nodes_gpu()
    plan = assert_checked(inst, schedopt.solve(inst, "kube-default", seed=seed))
    assert plan.placement == {"j": {"a": {"worker": 1}}}
    # scoring the GPU too (a `resources` option, as NodeResourcesFitArgs allows) prefers B
    plan = assert_checked(inst, schedopt.solve(inst, "kube-default", seed=seed,
                                               resources={"cpu": 1, "memory": 1, "gpu": 1}))
    assert plan.placement == {"j": {"b": {"worker": 1}}}


def test_a_pod_without_cpu_request_counts_the_non_zero_default() -> None:
    spec = scored_resources(["cpu", "mem_gb"], None, "kube-default")
    assert spec.names == ["cpu", "mem_gb"] and spec.default[0] == pytest.approx(0.1)
    assert spec.default[1] == pytest.approx(200 * 2 ** 20 / 1e9)


def test_resources_option_is_validated() -> None:
    with pytest.raises(schedopt.InputError, match="weight must be an integer in 1..100"):
        schedopt.solve(_two_nodes_gpu(), "kube-default", resources={"cpu": 0})
    with pytest.raises(schedopt.InputError, match='"gpux" is not a resource'):
        schedopt.solve(_two_nodes_gpu(), "kube-default", resources={"gpux": 1})


def test_kube_spreads_pods_over_empty_nodes() -> None:
    inst = placement_instance([ps_job("j", 1, 3)], servers=4, slots=4)
    plan = assert_checked(inst, schedopt.solve(inst, "kube-default", seed=1, resources=SLOT))
    assert plan.metrics["servers_used"] == 4  # least-allocated: one pod per empty node


def test_gang_rollback_keeps_capacity_for_later_jobs() -> None:
    """A job that does not fit is taken back whole, so the next job still fits."""
    inst = placement_instance([ps_job("big", 3, 6), ps_job("small", 1, 2)], servers=2, slots=4)
    for solver in ("kube-default", "dltap"):
        plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
        assert plan.paused == ["big"] and "small" in plan.placement


def test_bad_weights_are_input_errors() -> None:
    with pytest.raises(schedopt.InputError, match="weight_dltap"):
        schedopt.solve(fig1(), "dltap", weight_dltap=-1)
