"""The contract every registered allocation solver meets (like scikit-learn's
parametrize_with_checks): feasibility, integer counts, determinism, the empty
instance, an over-subscribed instance and one whose bounds cannot be met."""

from __future__ import annotations

import pytest

import schedopt
from tests.conftest import ALLOCATION_SOLVERS, assert_checked, make_instance, random_tiny_instance, two_role_job

SYNC = {"form": "optimus-sync", "theta": [1.02, 2.78, 4.92, 0.0, 0.02], "batch": 32}


@pytest.fixture(params=ALLOCATION_SOLVERS)
def solver(request: pytest.FixtureRequest) -> str:
    return request.param


def test_registry_lists_the_design_solvers() -> None:
    assert {"optimus-greedy", "optimus-milp", "optimus-cpsat"} <= set(ALLOCATION_SOLVERS)
    info = {s.name: s for s in schedopt.solvers()}
    assert info["optimus-milp"].exact and info["optimus-cpsat"].exact and not info["optimus-greedy"].exact


@pytest.mark.parametrize("seed", range(5))
def test_feasible_integer_plans(solver: str, seed: int) -> None:
    inst = random_tiny_instance(100 + seed)
    plan = assert_checked(inst, schedopt.solve(inst, solver, seed=seed))
    for job_id, counts in plan.allocation.items():
        assert all(isinstance(n, int) and n >= 1 for n in counts.values()), (job_id, counts)
    assert sorted(plan.paused + list(plan.allocation)) == sorted(j.id for j in inst.jobs)


def test_deterministic(solver: str, testbed: schedopt.Instance) -> None:
    a = schedopt.solve(testbed, solver, seed=7)
    b = schedopt.solve(testbed, solver, seed=7)
    assert a.allocation == b.allocation and a.status == b.status
    assert a.objective.value == b.objective.value


def test_empty_instance(solver: str) -> None:
    inst = make_instance([], {"cpu": 8, "gpu": 2})
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.allocation == {} and plan.paused == []
    assert plan.objective.value == 0.0 and plan.has_solution


def test_oversubscribed(solver: str) -> None:
    jobs = [two_role_job(f"j{i}", SYNC, 100, worker={"cpu": 1, "gpu": 1}, ps={"cpu": 1, "gpu": 0}) for i in range(5)]
    inst = make_instance(jobs, {"cpu": 100, "gpu": 3})  # 5 jobs need 5 GPUs at minimum; 3 exist
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.objective.admitted == 3 and len(plan.paused) == 2
    assert plan.metrics["paused"] == 2


def test_bounds_that_cannot_be_met(solver: str) -> None:
    # the only job needs 4 GPUs at minimum; the cluster has 2: a status, not an exception
    job = two_role_job("huge", SYNC, 100)
    job["roles"]["worker"]["min"] = 4
    job["roles"]["worker"]["max"] = 4
    inst = make_instance([job], {"cpu": 100, "gpu": 2})
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.status == schedopt.Status.INFEASIBLE
    assert plan.allocation == {} and plan.paused == ["huge"]


def test_table_without_allowed_points_is_paused(solver: str) -> None:
    table = {"form": "table", "points": [[5, 5, 1.0]]}  # outside the job's bounds (max 3)
    ok = two_role_job("ok", SYNC, 100)
    inst = make_instance([two_role_job("t", table, 100), ok], {"cpu": 100, "gpu": 10})
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.paused == ["t"] and "ok" in plan.allocation
