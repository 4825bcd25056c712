"""Admission (issue 17 §4): the default ``lp`` rule admits the optimum's count
(brute force on tiny instances, ``optimus-milp`` on packing instances where
DESIGN.md's ``smallest`` rule falls 10 % short), never fewer than ``smallest``
or ``swap``, and near-least Σ t_j among equal counts; every heuristic takes the
rule as an option, uses ``lp`` by default and reports the admitted-count bound."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.allocation.admission import ADMISSION_RULES, DEFAULT_ADMISSION, admit, admitted_upper_bound
from schedopt.allocation.problem import compile_allocation, fits, min_configuration, use_of
from schedopt.generate import generate_instance
from schedopt.testing import assert_gap, check_solver, random_packing_instance, strategies
from tests.conftest import assert_checked, make_instance, random_tiny_instance

HEURISTICS = ["optimus-greedy", "optimus-lagrange", "drf", "tetris", "fifo", "srtf"]


def _min_time_sum(data, admitted, start) -> float:
    return sum(float(data.time_s(j, *start[j])) for j in admitted)


def _brute_force(data) -> tuple[int, float]:
    """The most jobs that fit at their minimum configurations, then the least Σ t_j among them."""
    jobs = [j for j in range(data.J) if min_configuration(data, j) is not None]
    use = {j: use_of(data, j, min_configuration(data, j)) for j in jobs}
    t = {j: float(data.time_s(j, *min_configuration(data, j))) for j in jobs}
    for k in range(len(jobs), -1, -1):
        sums = [sum(t[j] for j in s) for s in itertools.combinations(jobs, k)
                if fits(np.zeros(data.R), sum((use[j] for j in s), np.zeros(data.R)), data.cap)]
        if sums:
            return k, min(sums)
    return 0, 0.0


@pytest.mark.parametrize("seed", range(40))
def test_lp_admits_the_most_jobs_and_near_least_time_on_tiny_instances(seed: int) -> None:
    data = compile_allocation(random_tiny_instance(700 + seed, n_jobs=int(np.random.default_rng(seed).integers(3, 9))))
    count, least = _brute_force(data)
    admitted, start = admit(data, "lp")
    assert len(admitted) == count
    assert fits(np.zeros(data.R), sum((use_of(data, j, start[j]) for j in admitted), np.zeros(data.R)), data.cap)
    assert _min_time_sum(data, admitted, start) <= least * 1.05 + 1e-9  # measured: equal on all 40 seeds
    for rule in ("smallest", "swap"):
        other, other_start = admit(data, rule)
        assert len(other) <= len(admitted)


@pytest.mark.parametrize("seed", range(40))
def test_swap_admits_no_fewer_and_no_longer_jobs_than_smallest(seed: int) -> None:
    data = compile_allocation(random_tiny_instance(700 + seed, n_jobs=int(np.random.default_rng(seed).integers(3, 8))))
    a, sa = admit(data, "smallest")
    b, sb = admit(data, "swap")
    assert len(b) >= len(a)
    if len(b) == len(a):
        assert _min_time_sum(data, b, sb) <= _min_time_sum(data, a, sa) * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_lp_admits_the_optimums_count_where_smallest_falls_short(seed: int) -> None:
    """150 jobs of random 3-resource demands on 18 servers (the issue's case)."""
    inst = random_packing_instance(seed)
    data = compile_allocation(inst)
    exact = schedopt.solve(inst, "optimus-milp", time_limit=30)
    assert exact.status.value == "optimal"
    counts = {rule: len(admit(data, rule)[0]) for rule in ADMISSION_RULES}
    assert counts["lp"] == exact.objective.admitted == admitted_upper_bound(data)
    assert counts["smallest"] < 0.96 * counts["lp"]  # measured: 81-89 of 92-98
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-greedy"))
    assert plan.objective.admitted == exact.objective.admitted
    assert plan.objective.admitted_bound == exact.objective.admitted


def test_oversubscribed_gap_closes() -> None:
    """docs/benchmarks.md's oversubscribed row (optimus, 50 jobs, 40 servers, seed 1000):
    90.7 % with the literal rule, a few % with the default."""
    inst = generate_instance("optimus", jobs=50, servers=40, seed=1000)
    literal = schedopt.get_solver("optimus-greedy", priority_factor=1.0, admission="smallest")
    default = schedopt.get_solver("optimus-greedy", priority_factor=1.0)
    assert assert_gap(inst, literal, max_gap=1.0, reference="optimus-milp").gap > 0.8
    report = assert_gap(inst, default, max_gap=0.05, reference="optimus-milp")
    assert report.admitted == report.optimum_admitted


#: the baselines admit as their own systems do by default (issue 35); lp is their option
OWN_ADMISSION = {"drf": "arrival", "fifo": "arrival", "srtf": "shortest", "tetris": "policy"}


@pytest.mark.parametrize("name", HEURISTICS)
def test_every_heuristic_uses_lp_by_default_and_keeps_its_contract(name: str) -> None:
    assert DEFAULT_ADMISSION == "lp"
    inst = random_packing_instance(0, n_jobs=40, servers=4)
    plan = assert_checked(inst, schedopt.solve(inst, name))
    assert plan.options["admission"] == OWN_ADMISSION.get(name, "lp")
    assert plan.objective.admitted_bound is not None and plan.objective.admitted <= plan.objective.admitted_bound
    for rule in ADMISSION_RULES:
        solver = schedopt.get_solver(name, admission=rule)
        check_solver(solver, problem="allocation", checks=["feasible_plans", "deterministic", "oversubscribed", "unmeetable"])
    with pytest.raises(schedopt.InputError, match="admission"):
        schedopt.get_solver(name, admission="largest")


def test_slaq_greedy_takes_the_rule() -> None:
    inst = generate_instance("slaq", jobs=30, servers=2, seed=1)
    plans = {rule: assert_checked(inst, schedopt.solve(inst, "slaq-greedy", admission=rule)) for rule in ("lp", "smallest")}
    assert plans["lp"].objective.admitted >= plans["smallest"].objective.admitted
    assert plans["lp"].options["admission"] == "lp"


def test_lp_is_deterministic() -> None:
    data = compile_allocation(random_packing_instance(1, n_jobs=60, servers=6))
    assert admit(data, "lp") == admit(data, "lp")


@pytest.mark.parametrize("rule", ["lp", "swap"])
@pytest.mark.parametrize(("restart_s", "expect"), [(5.0, ["a", "c"]), (0.0, ["b", "c"])])
def test_a_running_job_is_paused_only_for_one_that_saves_its_restart(rule: str, restart_s: float, expect: list[str]) -> None:
    """2 GPUs, three 1-GPU jobs: a runs (t = 10 s), b (9 s) and c (1 s) wait. b saves 1 s
    over a, less than a's restart cost of 5 s: a keeps running; with no restart cost b replaces it."""
    def job(job_id: str, t_s: float, **extra) -> dict:
        return {"id": job_id, "roles": {"worker": {"demand": {"gpu": 1}, "min": 1, "max": 1}},
                "speed": {"form": "amdahl", "serial": 0.0, "parallel": t_s}, "remaining_steps": 1, **extra}
    inst = make_instance([job("a", 10.0, running={"worker": 1}, restart_s=restart_s), job("b", 9.0), job("c", 1.0)],
                         {"gpu": 2})
    data = compile_allocation(inst)
    assert [data.jobs[j].id for j in admit(data, rule)[0]] == expect


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
    assert admit(data, "lp")[0] == [1, 2]
    plan = assert_checked(inst, schedopt.solve(inst, "drf", admission="arrival"))
    assert set(plan.allocation) == {"j0"}


@settings(max_examples=40, deadline=None)
@given(strategies.allocation_instances(max_jobs=6))
def test_lp_admission_is_feasible_and_admits_the_most_jobs(inst) -> None:
    """Property: on random tiny instances ``lp`` admits brute force's count, with a
    feasible set, never fewer than the other rules."""
    data = compile_allocation(inst)
    admitted, start = admit(data, "lp")
    assert fits(np.zeros(data.R), sum((use_of(data, j, start[j]) for j in admitted), np.zeros(data.R)), data.cap)
    assert len(admitted) == _brute_force(data)[0]
    assert all(len(admit(data, rule)[0]) <= len(admitted) for rule in ADMISSION_RULES)


def test_baselines_admit_as_their_systems_on_the_drf_example() -> None:
    """Issue 35: one server with 4 cpu and 2 gpu; A (first) needs 4 cpu and 2 gpu, B
    and C 2 cpu and 1 gpu each. Published DRF (progressive filling, ties by
    arrival), FIFO and SRTF (equal times: by arrival) admit A; admission=lp admits B and C."""
    job = lambda job_id, cpu, gpu, arrival: {  # noqa: E731
        "id": job_id, "arrival": arrival, "roles": {"worker": {"demand": {"cpu": cpu, "gpu": gpu}, "min": 1, "max": 1}},
        "speed": {"form": "amdahl", "serial": 0, "parallel": 1}, "remaining_steps": 100}
    inst = make_instance([job("A", 4, 2, 0), job("B", 2, 1, 1), job("C", 2, 1, 2)], {"cpu": 4, "gpu": 2})
    for name in ("drf", "fifo", "srtf"):
        assert sorted(assert_checked(inst, schedopt.solve(inst, name)).allocation) == ["A"], name
        assert sorted(assert_checked(inst, schedopt.solve(inst, name, admission="lp")).allocation) == ["B", "C"], name


@pytest.mark.parametrize("seed", range(12))
def test_the_admission_lp_over_classes_of_jobs_is_the_lp_over_every_job(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50 §3: above AGGREGATE_ABOVE_COLUMNS the admitted-count LP is solved over classes of
    interchangeable jobs. The same count, the same LP value (Σ weights), and weights that are a
    plan of the LP over every job: at most 1 a job, within every capacity row."""
    from schedopt.allocation import admission
    from schedopt.allocation.model import compile_model
    from schedopt.testing import random_quota_instance, random_typed_instance
    from schedopt.tolerances import capacity_limit

    for inst in (random_typed_instance(seed, 8), random_quota_instance(seed)):
        model = compile_model(inst)
        use, row = admission.admission_columns(model.rows, model.minimum[:2])
        if not len(row):
            continue
        every = admission.admission_lp(model.rows, model.job, least=model.minimum[:2])
        monkeypatch.setattr(admission, "AGGREGATE_ABOVE_COLUMNS", 0)
        classes = admission.admission_lp(model.rows, model.job, least=model.minimum[:2], prefer=model.minimum[3])
        monkeypatch.undo()
        assert classes[0] == every[0]
        assert classes[2].sum() == pytest.approx(every[2].sum(), abs=1e-7)
        group = model.job[row]
        cl = admission._job_classes(use, group)
        assert len(cl.use) <= len(row)
        x = cl.spread(admission._admission_lp(-np.ones(len(cl.use)), cl.use, model.rows.cap, group=cl.group,
                                              size=cl.jobs[cl.group]).x)
        assert (np.bincount(group, weights=x) <= 1 + 1e-9).all() and (x >= 0).all()
        assert (x @ use <= capacity_limit(model.rows.cap) + 1e-7).all()


@given(st.integers(0, 40), st.integers(0, 4), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_unique_rows_is_numpys(n, m, levels, seed):
    """``_unique_rows`` (the job classes' grouping) gives ``np.unique(axis=0)``'s rows and inverse."""
    from schedopt.allocation.admission import _unique_rows

    a = np.random.default_rng(seed).integers(0, levels, size=(n, m)).astype(float) * 1.5
    rows, inverse = _unique_rows(a)
    want, want_inverse = np.unique(a, axis=0, return_inverse=True)
    assert np.array_equal(rows, want) and np.array_equal(inverse, want_inverse.reshape(-1))
    assert np.array_equal(rows[inverse], a)


def _no_type_holds_the_big_job() -> schedopt.Instance:
    """Five 1-GPU jobs and a 4-GPU one that fit the V100s (12 GPUs), and an 8-GPU job allowed only on
    the P100 and the K80 types, 4 GPUs each: it is in no plan, yet half of it on each type is a whole
    job to an LP over configurations that exceed their type's capacity."""
    def job(name: str, gpus: int, kinds: tuple[str, ...]) -> dict:
        return {"id": name, "roles": {"worker": {"demand": {"gpu": 1}, "min": gpus, "max": gpus}},
                "speed_by_accelerator": {k: {"form": "table", "points": [[gpus, 1.0]]} for k in kinds},
                "remaining_steps": 1000.0}
    servers = ([{"name": f"v{i}", "accelerator": "v100", "capacity": {"gpu": 4}} for i in range(3)]
               + [{"name": "p", "accelerator": "p100", "capacity": {"gpu": 4}},
                  {"name": "k", "accelerator": "k80", "capacity": {"gpu": 4}}])
    jobs = [job(f"one{i}", 1, ("v100",)) for i in range(5)] + [job("four", 4, ("v100",)), job("eight", 8, ("p100", "k80"))]
    return schedopt.Instance.from_dict({"name": "big-job", "resources": ["gpu"], "servers": servers, "jobs": jobs})


def test_the_count_ignores_configurations_no_capacity_row_holds() -> None:
    """The admission LP and the checker's replay of its prices leave out configurations that exceed a
    capacity row alone: the exact solvers' count (6 of 7) is an `lp-dual` certificate that `check
    --strict` replays (it was the backend's word while the LP counted the 8-GPU job), and a claim of
    one job fewer is refused."""
    from schedopt.allocation.model import admitted_bound, compile_model

    inst = _no_type_holds_the_big_job()
    count, proof = admitted_bound(compile_model(inst))
    assert count == 6 and proof is not None and proof.kind == "lp-dual"
    for solver in ("optimus-milp", "optimus-cpsat", "optimus-greedy", "optimus-lagrange"):
        plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
        assert plan.objective.admitted == 6
        assert plan.certificate.admitted_bound.kind == "lp-dual", solver
        assert not schedopt.check(inst, plan, strict=True), solver
    plan = schedopt.solve(inst, "optimus-milp", seed=0)
    forged = plan.model_copy(deep=True)
    forged.objective.admitted_bound = 5
    assert schedopt.check(inst, forged, strict=True)
