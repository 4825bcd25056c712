"""Plans (schedopt/plan.py): the file format round-trips (floats to 12 significant digits)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import schedopt
from schedopt.io import tidy_floats
from schedopt.plan import load_plan, save_plan
from tests.conftest import INSTANCES, assert_checked


@pytest.mark.parametrize("solver", ["optimus-milp", "optimus-greedy+optimus-placement"])
def test_plan_round_trips_through_yaml_and_json(tmp_path: Path, solver: str) -> None:
    inst = schedopt.load_instance(INSTANCES / "small-hand.yaml")
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    for suffix in (".yaml", ".json"):
        save_plan(plan, tmp_path / f"p{suffix}")
        again = load_plan(tmp_path / f"p{suffix}")
        assert again.to_dict() == tidy_floats(plan.to_dict())
        assert_checked(inst, again)
        text = (tmp_path / f"p{suffix}").read_text()
        digits = [len(m.replace(".", "").lstrip("0")) for m in re.findall(r"\d+\.\d+", text)]
        assert max(digits) <= 12, "float noise in the plan file"


def test_plan_module_knows_no_problem() -> None:
    """plan.py holds the Plan types only: each problem's checker lives in its package."""
    source = (Path(schedopt.__file__).parent / "plan.py").read_text()
    for word in ("allocation.", "partition", "placement.", "quality", "import numpy"):
        assert word not in source.replace("placement: dict", "").replace("ps_assignment", ""), word
