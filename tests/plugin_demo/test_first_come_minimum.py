"""The outside package's own tests (docs/testing.md): schedopt's contract
suite and optimality gaps for its heuristic, found by its entry point name."""

import math

from hypothesis import given, settings

from schedopt.generate import generate_instance
from schedopt.testing import assert_gap, parametrize_with_checks, strategies


@parametrize_with_checks(["first-come-minimum"])
def test_contract(solver, check):
    check(solver)


def test_gap_on_the_optimus_testbed():
    testbed = generate_instance("optimus-testbed", jobs=9, servers=13)
    report = assert_gap(testbed, "first-come-minimum", max_gap=0.65)  # the optimum by optimus-milp
    assert report.admitted == report.optimum_admitted


@settings(max_examples=30, derandomize=True)
@given(strategies.allocation_instances(max_jobs=5))
def test_never_better_than_the_optimum(instance):
    assert_gap(instance, "first-come-minimum", max_gap=math.inf)  # both plans checked; the gap is recorded
