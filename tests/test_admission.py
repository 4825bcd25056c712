"""Admission (issue 17 §4): the ``swap`` rule admits at least as many jobs as
DESIGN.md's ``smallest`` rule and, among them, shorter ones; on the
oversubscribed rows of the gap table it closes the greedy's 80-90 % gap."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.allocation.problem import admit, compile_allocation
from schedopt.generate import generate_instance
from schedopt.testing import assert_gap, check_solver
from tests.conftest import assert_checked, random_tiny_instance


def _min_time_sum(data, admitted, start) -> float:
    return sum(float(data.time_s(j, *start[j])) for j in admitted)


@pytest.mark.parametrize("seed", range(40))
def test_swap_admits_no_fewer_and_no_longer_jobs(seed: int) -> None:
    data = compile_allocation(random_tiny_instance(700 + seed, n_jobs=int(np.random.default_rng(seed).integers(3, 8))))
    a, sa = admit(data, "smallest")
    b, sb = admit(data, "swap")
    assert len(b) >= len(a)
    if len(b) == len(a):
        assert _min_time_sum(data, b, sb) <= _min_time_sum(data, a, sa) * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_swap_admits_as_many_as_the_optimum_on_tiny_instances(seed: int) -> None:
    inst = random_tiny_instance(900 + seed, n_jobs=5)
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-greedy", admission="swap"))
    exact = schedopt.solve(inst, "optimus-milp")
    assert plan.objective.admitted <= exact.objective.admitted
    assert plan.options["admission"] == "swap"


def test_oversubscribed_gap_closes() -> None:
    """docs/benchmarks.md's oversubscribed row (optimus, 50 jobs, 40 servers, seed 1000): 90.7 % with `smallest`."""
    inst = generate_instance("optimus", jobs=50, servers=40, seed=1000)
    literal = schedopt.get_solver("optimus-greedy", priority_factor=1.0)
    swap = schedopt.get_solver("optimus-greedy", priority_factor=1.0, admission="swap")
    assert assert_gap(inst, literal, max_gap=1.0, reference="optimus-milp").gap > 0.8
    report = assert_gap(inst, swap, max_gap=0.05, reference="optimus-milp")
    assert report.admitted == report.optimum_admitted


@pytest.mark.parametrize("name", ["optimus-greedy", "drf", "tetris", "fifo", "srtf"])
def test_every_heuristic_takes_the_option_and_keeps_its_contract(name: str) -> None:
    solver = schedopt.get_solver(name, admission="swap")
    check_solver(solver, problem="allocation", checks=["feasible_plans", "deterministic", "oversubscribed", "unmeetable"])
    with pytest.raises(schedopt.InputError, match="admission"):
        schedopt.get_solver(name, admission="largest")


def test_arrival_rule_admits_first_come_first() -> None:
    """``arrival`` (Mesos' DRF sorter at share 0): the first job in, even a large one,
    before smaller later ones; ``smallest`` admits the small ones."""
    def job(i: int, cpu: float, arrival: float) -> dict:
        return {"id": f"j{i}", "arrival": arrival, "remaining_steps": 100.0,
                "speed": {"form": "amdahl", "serial": 0.0, "parallel": 1.0},
                "roles": {"worker": {"demand": {"cpu": cpu}, "min": 1, "max": 1}}}
    inst = schedopt.Instance.model_validate({"schema": "schedopt/instance@1", "name": "arrival", "resources": ["cpu"],
                                            "servers": [{"name": "s", "capacity": {"cpu": 4}}],
                                            "jobs": [job(0, 3, 0.0), job(1, 2, 1.0), job(2, 2, 2.0)]})
    data = compile_allocation(inst)
    assert admit(data, "arrival")[0] == [0]
    assert admit(data, "smallest")[0] == [1, 2]
    plan = assert_checked(inst, schedopt.solve(inst, "drf", admission="arrival"))
    assert set(plan.allocation) == {"j0"}
