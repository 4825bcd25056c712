"""optimus-lagrange: never better than the optimum, as many jobs as the
optimum, within 0.5 % of it on the contention table's instances, deterministic,
and every plan passes the checker."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.allocation import solve_bruteforce
from schedopt.allocation.dual import PricingOracle, solve_dual
from schedopt.allocation.price_guided import _Times, local_search, round_at_prices
from schedopt.allocation.problem import compile_allocation
from schedopt.generate import generate_instance
from tests.conftest import assert_checked, random_tiny_instance
from tests.test_reconfiguration import _random_running


@pytest.mark.parametrize("seed", range(40))
def test_never_better_than_brute_force_and_admits_as_many(seed: int) -> None:
    inst = random_tiny_instance(3000 + seed) if seed % 2 else _random_running(3000 + seed)
    admitted, optimum, _ = solve_bruteforce(inst) if seed % 2 else (None, None, None)
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-lagrange"))
    exact = assert_checked(inst, schedopt.solve(inst, "optimus-milp"))
    if admitted is not None:
        assert exact.objective.admitted == admitted
    if admitted:
        assert exact.objective.value == pytest.approx(optimum, rel=1e-9, abs=1e-9)
    assert plan.objective.admitted <= exact.objective.admitted
    if plan.objective.admitted == exact.objective.admitted and exact.objective.value is not None:
        assert plan.objective.value >= exact.objective.value * (1 - 1e-9) - 1e-9
        if plan.objective.bound is not None:
            assert plan.objective.bound <= exact.objective.value * (1 + 1e-9) + 1e-9


# the contention levels of docs/benchmarks.md's gap table (50 jobs)
CONTENTION = {"light": 400, "medium": 110, "heavy": 55, "oversubscribed": 40}


@pytest.mark.parametrize("level", sorted(CONTENTION))
@pytest.mark.parametrize("seed", [1000, 1001])
def test_within_half_a_percent_of_the_optimum_at_every_contention(level: str, seed: int) -> None:
    inst = generate_instance("optimus", jobs=50, servers=CONTENTION[level], seed=seed)
    exact = assert_checked(inst, schedopt.solve(inst, "optimus-milp"))
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-lagrange"))
    assert plan.objective.admitted == exact.objective.admitted
    gap = (plan.objective.value - exact.objective.value) / plan.objective.value
    assert -1e-9 <= gap <= 0.005
    assert plan.objective.gap is not None and plan.objective.gap >= gap - 1e-9  # the certified gap covers the true one


def test_deterministic_and_better_than_the_greedy_where_it_stops_early() -> None:
    inst = schedopt.load_instance("instances/optimus-1000.json")
    a = assert_checked(inst, schedopt.solve(inst, "optimus-lagrange"))
    b = schedopt.solve(inst, "optimus-lagrange")
    assert a.allocation == b.allocation and a.objective.value == b.objective.value
    greedy = schedopt.solve(inst, "optimus-greedy")
    assert a.objective.value < greedy.objective.value
    assert a.metrics["tasks"] > greedy.metrics["tasks"]
    assert a.objective.gap < 1e-4


def test_rounding_fits_and_the_search_only_improves() -> None:
    inst = generate_instance("optimus", jobs=60, servers=70, seed=5)
    data = compile_allocation(inst)
    members = np.arange(data.J)
    oracle = PricingOracle(data, members)
    dual = solve_dual(data, oracle=oracle)
    counts = round_at_prices(data, oracle, dual.lam, members, data.lo.copy())
    use = (counts[:, 0, None] * data.demand[:, 0] + counts[:, 1, None] * data.demand[:, 1]).sum(axis=0)
    assert np.all(use <= data.cap * (1 + 1e-9))
    times = _Times(data)
    before = times.at(counts[:, 0], counts[:, 1]).sum()
    after_counts, after_members, moves = local_search(data, times, counts, members, max_moves=10_000)
    assert len(after_members) == data.J
    after = times.at(after_counts[:, 0], after_counts[:, 1]).sum()
    assert after <= before
    use = (after_counts[:, 0, None] * data.demand[:, 0] + after_counts[:, 1, None] * data.demand[:, 1]).sum(axis=0)
    assert np.all(use <= data.cap * (1 + 1e-9))
    assert after >= dual.bound * (1 - 1e-9)


def test_options_are_validated() -> None:
    inst = generate_instance("optimus", jobs=3, servers=4, seed=0)
    with pytest.raises(schedopt.InputError):
        schedopt.solve(inst, "optimus-lagrange", admission="best")
    plan = schedopt.solve(inst, "optimus-lagrange", max_moves=0)
    assert plan.metrics["search_adds"] == 0 and plan.options["max_moves"] == 0
