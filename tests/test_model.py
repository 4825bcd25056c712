"""The one allocation model (issue 49 §1): a plain instance is the one-type case of the typed
rows; one admitted-count LP, one exact driver, one plan builder and one exact repair serve both."""

from __future__ import annotations

import math

import numpy as np
import pytest

import schedopt
from schedopt.allocation.admission import admission_lp
from schedopt.allocation.bruteforce import solve_bruteforce
from schedopt.allocation.model import AllocationModel, admission_weights, admitted_bound, compile_model, compile_typed, lp_bound
from schedopt.allocation.plans import build_plan
from schedopt.allocation.problem import compile_allocation
from schedopt.allocation.repair import exact_repair
from schedopt.checking import check
from schedopt.plan import Status, Termination
from schedopt.testing.instances import (make_instance, random_objective_instance, random_quota_instance,
                                        random_restart_instance, random_tiny_instance, random_typed_instance,
                                        two_role_job)

SEEDS = range(10)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_plain_instance_is_the_one_type_case(seed: int) -> None:
    """The typed rows of an instance without types are its jobs: the same arrays, the same
    admitted-count bound and the same LP bound as the plain compilation."""
    inst = random_restart_instance(seed)
    plain, typed = compile_model(inst), compile_typed(inst)
    assert plain.plain and not typed.plain and not inst.typed
    assert typed.job.tolist() == plain.job.tolist() == list(range(len(inst.jobs)))
    for name in ("lo", "hi", "demand", "Q", "cap"):
        assert np.allclose(getattr(plain.rows, name), getattr(typed.rows, name)), name
    assert plain.resource_names == typed.resource_names == list(inst.resources)
    count = admitted_bound(plain)[0]
    assert count == admitted_bound(typed)[0]
    admit = None if count == len(inst.jobs) else count
    plain_lp, typed_lp = (lp_bound(m, m.choices[1], admit=admit).bound for m in (plain, typed))
    assert math.isclose(plain_lp, typed_lp, rel_tol=1e-7, abs_tol=1e-7)


@pytest.mark.parametrize("make", [random_tiny_instance, random_typed_instance, random_quota_instance])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_admitted_count_lp_bounds_brute_force(make, seed: int) -> None:
    """One LP for plain and typed rows: its floor is never below the most jobs any plan admits; the
    count from the classes' LP is the count from the LP over every job, whose weights sum to its value."""
    inst = make(seed)
    most, _, _ = solve_bruteforce(inst)
    model = compile_model(inst)
    count, proof = admitted_bound(model)
    assert count >= most
    weight = admission_weights(model)
    every = admission_lp(model.rows, model.job, least=model.minimum[:2])
    assert every[0] == count and np.allclose(every[2], weight)
    assert weight.shape == (len(model.job),) and np.all(weight >= -1e-9)
    if proof is not None:
        assert set(proof.prices) == set(model.resource_names)


def test_admission_lp_keeps_a_tables_count_minimal_points_apart() -> None:
    """A table job allowed at (1 PS, 3 workers), using 3 CPU and 1 memory, or at (3 PS, 1 worker),
    using 1 CPU and 3 memory, with 4 of each: two jobs fit (one each way), never three. The LP
    over both points of each job (at most one per job) proves 2; the componentwise least use
    (1 CPU, 1 memory) would only prove every job."""
    table = {"form": "table", "points": [[1, 3, 1.0], [3, 1, 1.0]]}
    jobs = [two_role_job(f"j{i}", table, 100.0, pmax=3, wmax=3, worker={"cpu": 1, "mem": 0}, ps={"cpu": 0, "mem": 1})
            for i in range(3)]
    inst = make_instance(jobs, {"cpu": 4.0, "mem": 4.0})
    count, mu, weight = admission_lp(compile_allocation(inst))
    assert solve_bruteforce(inst)[0] == 2 and count == 2 and mu is not None
    assert weight.sum() == pytest.approx(2.0)


@pytest.mark.parametrize("make", [random_tiny_instance, random_typed_instance, random_quota_instance, random_restart_instance])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("solver", ["optimus-milp", "optimus-lagrange"])
def test_one_driver_and_one_repair_meet_brute_force(make, seed: int, solver: str) -> None:
    """The exact driver's plan is the optimum on plain and typed rows alike; the heuristic with the
    one repair is never better than it, and both plans check."""
    inst = make(seed)
    most, best, _ = solve_bruteforce(inst)
    plan = schedopt.solve(inst, solver, seed=0)
    assert not check(inst, plan), check(inst, plan)
    assert plan.objective.admitted <= most
    if plan.status == Status.OPTIMAL:
        assert plan.objective.admitted == most
        assert math.isclose(plan.objective.value, best, rel_tol=1e-6, abs_tol=1e-6)
    if plan.objective.admitted == most:
        assert plan.objective.value >= best - 1e-6 * max(1.0, best)


