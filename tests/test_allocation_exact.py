"""Exact solvers against brute force and against each other; the greedy against both."""

from __future__ import annotations

import math

import pytest

import schedopt
from schedopt.testing import random_packing_instance
from schedopt.allocation import solve_bruteforce
from tests.conftest import INSTANCES, assert_checked, random_tiny_instance

SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS)
def test_exact_equals_brute_force_and_greedy_is_never_better(seed: int) -> None:
    inst = random_tiny_instance(seed)
    admitted, total, _ = solve_bruteforce(inst)
    plans = {name: assert_checked(inst, schedopt.solve(inst, name)) for name in ("optimus-milp", "optimus-cpsat", "optimus-greedy")}
    for name in ("optimus-milp", "optimus-cpsat"):
        p = plans[name]
        if admitted == 0:
            assert p.status == schedopt.Status.INFEASIBLE and p.objective.admitted == 0
            continue
        assert p.status == schedopt.Status.OPTIMAL, (name, p.message)
        assert p.objective.admitted == admitted
        assert p.objective.value == pytest.approx(total, rel=1e-9, abs=1e-9)
        assert p.objective.bound <= total * (1 + 1e-9) + 1e-9
    g = plans["optimus-greedy"]
    if g.objective.admitted == admitted and admitted > 0:
        assert g.objective.value >= total * (1 - 1e-9) - 1e-9  # never better than the optimum
        if g.objective.bound is not None:
            assert g.objective.bound <= total * (1 + 1e-9) + 1e-9  # the LP bound really bounds
            assert g.objective.gap >= 0
    else:
        assert g.objective.admitted <= admitted


def test_hand_verified_optimum() -> None:
    inst = schedopt.load_instance(INSTANCES / "small-hand.yaml")
    for name in ("optimus-milp", "optimus-cpsat", "optimus-greedy"):
        p = assert_checked(inst, schedopt.solve(inst, name))
        assert p.allocation == {"a": {"worker": 2}, "b": {"worker": 1}}
        assert p.objective.value == pytest.approx(9.0)


def test_milp_and_cpsat_agree_on_the_testbed(testbed: schedopt.Instance) -> None:
    milp = assert_checked(testbed, schedopt.solve(testbed, "optimus-milp"))
    cpsat = assert_checked(testbed, schedopt.solve(testbed, "optimus-cpsat"))
    greedy = assert_checked(testbed, schedopt.solve(testbed, "optimus-greedy"))
    assert milp.status == cpsat.status == schedopt.Status.OPTIMAL
    assert milp.objective.value == pytest.approx(cpsat.objective.value, rel=1e-9)
    assert greedy.objective.value >= milp.objective.value * (1 - 1e-12)
    # the greedy's certified gap is measured against a bound no greater than the optimum
    assert greedy.objective.bound <= milp.objective.value * (1 + 1e-9)


def test_reduced_cost_fixing_keeps_the_optimum_on_100_jobs() -> None:
    inst = schedopt.load_instance(INSTANCES / "optimus-100.yaml")
    milp = assert_checked(inst, schedopt.solve(inst, "optimus-milp"))
    assert milp.status == schedopt.Status.OPTIMAL and milp.objective.gap <= 1e-6
    if "after_fixing" in milp.metrics:  # listed in price space, never enumerated
        assert milp.metrics["after_fixing"] < milp.metrics["configurations"] / 100
    else:  # the dual's prices proved the incumbent: nothing was listed
        assert milp.metrics["stopped_in"] == "after the LP bound (the incumbent meets it)"
    # on hard packings the model runs over the configurations fixing keeps, and finds the optimum
    for seed in range(3):
        packing = random_packing_instance(seed, 30, 4)
        fixed = assert_checked(packing, schedopt.solve(packing, "optimus-milp"))
        assert fixed.metrics["after_fixing"] < fixed.metrics["configurations"]
        assert fixed.status == schedopt.Status.OPTIMAL
        cpsat = assert_checked(packing, schedopt.solve(packing, "optimus-cpsat"))  # Pyomo = CP-SAT
        assert fixed.objective.value == pytest.approx(cpsat.objective.value, rel=1e-7)
    # the same model without fixing (CP-SAT on the full pruned set is too slow; HiGHS LP instead):
    # the optimum can't be below the Lagrangian bound, and the bound is tight here
    assert milp.metrics["lp_bound"] <= milp.objective.value * (1 + 1e-12)


def test_oversubscribed_admits_the_most_jobs() -> None:
    # 3 GPUs; jobs need 2, 2 and 1 GPU at minimum: the most jobs is 2 (the 1-GPU job plus one 2-GPU job)
    from tests.conftest import make_instance

    jobs = []
    for jid, gpus in (("big1", 2), ("big2", 2), ("small", 1)):
        jobs.append({"id": jid, "roles": {"worker": {"demand": {"gpu": 1}, "min": gpus, "max": 3}},
                     "speed": {"form": "amdahl", "serial": 0.1, "parallel": 1.0}, "remaining_steps": 100})
    inst = make_instance(jobs, {"gpu": 3})
    admitted, total, _ = solve_bruteforce(inst)
    assert admitted == 2
    for name in ("optimus-milp", "optimus-cpsat", "optimus-greedy"):
        p = assert_checked(inst, schedopt.solve(inst, name))
        assert p.objective.admitted == 2 and len(p.paused) == 1
        assert "small" in p.allocation
        if name != "optimus-greedy":
            assert p.objective.value == pytest.approx(total)
            assert p.objective.admitted_bound == 2


