"""The contract every registered solver meets, through the public kit
(schedopt.testing.parametrize_with_checks, like scikit-learn's): feasible
checked plans, integer counts, determinism, instance not mutated, no printing,
time limit honoured, the empty, over-subscribed and unmeetable instances.
Allocation-specific cases follow."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.testing import parametrize_with_checks
from tests.conftest import ALLOCATION_SOLVERS, assert_checked, make_instance, random_tiny_instance, two_role_job

SYNC = {"form": "optimus-sync", "theta": [1.02, 2.78, 4.92, 0.0, 0.02], "batch": 32}


ALL_SOLVERS = [s.name for s in schedopt.solvers()]


@parametrize_with_checks(ALL_SOLVERS)
def test_contract(solver, check) -> None:  # type: ignore[no-untyped-def]
    check(solver)


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


def test_table_without_allowed_points_is_paused(solver: str) -> None:
    table = {"form": "table", "points": [[5, 5, 1.0]]}  # outside the job's bounds (max 3)
    ok = two_role_job("ok", SYNC, 100)
    inst = make_instance([two_role_job("t", table, 100), ok], {"cpu": 100, "gpu": 10})
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.paused == ["t"] and "ok" in plan.allocation
