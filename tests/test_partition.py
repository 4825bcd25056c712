"""Dorm's partition problem: DRF, the exact models against brute force and
each other, the budgets, Dorm's infeasibility rule, the baselines."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

import schedopt
from schedopt.instance import Instance
from schedopt.partition.problem import budgets, compile_partition, drf_containers
from tests.conftest import SHARED_DATA, assert_checked

PARTITION_SOLVERS = [s.name for s in schedopt.solvers("partition")]
EXACT = ["dorm-milp", "dorm-cpsat"]


def app(app_id: str, demand: dict[str, float], *, weight: float = 1, lo: int = 1, hi: int = 3, **extra: Any) -> dict[str, Any]:
    return {"id": app_id, "weight": weight, "roles": {"container": {"demand": demand, "min": lo, "max": hi}}, **extra}


def partition_instance(apps: list[dict[str, Any]], server: dict[str, float], servers: int = 2, *,
                       previous: dict[str, Any] | None = None, theta: tuple[float, float] = (0.1, 0.1),
                       name: str = "p") -> Instance:
    doc: dict[str, Any] = {
        "schema": "schedopt/instance@1", "name": name, "resources": list(server),
        "servers": [{"name": "s", "count": servers, "capacity": server}], "jobs": apps,
        "policy": {"fairness_threshold": theta[0], "adjustment_threshold": theta[1]},
    }
    if previous:
        doc["previous"] = previous
    return Instance.from_dict(doc)


def random_partition_instance(seed: int) -> Instance:
    """2-3 apps, 2 servers, bounds <= 3, a previous placement for some apps."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 4))
    server = {"cpu": float(rng.integers(4, 9)), "gpu": float(rng.integers(0, 3)), "mem_gb": float(rng.integers(8, 33))}
    apps = []
    for i in range(n):
        demand = {"cpu": float(rng.integers(1, 4)), "gpu": float(rng.integers(0, 2)) if server["gpu"] else 0.0,
                  "mem_gb": float(rng.integers(2, 12))}
        apps.append(app(f"a{i}", demand, weight=float(rng.integers(1, 5)), lo=1, hi=int(rng.integers(1, 4))))
    previous: dict[str, Any] = {}
    load = {0: np.zeros(3), 1: np.zeros(3)}
    cap = np.array(list(server.values()))
    for i in range(n):  # a feasible previous placement: one container where it fits
        j = int(rng.integers(0, 2))
        d = np.array(list(apps[i]["roles"]["container"]["demand"].values()))
        if rng.random() < 0.6 and np.all(load[j] + d <= cap):
            load[j] += d
            previous[f"a{i}"] = {f"s-{j}": {"container": 1}}
    theta = (float(rng.choice([0.05, 0.1, 0.2, 0.5, 1.0])), float(rng.choice([0.0, 0.3, 0.5, 1.0])))
    return partition_instance(apps, server, previous=previous or None, theta=theta, name=f"tiny-{seed}")


def brute_force(inst: Instance) -> float | None:
    """Best Σ_k u_k over every integer placement meeting P2 (None: infeasible)."""
    d = compile_partition(inst)
    policy = inst.policy
    b1, b2 = budgets(d, policy.fairness_threshold, policy.adjustment_threshold)
    fair = drf_containers(d) * d.delta
    best = None
    ranges = [range(int(d.ub[i, j]) + 1) for i in range(d.A) for j in range(d.S)]
    for flat in itertools.product(*ranges):
        x = np.array(flat, dtype=np.int64).reshape(d.A, d.S)
        n = x.sum(axis=1)
        if np.any(n < d.n_min) or np.any(n > d.n_max):
            continue
        if np.any(x.T @ d.demand > d.cap + 1e-9):
            continue
        if np.abs(n * d.delta - fair).sum() > b1 + 1e-9:
            continue
        if int((np.any(x != d.prev, axis=1) & d.before).sum()) > b2:
            continue
        value = float(d.util @ n)
        best = value if best is None else max(best, value)
    return best


