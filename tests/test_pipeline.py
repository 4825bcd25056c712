"""Joint solves: allocation then placement (``optimus-greedy+optimus-placement``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import schedopt
from schedopt.cli import app
from tests.conftest import INSTANCES, assert_checked

runner = CliRunner()
TESTBED = INSTANCES / "optimus-testbed.yaml"


@pytest.mark.parametrize("name", ["optimus-greedy+optimus-placement", "optimus-milp+placement-cpsat",
                                  "optimus-greedy+dltap", "slaq-greedy+kube-default"])
def test_joint_plan_holds_allocation_and_placement(name: str) -> None:
    inst = schedopt.load_instance(INSTANCES / ("slaq-40.yaml" if name.startswith("slaq") else "optimus-testbed.yaml"))
    plan = assert_checked(inst, schedopt.solve(inst, name, time_limit=30, seed=0))
    assert plan.solver == name and plan.placement is not None
    assert set(plan.placement) == set(plan.allocation)
    assert "placement" in plan.metrics and plan.metrics["placement"]["placed"] == len(plan.allocation)


def test_optimal_allocation_placed_whole_keeps_its_bound() -> None:
    inst = schedopt.load_instance(TESTBED)
    alone = schedopt.solve(inst, "optimus-milp")
    joint = assert_checked(inst, schedopt.solve(inst, "optimus-milp+placement-cpsat", time_limit=30))
    assert joint.allocation == alone.allocation and joint.status == schedopt.Status.OPTIMAL
    assert joint.objective.value == pytest.approx(alone.objective.value) and joint.objective.bound is not None


def test_jobs_the_placement_cannot_fit_are_paused_and_the_bound_dropped() -> None:
    inst = schedopt.load_instance(TESTBED)
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-greedy+dltap", seed=0))
    alloc = schedopt.solve(inst, "optimus-greedy")
    if len(plan.allocation) < len(alloc.allocation):  # kube scores put PS on GPU servers: some workers no longer fit
        assert plan.objective.bound is None and plan.status == schedopt.Status.HEURISTIC
        assert "not placed" in (plan.message or "")


def test_cli_joint_solve_writes_both(tmp_path: Path) -> None:
    out = tmp_path / "p.yaml"
    r = runner.invoke(app, ["solve", str(TESTBED), "--solver", "optimus-greedy+optimus-placement", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(out.read_text())
    assert doc["allocation"] and doc["placement"]
    assert runner.invoke(app, ["check", str(TESTBED), str(out)]).exit_code == 0


@pytest.mark.parametrize("name", ["optimus-placement+optimus-greedy", "optimus-greedy+nope", "a+b+c"])
def test_bad_joint_names_exit_2(name: str, tmp_path: Path) -> None:
    out = tmp_path / "p.yaml"
    r = runner.invoke(app, ["solve", str(TESTBED), "--solver", name, "--out", str(out)])
    assert r.exit_code == 2 and not out.exists(), r.output
    assert "Traceback" not in r.output


def test_a_job_the_placement_cannot_fit_is_retried_at_its_minimum() -> None:
    """Regression (issue 16): with --placement kube-default one job was admitted by the
    allocation and dropped by the placement every round, even alone, until the 365-day cap."""
    from schedopt.generate import generate_instance
    from schedopt.sim import simulate

    wl = generate_instance("optimus-workload", jobs=60, servers=13, seed=0)
    r = simulate(wl, "drf", placement="kube-default", seed=0, horizon_s=20 * 86400, restart_aware=False,
                 check_plans=True)
    assert r.unfinished == 0 and r.check_violations == 0
