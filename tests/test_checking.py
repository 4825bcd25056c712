"""The generic checker and the problem registry (schedopt/checking.py, schedopt/problems.py)."""

from __future__ import annotations

import schedopt
from schedopt.problems import families, get_problem, problems
from tests.conftest import INSTANCES


def test_every_problem_declares_its_contract() -> None:
    names = {p.name for p in problems()}
    assert names == {"allocation", "quality", "partition", "placement", "ps-assignment"}
    for p in problems():
        assert p.objectives and schedopt.solvers(p.name), p.name
        assert all(s.problem == p.name for s in schedopt.solvers(p.name))
    assert {s.name for s in schedopt.solvers()} >= {s.name for p in problems() for s in schedopt.solvers(p.name)}
    owner = {name: problem for name, (problem, _) in families().items()}
    assert owner["optimus"] == "allocation" and owner["slaq"] == "quality" and owner["dorm-table2"] == "partition"
    assert owner["placement"] == "placement" and owner["optimus-paa"] == "ps-assignment"
    assert owner["optimus-workload"] == "allocation"


def test_inference_by_rank() -> None:
    for file, problem in [("optimus-testbed.yaml", "allocation"), ("slaq-40.yaml", "quality"),
                          ("dorm-table2.yaml", "partition")]:
        assert schedopt.infer_problem(schedopt.load_instance(INSTANCES / file)) == problem


def test_unknown_problem_in_a_plan_is_a_violation() -> None:
    inst = schedopt.load_instance(INSTANCES / "small-hand.yaml")
    plan = schedopt.solve(inst, "optimus-greedy").model_copy(update={"problem": "nonsense"})
    assert [v.path for v in schedopt.check(inst, plan)] == ["problem"]


def test_objective_value_matches_every_solver_plan() -> None:
    inst = schedopt.load_instance(INSTANCES / "small-hand.yaml")
    for solver in ("optimus-greedy", "optimus-milp"):
        plan = schedopt.solve(inst, solver)
        assert abs(get_problem("allocation").objective_value(inst, plan) - plan.objective.value) < 1e-6