# ---- weighted DRF -----------------------------------------------------------------------------

def test_drf_paper_two_user_example() -> None:
    """Ghodsi et al.: 9 CPU, 18 GB; <1 CPU, 4 GB> and <3 CPU, 1 GB> -> 3 and 2 tasks."""
    inst = partition_instance([app("A", {"cpu": 1, "mem": 4}, hi=100), app("B", {"cpu": 3, "mem": 1}, hi=100)],
                              {"cpu": 9, "mem": 18}, servers=1)
    assert drf_containers(compile_partition(inst)).tolist() == [3, 2]
    plan = assert_checked(inst, schedopt.solve(inst, "drf-containers"))
    assert plan.allocation == {"A": {"container": 3}, "B": {"container": 2}}
    assert plan.metrics["fairness_loss"] == pytest.approx(0.0)


def test_drf_weights_and_caps() -> None:
    # one resource, 12 units: weight 2 gets twice the containers of weight 1
    inst = partition_instance([app("heavy", {"cpu": 1}, weight=2, hi=100), app("light", {"cpu": 1}, hi=100)],
                              {"cpu": 12}, servers=1)
    assert drf_containers(compile_partition(inst)).tolist() == [8, 4]
    # n_max caps an application; the rest goes to the others
    inst = partition_instance([app("capped", {"cpu": 1}, weight=2, hi=3), app("light", {"cpu": 1}, hi=100)],
                              {"cpu": 12}, servers=1)
    assert drf_containers(compile_partition(inst)).tolist() == [3, 9]


# ---- the exact models -----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(16))
def test_exact_models_equal_brute_force(seed: int) -> None:
    inst = random_partition_instance(seed)
    best = brute_force(inst)
    for name in EXACT:
        plan = assert_checked(inst, schedopt.solve(inst, name))
        if best is None:
            assert plan.status == schedopt.Status.KEPT_PREVIOUS, (name, plan.status)
        else:
            assert plan.status == schedopt.Status.OPTIMAL, (name, plan.message)
            assert plan.objective.bound >= best - 1e-9  # the stated bound, whatever proves it
            if plan.certificate.bound.kind == "dorm-lagrangian":  # proven by replay (tests/test_dorm_certificates.py)
                assert not schedopt.check(inst, plan, strict=True), name
            assert plan.objective.value == pytest.approx(best, rel=1e-9), name


def table2_like(previous: bool) -> Instance:
    apps = [app(f"lr{i}", {"cpu": 2, "gpu": 0, "mem_gb": 8}, hi=32) for i in range(4)]
    apps += [app(f"cnn{i}", {"cpu": 4, "gpu": 1, "mem_gb": 32}, weight=4, hi=5) for i in range(2)]
    apps += [app("mf", {"cpu": 2, "gpu": 0, "mem_gb": 6}, weight=2, hi=32)]
    prev = None
    if previous:
        prev = {"lr0": {"s-0": {"container": 3}}, "lr1": {"s-1": {"container": 2}}, "cnn0": {"s-2": {"container": 1}},
                "mf": {"s-3": {"container": 4}}}
    return partition_instance(apps, {"cpu": 12, "gpu": 1, "mem_gb": 128}, servers=5, previous=prev, name="t2")


@pytest.mark.parametrize("previous", [False, True])
def test_milp_equals_cpsat_and_presets(previous: bool) -> None:
    inst = table2_like(previous)
    values = {}
    for name in ["dorm-milp", "dorm-cpsat", "dorm-1", "dorm-2", "dorm-3"]:
        plan = assert_checked(inst, schedopt.solve(inst, name))
        assert plan.status == schedopt.Status.OPTIMAL
        values[name] = plan.objective.value
    assert values["dorm-milp"] == pytest.approx(values["dorm-cpsat"], rel=1e-9)
    assert values["dorm-3"] == pytest.approx(values["dorm-milp"], rel=1e-9)  # the instance's policy is (0.1, 0.1)
    assert values["dorm-1"] >= values["dorm-3"] - 1e-9 and values["dorm-2"] >= values["dorm-3"] - 1e-9
    for name in EXACT:  # the same optimum with θ as options in CP-SAT and Pyomo
        plan = assert_checked(inst, schedopt.solve(inst, name, fairness_threshold=0.2, adjustment_threshold=0.1))
        assert plan.objective.value == pytest.approx(values["dorm-1"], rel=1e-9)


