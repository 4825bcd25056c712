"""Plans are plain data (issue 41 §3): every registered solver's plan on the
testing kit's instances is written as YAML and JSON and read back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from schedopt.plan import Plan, Status, Termination, load_plan, plain, save_plan
from schedopt.registry import solvers
from schedopt.testing import kit

ALL = [info.name for info in solvers()]


def test_array_scalars_become_python_values() -> None:
    value = plain({"converged": np.bool_(True), "n": np.int64(3), "x": np.float64(0.5), "v": np.arange(3),
                   1: (np.float32(2.0),)})
    assert value == {"converged": True, "n": 3, "x": 0.5, "v": [0, 1, 2], "1": [2.0]}
    assert type(value["converged"]) is bool and type(value["n"]) is int


def test_a_plan_with_array_metrics_is_written(tmp_path: Path) -> None:
    plan = Plan(instance="t", solver="s", status=Status.FEASIBLE, termination=Termination.TIME_LIMIT,
                objective={"name": "x"}, solve_seconds=1.0, metrics={"colgen_converged": np.bool_(True)})
    save_plan(plan, tmp_path / "p.json")
    assert load_plan(tmp_path / "p.json").metrics == {"colgen_converged": True}


@pytest.mark.parametrize("solver", ALL)
def test_every_solver_plan_round_trips(solver: str, tmp_path: Path) -> None:
    from schedopt.registry import get_solver, solver_info

    k = kit(solver_info(solver).problem)
    instance = k.tiny(0)
    plan = get_solver(solver).solve(instance, seed=0)
    json.dumps(plan.to_dict(), allow_nan=False)  # strict JSON
    for suffix in (".yaml", ".json"):
        save_plan(plan, tmp_path / f"plan{suffix}")
        back = load_plan(tmp_path / f"plan{suffix}")
        assert back.allocation == plan.allocation and back.placement == plan.placement
        assert back.status == plan.status and back.metrics.keys() == plan.metrics.keys()
