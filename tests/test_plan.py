"""Plans (schedopt/plan.py): the file format round-trips exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.plan import load_plan, save_plan
from tests.conftest import INSTANCES, assert_checked


@pytest.mark.parametrize("solver", ["optimus-milp", "optimus-greedy+optimus-placement"])
def test_plan_round_trips_through_yaml_and_json(tmp_path: Path, solver: str) -> None:
    inst = schedopt.load_instance(INSTANCES / "small-hand.yaml")
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    for suffix in (".yaml", ".json"):
        save_plan(plan, tmp_path / f"p{suffix}")
        again = load_plan(tmp_path / f"p{suffix}")
        assert again == plan
        assert_checked(inst, again)


def test_plan_module_knows_no_problem() -> None:
    """plan.py holds the Plan types only: each problem's checker lives in its package."""
    source = (Path(schedopt.__file__).parent / "plan.py").read_text()
    for word in ("allocation.", "partition", "placement.", "quality", "import numpy"):
        assert word not in source.replace("placement: dict", "").replace("ps_assignment", ""), word