def test_thresholds_bind() -> None:
    """Tightening θ1 or θ2 never raises utilization, and the budgets hold."""
    inst = table2_like(previous=True)
    last = math.inf
    for t1 in [1.0, 0.5, 0.2, 0.1, 0.05]:
        plan = assert_checked(inst, schedopt.solve(inst, "dorm-milp", fairness_threshold=t1, adjustment_threshold=1.0))
        assert plan.objective.value <= last + 1e-9
        assert plan.metrics["fairness_loss"] <= plan.metrics["fairness_budget"] + 1e-9
        last = plan.objective.value
    last = math.inf
    for t2 in [1.0, 0.5, 0.25, 0.0]:
        plan = assert_checked(inst, schedopt.solve(inst, "dorm-milp", fairness_threshold=1.0, adjustment_threshold=t2))
        assert plan.objective.value <= last + 1e-9
        assert plan.metrics["adjustment_overhead"] <= plan.metrics["adjustment_budget"]
        last = plan.objective.value
    frozen = assert_checked(inst, schedopt.solve(inst, "dorm-cpsat", fairness_threshold=1.0, adjustment_threshold=0.0))
    for a in ("lr0", "lr1", "cnn0", "mf"):  # θ2 = 0: no application present before may change
        assert frozen.placement[a] == inst.previous[a]


def test_infeasible_keeps_the_previous_placement() -> None:
    # two apps each need 3 containers of 4 CPUs; 2 servers x 8 CPUs hold 4
    apps = [app("a", {"cpu": 4}, lo=3, hi=3), app("b", {"cpu": 4}, lo=3, hi=3)]
    inst = partition_instance(apps, {"cpu": 8}, previous={"a": {"s-0": {"container": 2}}})
    for name in EXACT + ["dorm-2"]:
        plan = assert_checked(inst, schedopt.solve(inst, name))
        assert plan.status == schedopt.Status.KEPT_PREVIOUS and plan.termination == schedopt.Termination.INFEASIBLE
        assert plan.placement == {"a": {"s-0": {"container": 2}}} and plan.paused == ["b"]


def test_swarm_static_counts_and_waiting() -> None:
    apps = [app("first", {"cpu": 4}, hi=8, arrival=0), app("second", {"cpu": 4}, hi=8, arrival=5),
            app("third", {"cpu": 2}, hi=8, arrival=9)]
    inst = partition_instance(apps, {"cpu": 8}, servers=2)
    plan = assert_checked(inst, schedopt.solve(inst, "swarm-static", containers={"first": 3, "second": 2, "third": 2}))
    # first takes 3 x 4 CPUs; second's 2 x 4 do not fit in the 4 left, so it waits; third's 2 x 2 fit
    assert plan.allocation == {"first": {"container": 3}, "third": {"container": 2}}
    assert plan.paused == ["second"] and plan.metrics["waiting"] == 1


# ---- the contract, for every partition solver ------------------------------------------------------

@pytest.fixture(params=PARTITION_SOLVERS)
def solver(request: pytest.FixtureRequest) -> str:
    return request.param


def test_registry_lists_the_design_solvers() -> None:
    assert {"dorm-milp", "dorm-cpsat", "drf-containers", "swarm-static", "dorm-1", "dorm-2", "dorm-3"} <= set(PARTITION_SOLVERS)


def test_contract_feasible_integer_deterministic(solver: str) -> None:
    for seed in range(4):
        inst = random_partition_instance(200 + seed)
        a = assert_checked(inst, schedopt.solve(inst, solver, seed=1))
        b = schedopt.solve(inst, solver, seed=1)
        assert a.placement == b.placement and a.status == b.status
        for per_server in (a.placement or {}).values():
            assert all(isinstance(c["container"], int) and c["container"] > 0 for c in per_server.values())


