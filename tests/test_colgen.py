"""Column generation for Dorm's class model (schedopt.partition.colgen): the
pricing knapsack against brute force, the Farley bound against the per-server
optimum, and every plan through the checker."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import schedopt
from schedopt.instance import Instance
from schedopt.partition import dorm
from schedopt.partition.model import DormModel, p2_feasible
from schedopt.partition.colgen import exact_pattern, fractional_bound, generate_columns, greedy_pattern, round_columns
from schedopt.partition.problem import budgets, compile_partition, container_shapes, drf_containers, first_fit
from tests.conftest import assert_checked


def many_shapes_instance(seed: int) -> Instance:
    """4-6 applications of distinct fractional shapes on two server classes (2 + 2
    servers), no previous placement: the shapes are what column generation is for."""
    rng = np.random.default_rng(seed)
    jobs = []
    for i in range(int(rng.integers(4, 7))):
        demand = {"cpu": round(float(rng.uniform(0.5, 4.0)), 3), "gpu": round(float(rng.choice([0.0, 0.25, 0.5, 1.0])), 3),
                  "mem_gb": round(float(rng.uniform(1.0, 8.0)), 3)}
        jobs.append({"id": f"a{i}", "weight": float(rng.integers(1, 4)),
                     "roles": {"container": {"demand": demand, "min": 1, "max": int(rng.integers(2, 6))}}})
    doc: dict[str, Any] = {
        "schema": "schedopt/instance@1", "name": f"shapes-{seed}", "resources": ["cpu", "gpu", "mem_gb"],
        "servers": [{"name": "small", "count": 2, "capacity": {"cpu": 6.0, "gpu": 1.0, "mem_gb": 12.0}},
                    {"name": "big", "count": 2, "capacity": {"cpu": 10.0, "gpu": 2.0, "mem_gb": 16.0}}],
        "jobs": jobs, "policy": {"fairness_threshold": float(rng.choice([0.2, 1.0])), "adjustment_threshold": 0.1},
    }
    return Instance.from_dict(doc)


@pytest.fixture
def force_colgen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patterns are enumerated up to MAX_SHAPES shapes: below that, column generation is forced."""
    monkeypatch.setattr(dorm, "MAX_SHAPES", 0)


@pytest.mark.parametrize("seed", range(12))
def test_pricing_knapsack_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    T, R = int(rng.integers(2, 5)), 2
    shapes = np.round(rng.uniform(0.3, 3.0, size=(T, R)), 3)
    limit = np.array([6.0, 7.5])
    most = rng.integers(0, 4, size=T)
    value = np.round(rng.uniform(-0.2, 1.0, size=T), 4)
    best = 0.0
    for a in itertools.product(*[range(int(m) + 1) for m in most]):
        a = np.array(a)
        if np.all(shapes.T @ a <= limit + 1e-9):
            best = max(best, float(value @ a))
    found, upper = exact_pattern(value, shapes, limit, most, time_limit=5.0, seed=0)
    assert np.all(shapes.T @ found <= limit + 1e-9) and np.all(found <= most) and np.all(found >= 0)
    assert float(value @ found) == pytest.approx(best, abs=1e-9)
    assert upper >= best - 1e-9 and upper <= best + 1e-4  # the bound is tight up to the value rounding
    assert fractional_bound(value, shapes, limit, most) >= best - 1e-9
    greedy = greedy_pattern(value, shapes, limit, most)
    assert np.all(shapes.T @ greedy <= limit + 1e-9) and float(value @ greedy) <= best + 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_column_generation_bound_is_valid_and_plans_check(seed: int, force_colgen: None) -> None:
    """With patterns priced in, the plan is a P2 plan no better than the
    per-server optimum, and the bound (Farley's, on the pattern LP) is no lower."""
    inst = many_shapes_instance(seed)
    exact = assert_checked(inst, schedopt.solve(inst, "dorm-milp", mode="servers"))
    for name in ("dorm-milp", "dorm-cpsat"):
        plan = assert_checked(inst, schedopt.solve(inst, name, mode="classes"))
        assert plan.metrics["colgen_iterations"] >= 1, name
        if exact.status == schedopt.Status.OPTIMAL:
            assert plan.has_solution, name
            assert plan.objective.value <= exact.objective.value + 1e-9, name
            assert plan.objective.bound >= exact.objective.value - 1e-7, name
            assert plan.objective.gap is not None and plan.objective.gap >= 0


def test_converged_bound_is_the_lp_value_and_lp_rounding_meets_p2() -> None:
    inst = many_shapes_instance(3)
    data = compile_partition(inst)
    model = DormModel(data, drf_containers(data), *budgets(data, 1.0, 0.1))
    classes = data.server_classes()
    shapes, shape_of = container_shapes(data)
    cols = generate_columns(model, classes, shapes, shape_of, time_limit=None, seed=0, start=[first_fit(data, model.fair)])
    assert cols.converged and cols.feasible
    assert cols.bound == pytest.approx(cols.lp_value, rel=1e-6)
    exact = schedopt.solve(inst, "dorm-milp", mode="servers")
    assert cols.bound >= exact.objective.value - 1e-7
    x = round_columns(model, classes, cols, shape_of)
    assert x is not None and p2_feasible(model, x)
    assert np.all(x.T @ data.demand <= data.cap + 1e-9)
    assert float(data.util @ x.sum(axis=1)) <= exact.objective.value + 1e-9


def test_column_generation_is_deterministic(force_colgen: None) -> None:
    inst = many_shapes_instance(5)
    a = schedopt.solve(inst, "dorm-milp", mode="classes", seed=1)
    b = schedopt.solve(inst, "dorm-milp", mode="classes", seed=1)
    assert a.placement == b.placement and a.objective.bound == b.objective.bound


def test_column_generation_stops_at_its_time_share(force_colgen: None) -> None:
    """Under a time limit the plan comes back in time, checked, with a bound."""
    inst = many_shapes_instance(6)
    plan = assert_checked(inst, schedopt.solve(inst, "dorm-milp", mode="classes", time_limit=2.0))
    assert plan.solve_seconds <= 2.0 + 1.0  # the limit, with slack for a loaded machine
    assert plan.objective.bound is not None
