"""The ps-assignment checker (schedopt/placement/checker.py): every block covered once, Table 3 metrics."""

from __future__ import annotations

import pytest

import schedopt
from tests.conftest import assert_checked
from tests.test_paa import blocks_instance

@pytest.mark.parametrize("solver", ["paa", "mxnet-default"])
def test_plans_check_and_metrics(solver: str) -> None:
    inst = blocks_instance({"a": ([100, 5, 5, 40, 1], 2), "b": ([7, 7, 7], 3)})
    plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
    assert plan.problem == "ps-assignment" and set(plan.ps_assignment) == {"a", "b"}
    assert plan.metrics["per_job"]["b"]["max_size_difference"] >= 0
    entries = list(plan.ps_assignment["a"])
    entries[0] = {**entries[0], "size": entries[0]["size"] - 1}
    bad = plan.model_copy(update={"ps_assignment": {**plan.ps_assignment, "a": entries}})
    assert any("slices sum to" in v.message for v in schedopt.check(inst, bad))
    entries[0] = {**plan.ps_assignment["a"][0], "ps": 9}
    bad = plan.model_copy(update={"ps_assignment": {**plan.ps_assignment, "a": entries}})
    assert any(v.path.endswith(".ps") for v in schedopt.check(inst, bad))
