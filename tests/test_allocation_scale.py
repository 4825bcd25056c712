"""At scale (marked slow; `make test-slow`): both exact solvers prove the same optimum
on 1,000 jobs, with every job admitted and when the cluster is over-subscribed."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.generate import generate_instance
from tests.conftest import INSTANCES, assert_checked


@pytest.mark.slow
@pytest.mark.parametrize("which", ["all-admitted", "oversubscribed"])
def test_exact_solvers_agree_at_1000_jobs(which: str) -> None:
    if which == "all-admitted":
        inst = schedopt.load_instance(INSTANCES / "optimus-1000.json")
    else:
        inst = generate_instance("optimus", jobs=1000, servers=800, seed=4)
    milp = assert_checked(inst, schedopt.solve(inst, "optimus-milp", time_limit=120))
    cpsat = assert_checked(inst, schedopt.solve(inst, "optimus-cpsat", time_limit=120))
    greedy = assert_checked(inst, schedopt.solve(inst, "optimus-greedy"))
    assert milp.status == cpsat.status == schedopt.Status.OPTIMAL
    assert milp.objective.admitted == cpsat.objective.admitted
    assert milp.objective.value == pytest.approx(cpsat.objective.value, rel=1e-9)
    assert greedy.objective.admitted <= milp.objective.admitted
    if greedy.objective.admitted == milp.objective.admitted:
        assert greedy.objective.value >= milp.objective.value
