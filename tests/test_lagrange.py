"""The Lagrangian bound holds for any prices; fixing never removes every optimal plan."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.allocation import solve_bruteforce
from schedopt.allocation.lagrange import fix_by_reduced_cost, lagrangian_bound, round_lp, solve_lp
from schedopt.allocation.problem import compile_allocation, enumerate_choices
from schedopt.allocation.admission import all_fit_at_minimum
from tests.conftest import random_tiny_instance


@pytest.mark.parametrize("seed", range(30))
def test_bound_below_optimum_for_any_prices(seed: int) -> None:
    inst = random_tiny_instance(500 + seed)
    admitted, optimum, _ = solve_bruteforce(inst)
    data = compile_allocation(inst)
    cs = enumerate_choices(data)
    if admitted == 0:
        return
    every = admitted == data.J and all_fit_at_minimum(data)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        lam = rng.exponential(optimum / max(1.0, data.cap.sum()), size=data.R)
        nu = float(rng.exponential(optimum / admitted))
        bound, rc = lagrangian_bound(cs, data.cap, lam, nu, None if every else admitted)
        assert bound <= optimum * (1 + 1e-9) + 1e-9
        assert np.all(rc >= -1e-9)
    lag = solve_lp(data, cs, admit=None if every else admitted)
    assert lag.bound <= optimum * (1 + 1e-9) + 1e-9
    keep = fix_by_reduced_cost(cs, lag, optimum)
    # some optimal plan survives the fixing: the exact model on the reduced set finds the optimum
    reduced = cs.subset(keep)
    assert reduced.K >= admitted
    plan = schedopt.solve(inst, "optimus-milp")
    assert plan.objective.value == pytest.approx(optimum, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("seed", range(10))
def test_rounding_is_feasible(seed: int) -> None:
    inst = random_tiny_instance(700 + seed)
    data = compile_allocation(inst)
    if not all_fit_at_minimum(data):
        return
    cs = enumerate_choices(data)
    lag = solve_lp(data, cs)
    chosen = round_lp(data, cs, lag.x)
    if chosen is not None:
        assert len(chosen) == data.J
        assert np.all(cs.use[chosen].sum(axis=0) <= data.cap * (1 + 1e-9) + 1e-9)
        assert cs.cost[chosen].sum() >= lag.bound * (1 - 1e-9) - 1e-9