@pytest.mark.parametrize("make", [random_tiny_instance, random_typed_instance, random_quota_instance])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_repair_never_admits_fewer_nor_costs_more(make, seed: int) -> None:
    """From the plan admitting each job at its least configuration (first fit), the repair at
    zero prices keeps a feasible plan that admits no fewer jobs and costs no more."""
    inst = make(seed)
    model = compile_model(inst)
    mins, ok, use, _ = model.minimum
    free = model.rows.cap * (1 + 1e-9)
    start: dict[int, tuple[int, int]] = {}
    for j in range(model.J):
        for v in range(int(model.job_start[j]), int(model.job_start[j + 1])):
            if ok[v] and np.all(use[v] <= free):
                start[v] = (int(mins[v, 0]), int(mins[v, 1]))
                free = free - use[v]
                break
    repaired, _ = exact_repair(model, dict(start), np.zeros(model.rows.R))
    assert len(repaired) >= len(start)
    if len(repaired) == len(start):
        assert model.rows.total_time_s(repaired) <= model.rows.total_time_s(start) * (1 + 1e-9) + 1e-9
    plan = build_plan(model, solver="repair", config=repaired, status=Status.HEURISTIC,
                      termination=Termination.COMPLETED, started=0.0)
    assert not check(inst, plan), check(inst, plan)


def test_plain_rows_are_the_jobs_and_typed_rows_name_their_types() -> None:
    inst = random_typed_instance(3)
    model = compile_model(inst)
    assert not model.plain and inst.has_types
    assert set(model.resource_names[:4]) == {"cpu@v100", "gpu@v100", "cpu@k80", "gpu@k80"}
    plain = AllocationModel.of_jobs(compile_allocation(random_tiny_instance(3)))
    assert plain.plain and plain.by_job is plain.rows


def _rowwise_instances():
    from schedopt.testing.instances import random_objective_instance, random_rigid_typed_instance
    for seed in SEEDS:
        yield from (random_tiny_instance(seed), random_typed_instance(seed), random_rigid_typed_instance(seed),
                    random_quota_instance(seed), random_restart_instance(seed), random_objective_instance(seed))


def test_times_at_gives_the_floats_time_s_gives() -> None:
    """The vectorised job time (the model's minimum, the rigid jobs' one configuration) is the
    same float as time_s one row at a time: at every row's least counts and at random counts in
    and out of bounds (restart costs and the objective's offsets included)."""
    rng = np.random.default_rng(0)
    for inst in _rowwise_instances():
        rows = compile_model(inst).rows
        v = np.arange(rows.J)
        for c0, c1 in ((rows.lo[:, 0], rows.lo[:, 1]), (rng.integers(1, 6, rows.J), rng.integers(1, 6, rows.J))):
            want = [float(rows.time_s(j, int(a), int(b))) for j, a, b in zip(v, c0, c1)]
            assert rows.times_at(v, c0, c1).tolist() == want, inst.name


def test_the_rigid_jobs_one_configuration_is_the_enumerated_one() -> None:
    """enumerate_choices given each job's least configuration (rigid jobs taken at once) gives the
    configurations, costs and uses enumerating every job gives."""
    from schedopt.allocation.problem import enumerate_choices

    for inst in _rowwise_instances():
        model = compile_model(inst)
        mins, ok, _, t_min = model.minimum
        fast = enumerate_choices(model.rows, least=(mins, ok, t_min))
        slow = enumerate_choices(model.rows)
        for field in ("job", "counts", "cost", "use", "start"):
            assert np.array_equal(getattr(fast, field), getattr(slow, field)), (inst.name, field)


def _total_one_call_per_job(rows, config) -> float:
    """Σ t_j as one scalar call per job adds it: its term (with ρ_j where its counts change), then its offset."""
    total = 0.0
    for j, (c0, c1) in config.items():
        t = float(rows.Q[j]) * rows.jobs[j].speed.step_time_s(int(c0), int(c1))
        if rows.restarts(j) and (c0, c1) != tuple(int(x) for x in rows.running[j]):
            t += float(rows.restart_s[j])
        total += t
        if rows.offset is not None:
            total += float(rows.offset[j])
    return total


@pytest.mark.parametrize("make", [random_typed_instance, random_restart_instance, random_objective_instance,
                                  random_quota_instance])
@pytest.mark.parametrize("seed", range(6))
def test_total_time_read_at_once_is_the_sum_of_one_call_per_job(make, seed: int) -> None:
    """AllocationData.total_time_s reads every job's step time at once (its StepTable) and adds the
    terms in the config's order: the very float one scalar call per job gives."""
    model = compile_model(make(seed))
    rows = model.rows
    rng = np.random.default_rng(seed)
    _, cs, row_of = model.choices
    for _ in range(5):
        config: dict[int, tuple[int, int]] = {}
        for j in rng.permutation(model.J).tolist():
            picks = np.flatnonzero(cs.job == j)
            if len(picks) and rng.random() < 0.8:
                k = int(rng.choice(picks))
                config[int(row_of[k])] = (int(cs.counts[k, 0]), int(cs.counts[k, 1]))
        assert rows.total_time_s(config) == _total_one_call_per_job(rows, config)
