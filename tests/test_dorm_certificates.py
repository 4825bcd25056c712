"""The ``dorm-lagrangian`` certificate (partition/certificates.py, partition/lagrange.py) and the
one-server knapsack it rests on (packing.best_packing): valid against brute force whatever the
prices, tight enough to prove the exact solvers' optima, forgeries refused."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.checking import check, check_report
from schedopt.instance import load_instance
from schedopt.packing import best_packing
from schedopt.packing import item_key
from schedopt.partition.certificates import dorm_lagrangian_bound
from schedopt.partition.lagrange import dorm_lagrangian
from schedopt.partition.problem import compile_partition, container_shapes
from tests.conftest import assert_checked
from tests.test_partition import EXACT, brute_force, random_partition_instance

ROOT = Path(__file__).resolve().parent.parent


# ---- the knapsack --------------------------------------------------------------------------------

def _knapsack_brute(shapes: np.ndarray, values: np.ndarray, cap: np.ndarray, most: np.ndarray) -> float:
    best = 0.0
    for q in itertools.product(*[range(int(m) + 1) for m in most]):
        q = np.array(q)
        if np.all(q @ shapes <= cap + 1e-9):
            best = max(best, float(q @ values))
    return best


@settings(max_examples=150)
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_best_packing_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    T, R = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    shapes = rng.integers(0, 5, size=(T, R)).astype(float)
    shapes[shapes.sum(axis=1) == 0, 0] = 1.0
    cap = rng.integers(3, 13, size=R).astype(float)
    values = rng.random(T) * (rng.random(T) > 0.2)
    most = rng.integers(0, 5, size=T)
    value, q, upper = best_packing(shapes, values, cap, most)
    assert np.all(q @ shapes <= cap + 1e-9) and np.all(q <= most)
    assert value == pytest.approx(float(q @ values))
    assert value == pytest.approx(_knapsack_brute(shapes, values, cap, most), abs=1e-12)
    assert upper == value  # finished: the bound is the value


def test_best_packing_stopped_early_still_bounds() -> None:
    """At a node limit the answer is a packing and an upper bound on every packing."""
    rng = np.random.default_rng(7)
    shapes = rng.uniform(0.5, 3.0, size=(9, 3))
    values = rng.uniform(0.1, 1.0, size=9)
    cap = np.array([12.0, 10.0, 11.0])
    most = np.full(9, 4)
    exact, _, up_exact = best_packing(shapes, values, cap, most)
    assert up_exact == exact
    for limit in (1, 5, 50):
        value, q, upper = best_packing(shapes, values, cap, most, node_limit=limit)
        assert np.all(q @ shapes <= cap * (1 + 1e-9) + 1e-9)
        assert value <= exact + 1e-12 <= upper + 2e-12


# ---- the bound against brute force ---------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(16))
def test_bound_never_below_the_optimum_whatever_the_prices(seed: int) -> None:
    """Any prices >= 0 prove a bound at or above P2's optimum (brute force); the solver's own
    prices too."""
    inst = random_partition_instance(seed)
    best = brute_force(inst)
    if best is None:
        pytest.skip("P2 infeasible on this seed")
    data = compile_partition(inst)
    theta = (inst.policy.fairness_threshold, inst.policy.adjustment_threshold)
    shapes, _ = container_shapes(data)
    keys = [item_key(inst.resources, s) for s in shapes]
    rng = np.random.default_rng(seed)
    own = dorm_lagrangian(data, theta)
    assert own.bound >= best - 1e-9
    trials = [(own.proof.prices, own.proof.fairness_price, own.proof.adjustment_price)]
    for _ in range(20):
        prices = {k: float(rng.choice([0.0, rng.uniform(0, 0.2), rng.uniform(0, 2)])) for k in keys}
        trials.append((prices, float(rng.choice([0.0, rng.uniform(0, 3)])), float(rng.choice([0.0, rng.uniform(0, 3)]))))
    for prices, lam1, lam2 in trials:
        assert dorm_lagrangian_bound(data, prices, lam1, lam2, theta) >= best - 1e-9, (prices, lam1, lam2)


def test_tiny_instances_mostly_proven_without_the_backend() -> None:
    """The Lagrangian closes the gap on the tiny instances (15 of 15 when written; it can have an
    integrality gap, so one is allowed to rest on the backend)."""
    proven = total = 0
    for seed in range(16):
        inst = random_partition_instance(seed)
        if brute_force(inst) is None:
            continue
        plan = schedopt.solve(inst, "dorm-milp")
        total += 1
        proven += not check_report(inst, plan, strict=True).unverified
    assert total >= 10 and proven >= total - 1, (proven, total)


def test_table2_optimum_verified_by_strict_check() -> None:
    """The bundled Table 2 instance: both exact solvers' optima pass --strict, by replay alone."""
    inst = load_instance(ROOT / "instances" / "dorm-table2.yaml")
    for name in EXACT:
        plan = assert_checked(inst, schedopt.solve(inst, name, seed=0))
        assert plan.status == schedopt.Status.OPTIMAL
        assert plan.certificate.bound.kind == "dorm-lagrangian"
        report = check_report(inst, plan, strict=True)
        assert report.ok and not report.unverified, name


