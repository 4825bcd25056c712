"""The partition problem's checker (schedopt/partition/checker.py): Dorm P2's constraints and metrics."""

from __future__ import annotations

import schedopt
from tests.conftest import assert_checked
from tests.test_partition import table2_like

def test_checker_catches_budget_and_capacity_violations() -> None:
    inst = table2_like(previous=True)
    plan = schedopt.solve(inst, "dorm-3")
    tampered = plan.model_copy(update={"options": {**plan.options, "adjustment_threshold": 0.0}})
    assert any("Dorm eq. 16" in v.message for v in schedopt.check(inst, tampered))
    big = dict(plan.placement)
    big["lr2"] = {"s-0": {"container": 30}}
    alloc = dict(plan.allocation)
    alloc["lr2"] = {"container": 30}
    bad = plan.model_copy(update={"placement": big, "allocation": alloc})
    paths = {v.path for v in schedopt.check(inst, bad)}
    assert "placement.capacity.s-0.cpu" in paths and "objective.value" in paths


def test_unknown_application_is_named_not_raised() -> None:
    inst = table2_like(previous=True)
    plan = assert_checked(inst, schedopt.solve(inst, "dorm-3"))
    ghost = plan.model_copy(update={"allocation": {**plan.allocation, "ghost": {"container": 1}},
                                    "placement": {**plan.placement, "ghost": {"s-0": {"container": 1}}}})
    paths = {v.path for v in schedopt.check(inst, ghost)}
    assert "placement.ghost" in paths