def test_contract_empty_instance(solver: str) -> None:
    inst = partition_instance([], {"cpu": 8})
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.allocation == {} and plan.objective.value == 0.0 and plan.has_solution


def test_contract_oversubscribed(solver: str) -> None:
    apps = [app(f"a{i}", {"cpu": 4, "gpu": 1}, lo=1, hi=2) for i in range(5)]
    inst = partition_instance(apps, {"cpu": 16, "gpu": 1}, servers=3)  # 5 apps need 5 GPUs at minimum; 3 exist
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.has_solution
    if solver.startswith("dorm"):
        assert plan.status == schedopt.Status.KEPT_PREVIOUS  # P2 needs n_min for every application
    else:
        assert len(plan.allocation) == 3 and len(plan.paused) == 2


# ---- scale: counts by server class, then packing ---------------------------------------------------

@pytest.mark.parametrize("seed", range(8))
def test_class_mode_bound_is_valid_and_plans_check(seed: int) -> None:
    """The class relaxation's bound is never below the per-server optimum, and
    the packed plan is a P2 plan (or Dorm's rule applies)."""
    inst = random_partition_instance(300 + seed)
    exact = assert_checked(inst, schedopt.solve(inst, "dorm-milp", mode="servers"))
    by_class = assert_checked(inst, schedopt.solve(inst, "dorm-milp", mode="classes"))
    assert by_class.metrics["mode"] == "classes"
    if exact.status == schedopt.Status.OPTIMAL and by_class.has_solution and by_class.status != schedopt.Status.KEPT_PREVIOUS:
        assert by_class.objective.value <= exact.objective.value + 1e-9
        assert by_class.objective.bound >= exact.objective.value - 1e-9
        if by_class.status == schedopt.Status.OPTIMAL:
            assert by_class.objective.value == pytest.approx(exact.objective.value, rel=1e-9)


def test_class_mode_on_the_table2_workload() -> None:
    from schedopt.generate import generate_instance

    inst = generate_instance("dorm-table2", jobs=60, servers=40, seed=3)
    plan = assert_checked(inst, schedopt.solve(inst, "dorm-milp", mode="classes", time_limit=30))
    assert plan.has_solution and plan.objective.bound >= plan.objective.value


@pytest.mark.skipif(not (SHARED_DATA / "traces" / "alibaba_openb_node_list_gpu_node.csv").is_file(),
                    reason="needs ../shared/data/traces (Alibaba GPU trace 2023; not redistributed)")
def test_alibaba_instances_from_real_capacities_and_demands() -> None:
    from schedopt.generate import generate_instance

    inst = generate_instance("alibaba-dorm", jobs=30, servers=20, seed=1, max_tasks=4, data_dir=SHARED_DATA)
    assert len(inst.jobs) == 30 and len(inst.server_names) == 20
    for name in ("drf-containers", "swarm-static"):
        assert_checked(inst, schedopt.solve(inst, name))
    plan = assert_checked(inst, schedopt.solve(inst, "dorm-milp", time_limit=20))
    assert plan.has_solution


@pytest.mark.parametrize("seed", range(8))
def test_class_mode_with_patterns_is_exact_without_previous(seed: int) -> None:
    """Identical servers, no previous placement: counts by class plus the
    packing patterns give the per-server optimum, proven, in both backends."""
    rng = np.random.default_rng(seed)
    apps = [app(f"a{i}", {"cpu": float(rng.integers(1, 5)), "mem_gb": float(rng.integers(1, 9))},
                weight=float(rng.integers(1, 4)), hi=int(rng.integers(1, 6))) for i in range(int(rng.integers(2, 5)))]
    inst = partition_instance(apps, {"cpu": 6, "mem_gb": 10}, servers=4, theta=(1.0, 1.0), name=f"pat-{seed}")
    exact = assert_checked(inst, schedopt.solve(inst, "dorm-milp", mode="servers"))
    for name in EXACT:
        plan = assert_checked(inst, schedopt.solve(inst, name, mode="classes"))
        assert plan.metrics["patterns"] is not None
        assert plan.status == exact.status
        if exact.status == schedopt.Status.OPTIMAL:
            assert plan.objective.value == pytest.approx(exact.objective.value, rel=1e-9), name


