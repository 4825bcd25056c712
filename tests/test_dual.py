"""The Lagrangian dual in price space (schedopt.allocation.dual): its pricing
equals enumeration, its bound is never above the optimum and matches the LP
relaxation, and it needs no enumeration of formula jobs."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.allocation import solve_bruteforce
from schedopt.allocation.dual import PricingOracle, lagrangian, solve_dual
from schedopt.allocation.lagrange import solve_lp
from schedopt.allocation.problem import compile_allocation, enumerate_choices
from schedopt.allocation.admission import admit, all_fit_at_minimum
from schedopt.generate import generate_instance
from tests.conftest import random_tiny_instance
from tests.test_reconfiguration import _random_running


def _enumerated_min(data, lam: np.ndarray) -> np.ndarray:
    cs = enumerate_choices(data, prune=False)
    priced = cs.cost + cs.use @ lam
    out = np.full(data.J, np.inf)
    for j in range(data.J):
        s = cs.of(j)
        if s.stop > s.start:
            out[j] = priced[s].min()
    return out


@pytest.mark.parametrize("seed", range(40))
def test_pricing_equals_enumeration(seed: int) -> None:
    inst = random_tiny_instance(900 + seed) if seed % 2 else _random_running(900 + seed)  # every form, with restarts
    data = compile_allocation(inst)
    oracle = PricingOracle(data)
    rng = np.random.default_rng(seed)
    for scale in (0.0, 1.0, 100.0, 1e4):
        lam = rng.exponential(scale, size=data.R) if scale else np.zeros(data.R)
        best, counts, time_s = oracle.price(lam)
        assert np.allclose(best, _enumerated_min(data, lam), rtol=1e-12, atol=1e-9)
        for j in range(data.J):
            if np.isfinite(best[j]):
                c = counts[j]
                assert time_s[j] == pytest.approx(float(data.time_s(j, int(c[0]), int(c[1]))), rel=1e-12)
                use = c[0] * data.demand[j, 0] + c[1] * data.demand[j, 1]
                assert best[j] == pytest.approx(time_s[j] + use @ lam, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_dual_bound_below_optimum_and_equal_to_the_lp(seed: int) -> None:
    inst = random_tiny_instance(500 + seed)
    admitted, optimum, _ = solve_bruteforce(inst)
    if admitted == 0:
        return
    data = compile_allocation(inst)
    every = admitted == data.J and all_fit_at_minimum(data)
    dual = solve_dual(data, admit=None if every else admitted)
    assert dual.bound <= optimum * (1 + 1e-9) + 1e-9
    lp = solve_lp(data, enumerate_choices(data), admit=None if every else admitted)
    assert dual.bound == pytest.approx(lp.bound, rel=1e-4, abs=1e-6)
    assert dual.upper >= lp.bound * (1 - 1e-6) - 1e-6  # the master's value bounds the LP optimum
    # L is valid at any prices, not only the optimal ones
    rng = np.random.default_rng(seed)
    for _ in range(5):
        value, *_ = lagrangian(PricingOracle(data), rng.exponential(10.0, data.R), float(rng.exponential(100.0)),
                               None if every else admitted)
        assert value <= optimum * (1 + 1e-9) + 1e-9


@pytest.mark.parametrize("servers", [400, 110, 55, 40, 20])
def test_dual_matches_the_lp_on_optimus_instances_at_every_contention(servers: int) -> None:
    data = compile_allocation(generate_instance("optimus", jobs=40, servers=servers, seed=servers))
    admitted, _ = admit(data, "swap")
    k = None if len(admitted) == data.J else len(admitted)
    lp = solve_lp(data, enumerate_choices(data), admit=k)
    dual = solve_dual(data, admit=k)
    assert dual.bound <= lp.bound * (1 + 1e-9) + 1e-6
    assert dual.bound >= lp.bound * (1 - 1e-4)
    assert dual.lp_gap <= 1e-4


def test_greedy_plans_carry_the_dual_bound() -> None:
    inst = generate_instance("optimus", jobs=60, servers=80, seed=2)
    plan = schedopt.solve(inst, "optimus-greedy")
    assert not schedopt.check(inst, plan)
    assert plan.metrics["bound_method"] == "lagrangian-dual"
    assert plan.metrics["bound_lp_gap"] <= 1e-4
    assert plan.objective.bound <= plan.objective.value


@pytest.mark.parametrize("seed", range(60))
def test_listing_within_a_threshold_keeps_every_undominated_configuration(seed: int) -> None:
    from schedopt.allocation.dual import enumerate_within
    from schedopt.allocation.problem import pareto_prune

    inst = (random_tiny_instance(seed) if seed % 3 else _random_running(seed) if seed % 2
            else generate_instance("optimus", jobs=20, servers=30, seed=seed))
    data = compile_allocation(inst)
    oracle = PricingOracle(data)
    rng = np.random.default_rng(seed)
    lam = rng.exponential(10.0, data.R)
    best, _, _ = oracle.price(lam)
    threshold = best + rng.exponential(50.0)
    listed = enumerate_within(oracle, lam, threshold)
    got = {(int(j), int(a), int(b)) for j, (a, b) in zip(listed.job, listed.counts)}
    full = enumerate_choices(data, prune=False)
    priced = full.cost + full.use @ lam
    for j in range(data.J):
        s = full.of(j)
        undominated = pareto_prune(full.counts[s], full.cost[s])
        for k in np.flatnonzero(undominated):
            c = full.counts[s][k]
            if priced[s][k] <= threshold[j]:
                assert (j, int(c[0]), int(c[1])) in got
    assert np.all(listed.cost + listed.use @ lam <= threshold[listed.job] * (1 + 1e-8) + 1e-8)