def test_class_mode_with_few_shapes_is_verified_too() -> None:
    """Class mode (identical servers, applications × servers > 2,000) with Table II's 5 shapes: the
    optimum is verified by replay as in per-server mode."""
    from schedopt.generate import generate_instance

    inst = generate_instance("dorm-table2", jobs=200, servers=100, seed=3)
    plan = assert_checked(inst, schedopt.solve(inst, "dorm-milp", seed=0))
    assert plan.metrics["mode"] == "classes" and plan.status == schedopt.Status.OPTIMAL
    assert plan.certificate.bound.kind == "dorm-lagrangian"
    report = check_report(inst, plan, strict=True)
    assert report.ok and not report.unverified


# ---- forgeries ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def table2_plan():
    inst = load_instance(ROOT / "instances" / "dorm-table2.yaml")
    return inst, schedopt.solve(inst, "dorm-milp", seed=0)


def _forged(plan, **proof):
    out = plan.model_copy(deep=True)
    out.certificate.bound = out.certificate.bound.model_copy(update=proof)
    return out


@pytest.mark.parametrize("proof", [
    {"prices": {"cpu=1": 0.1}},  # a shape no application has
    {"fairness_price": -1.0}, {"adjustment_price": float("nan")}, {"fairness_price": float("inf")},
])
def test_bad_prices_are_refused(table2_plan, proof) -> None:
    inst, plan = table2_plan
    paths = [v.path for v in check(inst, _forged(plan, **proof), strict=True)]
    assert "certificate.bound" in paths, paths


def test_prices_that_prove_less_fail_optimal(table2_plan) -> None:
    inst, plan = table2_plan
    for factor in (0.0, 0.5, 3.0):
        forged = _forged(plan, prices={k: v * factor for k, v in plan.certificate.bound.prices.items()})
        assert check(inst, forged, strict=True), factor


def test_a_worse_plan_claiming_optimal_fails(table2_plan) -> None:
    """Weighted DRF's plan (below the optimum) with the optimum's certificate: the replayed bound
    does not meet it."""
    inst, plan = table2_plan
    worse = schedopt.solve(inst, "drf-containers")
    worse.status = schedopt.Status.OPTIMAL
    worse.objective.bound = worse.objective.value
    worse.objective.gap = 0.0
    worse.certificate = plan.certificate.model_copy(deep=True)
    worse.options = dict(plan.options)
    assert "objective.bound" in [v.path for v in check(inst, worse, strict=True)]


def test_budget_prices_need_the_plans_thresholds(table2_plan) -> None:
    inst, plan = table2_plan
    bare = _forged(plan, fairness_price=0.5)
    bare.options = {k: v for k, v in bare.options.items() if k not in ("fairness_threshold", "adjustment_threshold")}
    messages = [v.message for v in check(inst, bare, strict=True)]
    assert any("thresholds" in m for m in messages), messages


@pytest.mark.parametrize("seed", range(8))
def test_a_shared_node_pool_never_states_less_than_the_replay(seed: int) -> None:
    """server_values with a pool of nodes shared by the classes (a solver short of time) gives each
    class at least the value the replay's own search gives (so the stated bound passes it), and the
    replay's values once the pool is large enough."""
    from schedopt.partition.certificates import server_values

    inst = random_partition_instance(seed)
    data = compile_partition(inst)
    shapes, shape_of = container_shapes(data)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        pi = rng.uniform(0, 1, len(shapes)) * (rng.uniform(size=len(shapes)) < 0.8)
        replay = server_values(data, shapes, shape_of, pi)
        for pool in (1, 50, 2_000, 10_000_000):
            pooled = server_values(data, shapes, shape_of, pi, pool=pool)
            assert np.all(pooled >= replay - 1e-12), (pool, pooled, replay)
        assert np.allclose(server_values(data, shapes, shape_of, pi, pool=10_000_000), replay, rtol=0, atol=1e-12)
