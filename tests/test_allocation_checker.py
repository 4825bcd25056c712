"""The allocation problem's checker (schedopt/allocation/checker.py) recomputes
everything from the instance and catches each kind of violation."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.plan import Status
from tests.conftest import INSTANCES, assert_checked

@pytest.fixture
def hand() -> tuple[schedopt.Instance, schedopt.Plan]:
    inst = schedopt.load_instance(INSTANCES / "small-hand.yaml")
    return inst, assert_checked(inst, schedopt.solve(inst, "optimus-milp"))


def paths(inst: schedopt.Instance, plan: schedopt.Plan) -> set[str]:
    return {v.path for v in schedopt.check(inst, plan)}


def test_capacity_and_objective(hand) -> None:
    inst, plan = hand
    bad = plan.model_copy(deep=True)
    bad.allocation["a"]["worker"] = 3
    assert {"capacity.gpu", "objective.value"} <= paths(inst, bad)


def test_bounds_roles_and_unknown_jobs(hand) -> None:
    inst, plan = hand
    bad = plan.model_copy(deep=True)
    bad.allocation["a"]["worker"] = 0
    assert "allocation.a.worker" in paths(inst, bad)
    bad = plan.model_copy(deep=True)
    bad.allocation["a"] = {"ps": 1}
    assert "allocation.a" in paths(inst, bad)
    bad = plan.model_copy(deep=True)
    bad.allocation["ghost"] = {"worker": 1}
    assert "allocation.ghost" in paths(inst, bad)


def test_paused_bound_gap_status(hand) -> None:
    inst, plan = hand
    bad = plan.model_copy(deep=True)
    bad.paused = ["a"]
    assert "paused" in paths(inst, bad)
    bad = plan.model_copy(deep=True)
    bad.objective.bound = plan.objective.value * 2  # a lower bound above the value
    assert "objective.bound" in paths(inst, bad)
    bad = plan.model_copy(deep=True)
    bad.objective.gap = 0.5
    assert "objective.gap" in paths(inst, bad)
    bad = plan.model_copy(deep=True)
    bad.objective.bound = plan.objective.value / 2
    bad.objective.gap = 0.5
    assert "status" in paths(inst, bad)  # "optimal" with a 50% gap
    bad = plan.model_copy(deep=True)
    bad.metrics["utilization"]["gpu"] = 0.1
    assert "metrics.utilization.gpu" in paths(inst, bad)
    bad = plan.model_copy(deep=True)
    bad.status = Status.INFEASIBLE
    assert "allocation" in paths(inst, bad)


def test_wrong_instance_and_placement(hand) -> None:
    inst, plan = hand
    bad = plan.model_copy(deep=True)
    bad.instance = "other"
    assert "instance" in paths(inst, bad)
    placed = plan.model_copy(deep=True)
    placed.placement = {"a": {"node-0": {"worker": 2}}, "b": {"node-1": {"worker": 1}}}
    assert "placement.capacity.node-0.gpu" in paths(inst, placed)
    placed.placement = {"a": {"node-0": {"worker": 1}, "node-2": {"worker": 1}}, "b": {"node-1": {"worker": 1}}}
    assert_checked(inst, placed)


def test_unknown_job_in_a_joint_placement_is_named_not_raised(hand) -> None:
    inst, plan = hand
    placed = plan.model_copy(deep=True)
    placed.allocation["ghost"] = {"worker": 1}
    placed.placement = {"ghost": {"node-0": {"worker": 1}}}
    assert {"allocation.ghost"} <= paths(inst, placed)