def test_time_limit_comes_back_as_status_not_exception() -> None:
    inst = schedopt.load_instance(INSTANCES / "optimus-100.yaml")
    for name in ("optimus-milp", "optimus-cpsat"):
        p = schedopt.solve(inst, name, time_limit=1e-3)
        assert p.status in (schedopt.Status.OPTIMAL, schedopt.Status.FEASIBLE, schedopt.Status.TIME_LIMIT)
        if p.has_solution:
            assert_checked(inst, p)
    with pytest.raises(schedopt.InputError):
        schedopt.solve(inst, "optimus-milp", time_limit=-1)


def test_cpsat_bound_accounts_for_cost_scaling() -> None:
    # a hard packing, where CP-SAT runs (on the testbed the LP's prices prove the greedy's plan first)
    p = schedopt.solve(random_packing_instance(0, 30, 4), "optimus-cpsat")
    assert p.metrics["scaling_error_s"] > 0
    assert p.objective.bound <= p.objective.value
    assert math.isfinite(p.objective.gap) and p.objective.gap < 1e-6


def test_incumbent_proven_by_the_lp_bound_needs_no_model(testbed: schedopt.Instance) -> None:
    """When the dual's prices prove the incumbent within the MILP's own gap (the testbed:
    the plan meets the LP bound), both exact solvers return it as optimal without building
    a model, with the LP's certificate; the plan is the MILP's optimum all the same."""
    plans = [schedopt.solve(testbed, name) for name in ("optimus-milp", "optimus-cpsat")]
    for p in plans:
        assert p.status == schedopt.Status.OPTIMAL
        assert p.metrics["stopped_in"] == "after the LP bound (the incumbent meets it)"
        assert "time_build_seconds" not in p.metrics
        assert p.certificate is not None and p.certificate.bound.kind == "lagrangian"
        assert p.objective.gap <= 1e-7
        assert_checked(testbed, p)
    assert plans[0].allocation == plans[1].allocation


@pytest.mark.parametrize("seed", range(8))
def test_neighbourhood_search_keeps_the_optimum(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's RINS step (``exact._neighbourhood``), made on every model here (its size floor at
    0): both backends still find brute force's optimum on rigid multi-GPU typed instances, the plans
    check with every certificate replayed, and the step runs and improves the incumbent on some seeds."""
    from schedopt.allocation import exact
    from schedopt.allocation.bruteforce import solve_bruteforce_typed
    from schedopt.testing import random_rigid_typed_instance

    monkeypatch.setattr(exact, "NEIGHBOURHOOD_ABOVE", 0)
    inst = random_rigid_typed_instance(seed, n_jobs=6 + seed % 3)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    for solver in ("optimus-milp", "optimus-cpsat"):
        plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
        assert plan.objective.admitted == admitted
        if admitted:
            assert plan.status == schedopt.Status.OPTIMAL
            assert plan.objective.value == pytest.approx(total, rel=1e-6)
            if plan.certificate and plan.certificate.bound and plan.certificate.bound.kind != "backend":
                assert not schedopt.check(inst, plan, strict=True)


def test_neighbourhood_search_frees_only_the_jobs_the_lp_and_incumbent_disagree_on() -> None:
    """``exact._neighbourhood`` on rigid typed instances from a blind incumbent: whatever it returns
    fits the capacity, admits as many jobs, costs less, and gives every job the LP and the incumbent
    agree on what they give it."""
    import numpy as np

    from schedopt.allocation import exact
    from schedopt.allocation.milp import HighsBackend
    from schedopt.allocation.model import compile_model, lp_bound
    from schedopt.allocation.problem import fits
    from schedopt.allocation.typed import typed_admission
    from schedopt.deadline import Deadline
    from schedopt.testing import random_rigid_typed_instance

    improved = 0
    for seed in range(30):
        model = compile_model(random_rigid_typed_instance(seed))
        start = typed_admission(model, "blind")
        if not start:
            continue
        admit = None if len(start) == model.J else len(start)
        _, cs, row_of = model.choices
        lp = lp_bound(model, cs, admit=admit).lp
        keep = np.ones(cs.K, dtype=bool)
        metrics: dict = {}
        found = exact._neighbourhood(model, HighsBackend(rel_gap=1e-7, threads=1), cs, row_of, lp.x, keep, start,
                                     admit=admit, clock=Deadline(None), seed=0, metrics=metrics)
        if found is None:
            continue
        improved += 1
        rows = model.rows
        assert len(found) >= len(start)
        assert fits(rows.usage(found), 0.0, rows.cap)
        assert rows.total_time_s(found) < rows.total_time_s(start)
        whole = np.flatnonzero(lp.x >= 1 - 1e-6)
        for k in whole.tolist():
            v, c = int(row_of[k]), (int(cs.counts[k, 0]), int(cs.counts[k, 1]))
            if start.get(v) == c:
                assert found.get(v) == c  # agreed: kept
        assert metrics["neighbourhood_jobs"] >= 1
    assert improved >= 5
