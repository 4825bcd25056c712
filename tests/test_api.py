"""schedopt.solve / compare at the Python boundary: defaults, wrong problems, did-you-mean."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.testing import random_packing_instance
from schedopt import InputError

INSTANCES = Path(__file__).resolve().parent.parent / "instances"


def test_solve_without_a_solver_uses_the_problems_heuristic() -> None:
    dorm = schedopt.load_instance(INSTANCES / "dorm-table2.yaml")
    plan = schedopt.solve(dorm)
    assert plan.problem == "partition" and plan.solver == "drf-containers"
    assert schedopt.check(dorm, plan) == []
    optimus = schedopt.load_instance(INSTANCES / "optimus-testbed.yaml")
    assert schedopt.solve(optimus).solver == "optimus-greedy"


def test_a_solver_of_another_problem_says_so_in_one_message() -> None:
    optimus = schedopt.load_instance(INSTANCES / "optimus-testbed.yaml")
    with pytest.raises(InputError) as exc:
        schedopt.solve(optimus, "dorm-milp")
    assert len(exc.value.problems) == 1
    text = str(exc.value)
    assert 'solver "dorm-milp" solves the partition problem' in text and "optimus-greedy" in text
    with pytest.raises(InputError, match="you asked for the placement problem"):
        schedopt.compare(optimus, problem="placement")


def test_unknown_solver_and_option_suggest_the_closest() -> None:
    inst = schedopt.load_instance(INSTANCES / "optimus-testbed.yaml")
    with pytest.raises(InputError, match=r'unknown solver "optimus-mlip" \(did you mean "optimus-milp"\?\)') as exc:
        schedopt.solve(inst, "optimus-mlip")
    assert "--solver" not in str(exc.value)  # worded for Python, not as a CLI flag
    with pytest.raises(InputError, match=r'option rel_gp: unknown option \(did you mean "rel_gap"\?\)'):
        schedopt.solve(inst, "optimus-milp", rel_gp=0.1)


def test_compare_takes_per_solver_options_and_reports_progress() -> None:
    inst = schedopt.load_instance(INSTANCES / "optimus-testbed.yaml")
    seen: list[str] = []
    result = schedopt.compare(inst, ["optimus-greedy", "optimus-milp"], options={"optimus-greedy": {"stop_rule": "paper"}},
                              progress=lambda k, name: seen.append(name))
    assert seen == ["optimus-greedy", "optimus-milp"]
    assert result.rows[0].plan.options.get("stop_rule") == "paper"
    with pytest.raises(InputError, match="not compared: drf"):
        schedopt.compare(inst, ["optimus-greedy"], options={"drf": {}})


def test_log_true_streams_backend_progress_to_python_logging(caplog: pytest.LogCaptureFixture) -> None:
    # a hard packing: the backends run (on the testbed the LP's prices prove the greedy's plan first)
    inst = random_packing_instance(0, 30, 4)
    with caplog.at_level("INFO", logger="schedopt"):
        schedopt.solve(inst, "optimus-milp", log=True)
        schedopt.solve(inst, "optimus-cpsat", log=True)
    names = {r.name for r in caplog.records}
    assert {"schedopt.highs", "schedopt.cpsat"} <= names
    caplog.clear()
    with caplog.at_level("INFO", logger="schedopt"):
        schedopt.solve(inst, "optimus-milp")
    assert not caplog.records  # silent unless asked


def test_a_heuristic_says_it_does_not_use_the_time_limit() -> None:
    inst = schedopt.load_instance(INSTANCES / "optimus-testbed.yaml")
    plan = schedopt.solve(inst, "optimus-greedy", time_limit=5)
    assert plan.metrics["time_limit_ignored"] is True and "time_limit 5 s not used" in (plan.message or "")
    assert schedopt.check(inst, plan) == []
    assert "time_limit_ignored" not in schedopt.solve(inst, "optimus-milp", time_limit=5).metrics


def test_joint_solvers_take_their_parts_options() -> None:
    inst = schedopt.load_instance(INSTANCES / "optimus-testbed.yaml")
    plan = schedopt.solve(inst, "optimus-greedy+optimus-placement", bound=False)
    assert plan.objective.bound is None and plan.options["allocation"]["bound"] is False
    plan = schedopt.solve(inst, "optimus-milp+placement-cpsat", **{"placement-cpsat.objective": "max"})
    assert plan.options["placement"]["objective"] == "max" and schedopt.check(inst, plan) == []
    with pytest.raises(InputError, match=r'option bund: unknown option \(did you mean "bound"\?\)'):
        schedopt.solve(inst, "optimus-greedy+optimus-placement", bund=False)


def test_warm_up_and_solves_print_nothing_without_a_host_logging_config() -> None:
    """Issue 50: ``schedopt.warm_up()`` wrote "dl2: untrained policy ..." on standard error (Python's
    last-resort handler); the library's logger has a NullHandler, so nothing is printed unless the
    host configures logging, and ``log=True`` still streams to standard error."""
    import subprocess
    import sys

    quiet = subprocess.run([sys.executable, "-c", "import schedopt; schedopt.warm_up(['dl2', 'optimus-greedy'])"],
                           capture_output=True, text=True, check=True)
    assert quiet.stdout == "" and quiet.stderr == ""
    loud = subprocess.run([sys.executable, "-c", "import schedopt, logging; logging.basicConfig();"
                           "schedopt.warm_up(['dl2'])"], capture_output=True, text=True, check=True)
    assert "untrained policy" in loud.stderr  # a host that configures logging sees the warning