def test_dff_cuts_hold_for_every_packing_of_one_server() -> None:
    """dff_cuts are valid: every multiset of containers that fits one server meets each cut with m = 1."""
    from schedopt.partition.model import dff_cuts

    apps = [app("a", {"cpu": 5, "gpu": 0, "mem_gb": 8}), app("b", {"cpu": 4, "gpu": 1, "mem_gb": 40}),
            app("c", {"cpu": 3, "gpu": 0, "mem_gb": 64}), app("d", {"cpu": 7, "gpu": 0, "mem_gb": 1})]
    inst = partition_instance(apps, {"cpu": 12, "gpu": 1, "mem_gb": 128}, servers=1, previous=None, name="dff")
    data = compile_partition(inst)
    cuts = dff_cuts(data, data.server_classes())
    assert cuts and all(c == 0 for c, _, _ in cuts)
    tight = 0
    for counts in itertools.product(range(4), repeat=4):
        y = np.array(counts)
        if np.all(y @ data.demand <= data.cap[0] + 1e-9):
            for _, a, b in cuts:
                assert int(a @ y) <= b
                tight += int(a @ y) == b
    assert tight > 0  # some packing meets a cut with equality: the cuts are not vacuous


def test_first_fit_decreasing_keeps_the_class_counts_when_they_pack() -> None:
    from schedopt.partition.model import first_fit_decreasing_classes, pack_classes

    inst = table2_like(previous=False)
    data = compile_partition(inst)
    classes = data.server_classes()
    y = np.array([[3], [3], [3], [3], [2], [2], [4]])  # fits the 5 servers of 12 cores, 1 GPU
    for pack in (first_fit_decreasing_classes, pack_classes):
        x = pack(data, classes, y)
        assert x.sum(axis=1).tolist() == y[:, 0].tolist()
        assert np.all(x.T @ data.demand <= data.cap + 1e-9)


def test_dot_product_packing_keeps_the_class_counts_when_they_pack() -> None:
    from schedopt.partition.model import dot_product_classes

    data = compile_partition(table2_like(previous=False))
    y = np.array([[3], [3], [3], [3], [2], [2], [4]])
    x = dot_product_classes(data, data.server_classes(), y)
    assert x.sum(axis=1).tolist() == y[:, 0].tolist() and np.all(x.T @ data.demand <= data.cap + 1e-9)


@pytest.mark.parametrize("theta", [(0.05, 1.0), (1.0, 1.0)])
def test_cpsat_with_rounded_shares_matches_the_milp(theta: tuple[float, float]) -> None:
    """Demands with more decimals than CP-SAT's exact scaling takes: shares are
    rounded (dominant shares up, the fairness budget down), every plan meets the
    true budget, and the value is the MILP's (to the rounding)."""
    apps = [app("a", {"cpu": 1.2345678, "mem_gb": 3.3333337}, hi=6), app("b", {"cpu": 2.7182818, "mem_gb": 1.4142136}, hi=6),
            app("c", {"cpu": 0.5772157, "mem_gb": 5.0000001}, weight=2, hi=8)]
    inst = partition_instance(apps, {"cpu": 8.0, "mem_gb": 16.0}, servers=3, theta=theta, name="rounded")
    cp = assert_checked(inst, schedopt.solve(inst, "dorm-cpsat"))
    milp = assert_checked(inst, schedopt.solve(inst, "dorm-milp"))
    assert cp.metrics["exact_scaling"] is False
    assert cp.objective.value == pytest.approx(milp.objective.value, rel=1e-6)
