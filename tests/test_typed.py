"""Accelerator types in the allocation problem (issue 34): exact solvers against
brute force and each other, the greedy against the optimum, bounds on the
right side, certificates replayed, forged plans refused, untyped unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import schedopt
from schedopt.cli import app
from schedopt.allocation.bruteforce import solve_bruteforce_typed
from schedopt.testing import random_rigid_typed_instance, random_typed_instance, random_tiny_instance
from tests.conftest import assert_checked

EXACT = ["optimus-milp", "optimus-cpsat"]


def _strict_ok(instance: schedopt.Instance, plan: schedopt.Plan) -> None:
    """Checked, and every stated bound replayed from its certificate (none taken on a backend's word)."""
    assert_checked(instance, plan)
    if plan.objective.bound is not None and plan.certificate and plan.certificate.bound:
        if plan.certificate.bound.kind != "backend":
            assert not schedopt.check(instance, plan, strict=True)


@pytest.mark.parametrize("seed", range(12))
def test_exact_equals_bruteforce_and_each_other(seed: int) -> None:
    inst = random_typed_instance(seed)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    plans = [schedopt.solve(inst, s, seed=0) for s in EXACT]
    for plan in plans:
        _strict_ok(inst, plan)
        assert plan.status == schedopt.Status.OPTIMAL or admitted == 0
        assert plan.objective.admitted == max(admitted, 0)
        if admitted > 0:
            assert plan.objective.value == pytest.approx(total, rel=1e-6, abs=1e-6)
            assert set(plan.accelerators) == set(plan.allocation)


@pytest.mark.parametrize("seed", range(40))
def test_greedy_admits_the_most_jobs_on_rigid_multi_gpu_clusters(seed: int) -> None:
    """Rigid 1-8 GPU jobs on three small types: one-job moves get stuck (an 8-GPU job holds a
    type two 4-GPU jobs would share); the greedy's relocating moves find the most jobs the
    exact model admits, and never a plan better than its optimum."""
    inst = random_rigid_typed_instance(seed)
    exact = schedopt.solve(inst, "optimus-milp")
    plan = schedopt.solve(inst, "optimus-greedy")
    _strict_ok(inst, plan)
    assert plan.objective.admitted == exact.objective.admitted
    if exact.objective.admitted:
        assert plan.objective.value >= exact.objective.value * (1 - 1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_rigid_multi_gpu_exact_equals_bruteforce(seed: int) -> None:
    inst = random_rigid_typed_instance(seed, n_jobs=6)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    for solver in EXACT:
        plan = schedopt.solve(inst, solver)
        assert plan.objective.admitted == admitted
        if admitted:
            assert plan.objective.value == pytest.approx(total, rel=1e-6)


def test_greedy_is_within_one_percent_on_most_rigid_multi_gpu_instances() -> None:
    """Issue 50 §4's target on the hardest small family: 52 of seeds 0-59 within 1 % when
    written (the rest needed chains of moves through a third type); 37 before the relocating moves,
    13 of them admitting fewer jobs than the optimum; 59 before the chains, 60 with them."""
    within = 0
    for seed in range(60):
        inst = random_rigid_typed_instance(seed)
        exact = schedopt.solve(inst, "optimus-milp").objective
        plan = schedopt.solve(inst, "optimus-greedy").objective
        within += plan.admitted == exact.admitted and (not exact.admitted or plan.value <= exact.value * 1.01)
    assert within >= 60


@pytest.mark.parametrize("seed", range(40))
def test_greedy_stops_early_only_at_a_proven_optimum(seed: int) -> None:
    """The typed greedy stops trying candidates once one admits the most jobs and sits within the
    exact backends' gap of the LP bound: such a plan is the optimum (brute force) within that gap."""
    inst = random_typed_instance(seed, n_jobs=4)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    plan = schedopt.solve(inst, "optimus-greedy")
    _strict_ok(inst, plan)
    if "proven_at" in plan.metrics:
        assert plan.objective.admitted == admitted
        assert plan.objective.value <= total + 1e-7 * max(1.0, abs(total)) + 1e-9
        assert plan.objective.gap is not None and plan.objective.gap <= 1e-7


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("choice", ["aware", "blind"])
def test_greedy_never_beats_the_optimum_and_its_bound_holds(seed: int, choice: str) -> None:
    inst = random_typed_instance(seed)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    plan = schedopt.solve(inst, "optimus-greedy", accelerator_choice=choice)
    _strict_ok(inst, plan)
    assert plan.objective.admitted <= admitted
    if plan.objective.admitted == admitted and admitted > 0:
        assert plan.objective.value >= total - 1e-6 * max(1.0, total)
    if plan.objective.bound is not None:
        assert plan.objective.bound <= total + 1e-6 * max(1.0, total)


def test_type_aware_greedy_spreads_over_types() -> None:
    """Six jobs all fastest on V100 at one worker: choosing the fastest type at the
    minimum fills the 8 V100 GPUs and leaves 16 K80s idle; the LP-guided choice and
    the exact solvers use both (the same optimum here)."""
    jobs = [{"id": f"j{i}", "roles": {"worker": {"demand": {"cpu": 1, "gpu": 1}, "min": 1, "max": 8}},
             "speed_by_accelerator": {"v100": {"form": "amdahl", "serial": 0.02, "parallel": 1 / (4 + i)},
                                      "k80": {"form": "amdahl", "serial": 0.02, "parallel": 1 / (0.6 + 0.3 * i)}},
             "remaining_steps": 1000.0 * (1 + i)} for i in range(6)]
    inst = schedopt.Instance.from_dict({
        "name": "v100-k80", "resources": ["cpu", "gpu"], "jobs": jobs,
        "servers": [{"name": "v", "count": 2, "accelerator": "v100", "capacity": {"cpu": 8, "gpu": 4}},
                    {"name": "k", "count": 4, "accelerator": "k80", "capacity": {"cpu": 8, "gpu": 4}}]})
    exact = assert_checked(inst, schedopt.solve(inst, "optimus-milp"))
    aware = assert_checked(inst, schedopt.solve(inst, "optimus-greedy"))
    blind = assert_checked(inst, schedopt.solve(inst, "optimus-greedy", accelerator_choice="blind"))
    assert set(exact.accelerators.values()) == {"v100", "k80"}
    assert aware.objective.value == pytest.approx(exact.objective.value, rel=1e-9)
    assert blind.objective.value > 1.3 * exact.objective.value
    assert aware.metrics["utilization_by_accelerator"]["gpu@k80"] > 0.9


def test_forged_typed_plans_fail_check() -> None:
    inst = random_typed_instance(3, n_jobs=4)
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-milp"))
    job = next(iter(plan.allocation))
    wrong = plan.model_copy(deep=True)
    wrong.accelerators[job] = "a100"
    assert any(v.path == f"accelerators.{job}" for v in schedopt.check(inst, wrong))
    missing = plan.model_copy(deep=True)
    missing.accelerators = None
    assert any(v.path.startswith("accelerators.") for v in schedopt.check(inst, missing))
    forged = plan.model_copy(deep=True)
    forged.objective.bound = plan.objective.value * 1.01 + 1
    assert any("not proven" in v.message for v in schedopt.check(inst, forged))
    untyped = random_tiny_instance(1)
    plain = assert_checked(untyped, schedopt.solve(untyped, "optimus-greedy"))
    assert plain.accelerators is None
    plain.accelerators = {j: "v100" for j in plain.allocation}
    assert any(v.path == "accelerators" for v in schedopt.check(untyped, plain))


def test_over_capacity_on_one_type_fails_check() -> None:
    jobs = [{"id": f"j{i}", "roles": {"worker": {"demand": {"gpu": 1}, "min": 2, "max": 2}},
             "speed": {"form": "amdahl", "serial": 0.1, "parallel": 1.0}, "remaining_steps": 100.0} for i in range(2)]
    inst = schedopt.Instance.from_dict({"name": "two-types", "resources": ["gpu"], "jobs": jobs, "servers": [
        {"name": "a", "accelerator": "v100", "capacity": {"gpu": 2}},
        {"name": "b", "accelerator": "k80", "capacity": {"gpu": 2}}]})
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-cpsat"))
    assert sorted(plan.accelerators.values()) == ["k80", "v100"]
    both = plan.model_copy(deep=True)
    both.accelerators = {j: "v100" for j in both.allocation}
    assert [v.path for v in schedopt.check(inst, both)] == ["capacity.gpu@v100"]


def test_one_named_type_is_the_untyped_problem() -> None:
    """Naming the one type every server has changes nothing but the plan's types."""
    inst = schedopt.load_instance(Path(__file__).parent.parent / "instances" / "small-hand.yaml")
    data = inst.to_dict()
    for srv in data["servers"]:
        srv["accelerator"] = "v100"
    typed = schedopt.Instance.from_dict(data)
    for solver in ["optimus-milp", "optimus-cpsat", "optimus-greedy", "optimus-lagrange"]:
        a = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
        b = assert_checked(typed, schedopt.solve(typed, solver, seed=0))
        assert b.objective.admitted == a.objective.admitted
        if solver in EXACT:
            assert b.objective.value == pytest.approx(a.objective.value, rel=1e-7)
        assert set(b.accelerators.values()) <= {"v100"}


def test_typed_solves_are_deterministic_and_round_trip(tmp_path: Path) -> None:
    inst = random_typed_instance(5, n_jobs=4)
    for solver in ["optimus-greedy", "optimus-lagrange", *EXACT]:
        a, b = schedopt.solve(inst, solver, seed=1), schedopt.solve(inst, solver, seed=1)
        assert (a.allocation, a.accelerators) == (b.allocation, b.accelerators)
        for ext in ("yaml", "json"):
            path = tmp_path / f"{solver}.{ext}"
            schedopt.save_plan(a, path)
            again = assert_checked(inst, schedopt.load_plan(path))
            assert again.accelerators == a.accelerators


class _UntypedPlugin:
    """A plugin solver that declares no accelerator types (every built-in allocation solver does)."""

    problem = "allocation"

    def solve(self, instance, *, time_limit=None, seed=None):  # noqa: ANN001, ANN201
        raise AssertionError("a typed instance must be refused before the solver runs")


def test_solvers_without_types_refuse_typed_instances(tmp_path: Path) -> None:
    from schedopt import registry

    inst = random_typed_instance(2)
    registry.register_class("untyped-test-plugin", _UntypedPlugin)
    try:
        with pytest.raises(schedopt.InputError, match="does not model accelerator types"):
            schedopt.solve(inst, "untyped-test-plugin")
        path = tmp_path / "typed.yaml"
        schedopt.save_instance(inst, path)
        out = tmp_path / "plan.yaml"
        res = CliRunner().invoke(app, ["solve", str(path), "--solver", "untyped-test-plugin", "--out", str(out)])
    finally:
        registry._REGISTRY.pop("untyped-test-plugin", None)
    assert res.exit_code == 2 and not out.exists()
    assert "accelerator types" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("choice", ["blind", "aware"])
def test_dl2_runs_blind_to_types_as_dl2_is(seed: int, choice: str) -> None:
    """DL2 decides on the cluster as one type (its paper's cluster has one GPU type); its jobs
    then land on the first type with room (``aware``: the fastest with room): checked, never
    better than the optimum, each admitted job on a type it has a speed on."""
    inst = random_typed_instance(seed)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    plan = _strict_ok_plan(inst, schedopt.solve(inst, "dl2", accelerator_choice=choice))
    assert plan.metrics["accelerator_choice"] == choice
    assert plan.objective.admitted <= admitted
    if plan.objective.admitted == admitted and admitted:
        assert plan.objective.value >= total - 1e-6 * max(1.0, total)
    assert set(plan.accelerators) == set(plan.allocation)


def test_dl2_aware_lands_each_job_on_its_fastest_type_with_room() -> None:
    def job(i: str, v: float, k: float) -> dict:
        return {"id": i, "roles": {"worker": {"demand": {"gpu": 1.0}, "min": 1, "max": 1}}, "remaining_steps": 100.0,
                "speed_by_accelerator": {"v100": {"form": "table", "points": [[1, v]]},
                                         "k80": {"form": "table", "points": [[1, k]]}}}
    inst = schedopt.Instance.from_dict({
        "name": "two-types", "resources": ["gpu"],
        "servers": [{"name": "v", "accelerator": "v100", "capacity": {"gpu": 2.0}},
                    {"name": "k", "accelerator": "k80", "capacity": {"gpu": 2.0}}],
        "jobs": [job("a", 1.0, 3.0), job("b", 2.0, 1.0)]})
    blind = schedopt.solve(inst, "dl2")
    aware = schedopt.solve(inst, "dl2", accelerator_choice="aware")
    assert blind.accelerators == {"a": "v100", "b": "v100"}  # the first type with room, whatever the speed
    assert aware.accelerators == {"a": "k80", "b": "v100"}
    assert aware.objective.value < blind.objective.value
    with pytest.raises(schedopt.InputError, match="accelerator_choice"):
        schedopt.solve(inst, "dl2", accelerator_choice="fastest")


def test_a_job_without_speed_on_any_type_is_refused() -> None:
    with pytest.raises(schedopt.InputError, match=r"jobs\[0\]\.speed_by_accelerator\.v100\.form"):
        schedopt.Instance.from_dict({"name": "x", "resources": ["gpu"], "servers": [{"name": "a", "accelerator": "v100", "capacity": {"gpu": 1}}],
                                     "jobs": [{"id": "j", "roles": {"worker": {"demand": {"gpu": 1}}}, "remaining_steps": 1.0,
                                               "speed_by_accelerator": {"v100": {"form": "optimus-async", "theta": [1, 1, 1, 1]}}}]})


def test_time_limited_typed_exact_keeps_the_greedy_plan() -> None:
    inst = random_typed_instance(7, n_jobs=4)
    greedy = schedopt.solve(inst, "optimus-greedy")
    for solver in EXACT:
        plan = assert_checked(inst, schedopt.solve(inst, solver, time_limit=0.0, seed=0))
        assert plan.objective.admitted >= greedy.objective.admitted - 0  # never fewer than the greedy's first pass


def _gavel(jobs: int, servers: int, seed: int) -> schedopt.Instance:
    from schedopt.generate import generate_instance
    from tests.conftest import SHARED_DATA

    try:
        return generate_instance("gavel", jobs=jobs, servers=servers, seed=seed, data_dir=SHARED_DATA)
    except schedopt.InputError as exc:
        pytest.skip(f"needs ../shared/data (Gavel's measured throughputs, not redistributed): {str(exc).splitlines()[0]}")


def test_gavel_family_is_typed_rigid_and_measured() -> None:
    inst = _gavel(40, 9, 0)
    assert inst.accelerators == ["v100", "p100", "k80"] and inst.typed
    for job in inst.jobs:
        role = job.roles["worker"]
        assert role.min == role.max in (1, 2, 4, 8)
        assert job.speed is None and set(job.speed_by_accelerator) <= {"v100", "p100", "k80"}


@pytest.mark.parametrize("solver", ["gavel-max-sum-throughput", "gavel-las", "gavel-finish-time-fairness"])
def test_gavel_policies_give_checked_rounds_within_their_shares(solver: str) -> None:
    inst = _gavel(30, 9, 1)
    plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
    assert plan.allocation and set(plan.accelerators) == set(plan.allocation)
    shares = plan.metrics["time_shares"]
    for job_id, kind in plan.accelerators.items():  # a job runs only on a type its LP shares name
        assert shares[job_id].get(kind, 0.0) > 0
        assert all(0 <= x <= 1 + 1e-9 for x in shares[job_id].values()) and sum(shares[job_id].values()) <= 1 + 1e-6
    assert plan.metrics["policy_objective"] is not None


def test_gavel_las_gives_every_runnable_job_a_share() -> None:
    inst = _gavel(20, 9, 2)
    plan = schedopt.solve(inst, "gavel-las")
    runnable = {job.id for job in inst.jobs}
    assert plan.metrics["policy_objective"] > 0 and set(plan.metrics["time_shares"]) == runnable


def test_typed_simulation_runs_each_job_at_its_type_speed_and_aware_beats_blind() -> None:
    from schedopt.sim import simulate

    inst = _gavel(30, 9, 3)
    aware = simulate(inst, "optimus-greedy", interval_s=1800.0, check_plans=True)
    blind = simulate(inst, "optimus-greedy", options={"accelerator_choice": "blind"}, interval_s=1800.0, check_plans=True)
    gavel = simulate(inst, "gavel-las", interval_s=1800.0, check_plans=True)
    for result in (aware, blind, gavel):
        assert result.finished == len(inst.jobs) and result.check_violations == 0
    assert aware.avg_jct_s < blind.avg_jct_s


def test_typed_simulation_with_placement() -> None:
    """Placement takes accelerator types (issue 51 §3): a typed workload runs with a placement
    solver, every plan checked; online estimation still refuses types in one line."""
    from schedopt.sim import simulate

    from tests.test_typed_placement import typed_workload

    doc = typed_workload(8, 6, 2).to_dict()
    for job in doc["jobs"]:
        job["remaining_steps"] = 300.0  # minutes of work: jobs finish within the horizon
    inst = schedopt.Instance.from_dict(doc)
    for placement in ("optimus-placement", "placement-lagrange"):
        result = simulate(inst, "optimus-greedy", placement=placement, interval_s=3600.0, horizon_s=12 * 3600.0,
                          check_plans=True)
        assert result.finished + result.unfinished == len(inst.jobs) and result.check_violations == 0
        assert result.finished > 0
    with pytest.raises(schedopt.InputError, match="accelerator types"):
        simulate(random_typed_instance(1), "optimus-greedy", estimation="online")


@pytest.mark.parametrize("solver", ["drf", "tetris", "fifo", "srtf"])
@pytest.mark.parametrize("seed", range(6))
def test_baselines_stay_blind_to_types_and_check(solver: str, seed: int) -> None:
    """A published baseline decides as if the cluster had one type, then its jobs land
    on the first type with room: checked, never better than the optimum."""
    inst = random_typed_instance(seed)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    plan = _strict_ok_plan(inst, schedopt.solve(inst, solver))
    assert plan.objective.admitted <= admitted
    if plan.objective.admitted == admitted and admitted:
        assert plan.objective.value >= total - 1e-6 * max(1.0, total)
    if plan.allocation:
        assert set(plan.accelerators) == set(plan.allocation)


def _strict_ok_plan(instance: schedopt.Instance, plan: schedopt.Plan) -> schedopt.Plan:
    _strict_ok(instance, plan)
    return plan


def test_typed_sweep_keeps_options_apart(tmp_path: Path) -> None:
    """A sweep over the gavel family: the same solver with other options is another scheduler."""
    from tests.conftest import SHARED_DATA

    if not (SHARED_DATA / "measured" / "gavel_isolated_throughputs.json").is_file():
        pytest.skip("needs ../shared/data (Gavel's measured throughputs, not redistributed)")
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""schema: schedopt/sweep@1
name: gavel-tiny
kind: simulate
workloads: [{{family: gavel, jobs: 6, servers: 3}}]
schedulers:
  - {{name: optimus-greedy}}
  - {{name: optimus-greedy, options: {{accelerator_choice: blind}}}}
  - {{name: gavel-las}}
simulator: {{interval_s: 3600}}
data_dir: {SHARED_DATA}
""")
    res = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "out"), "--workers", "1"])
    assert res.exit_code == 0, res.output
    summary = (tmp_path / "out" / "summary.csv").read_text()
    assert "optimus-greedy (accelerator_choice=blind)" in summary and "gavel-las" in summary


def _spread_instance(factor: float) -> schedopt.Instance:
    jobs = [{"id": f"j{i}", "roles": {"worker": {"demand": {"gpu": 1}, "min": 1, "max": 8}},
             "speed": {"form": "amdahl", "serial": 0.01, "parallel": 1.0}, "remaining_steps": 1000.0,
             "spread": {"factor_per_server": factor}} for i in range(2)]
    return schedopt.Instance.from_dict({"name": "spread", "resources": ["gpu"], "jobs": jobs,
                                        "servers": [{"name": "s", "count": 4, "capacity": {"gpu": 4}}]})


def test_spread_slows_a_job_past_one_server_and_solvers_pack() -> None:
    """4-GPU servers: 5 workers span 2 servers, each beyond the first halving the speed."""
    inst = _spread_instance(0.5)
    speed = inst.speed_on(inst.jobs[0], None)
    steps = {int(p[0]): p[1] for p in speed.points}
    assert steps[5] == pytest.approx(0.5 / (0.01 + 1 / 5)) and steps[4] == pytest.approx(1 / (0.01 + 1 / 4))
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    for solver in ["optimus-greedy", *EXACT, "drf"]:
        plan = assert_checked(inst, schedopt.solve(inst, solver))
        assert plan.accelerators is None
        if solver != "drf":
            assert plan.allocation == {"j0": {"worker": 4}, "j1": {"worker": 4}}
            assert plan.objective.value == pytest.approx(total)
    no_penalty = schedopt.solve(_spread_instance(1.0), "optimus-milp")
    assert no_penalty.allocation["j0"]["worker"] + no_penalty.allocation["j1"]["worker"] == 16


def test_measured_spread_speeds_apply_past_one_server() -> None:
    """Issue 50 §5: a job's measured speed when spread (Gavel's unconsolidated throughputs) is its speed
    wherever its tasks span more than one server of a type; packed it runs at its own speed there.
    The exact solvers price it (against brute force), and a type without a measured spread speed
    keeps the factor (1 by default)."""
    packed = {"v100": {"form": "table", "points": [[4, 40.0], [8, 80.0]]},
              "k80": {"form": "table", "points": [[4, 10.0], [8, 20.0]]}}
    jobs = [{"id": f"j{i}", "roles": {"worker": {"demand": {"gpu": 1}, "min": 4, "max": 8}},
             "speed_by_accelerator": packed, "remaining_steps": 8000.0,
             "spread": {"speed_by_accelerator": {"v100": {"form": "table", "points": [[4, 40.0], [8, 30.0]]}}}}
            for i in range(2)]
    inst = schedopt.Instance.from_dict({"name": "measured-spread", "resources": ["gpu"], "jobs": jobs, "servers": [
        {"name": "v", "count": 2, "accelerator": "v100", "capacity": {"gpu": 4}},
        {"name": "k", "count": 2, "accelerator": "k80", "capacity": {"gpu": 4}}]})
    on_v100 = {int(p[0]): p[1] for p in inst.speed_on(inst.jobs[0], "v100").points}
    on_k80 = {int(p[0]): p[1] for p in inst.speed_on(inst.jobs[0], "k80").points}
    assert on_v100[4] == 40.0 and on_v100[8] == 30.0  # 8 GPUs span two 4-GPU servers: the measured 30
    assert on_k80[8] == 20.0  # no measured spread speed on k80: factor 1
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    for solver in EXACT:
        plan = assert_checked(inst, schedopt.solve(inst, solver))
        assert plan.objective.admitted == admitted and plan.objective.value == pytest.approx(total)
    plan = schedopt.solve(inst, "optimus-milp")
    assert sorted(plan.allocation[j]["worker"] for j in plan.allocation) == [4, 4]  # 8 spread is slower than 4 packed
    with pytest.raises(schedopt.InputError, match=r"spread.speed_by_accelerator.a100"):
        bad = inst.to_dict()
        bad["jobs"][0]["spread"]["speed_by_accelerator"]["a100"] = {"form": "table", "points": [[4, 1.0]]}
        schedopt.Instance.from_dict(bad)


def test_gavel_spread_family_is_gavel_with_measured_spread_speeds() -> None:
    from schedopt.generate import generate_instance
    from tests.conftest import SHARED_DATA

    plain = _gavel(200, 9, 0)  # skips without the data folder
    spread = generate_instance("gavel-spread", jobs=200, servers=9, seed=0, data_dir=SHARED_DATA)
    assert [j.id for j in plain.jobs] == [j.id for j in spread.jobs]
    wide = [j for j in spread.jobs if j.roles["worker"].max_count > 4]
    assert wide and all(j.spread is not None for j in wide)
    for job in wide:  # 8 GPUs on 4-GPU servers: Gavel's unconsolidated throughput
        v100 = {int(p[0]): p[1] for p in spread.speed_on(job, "v100").points}
        assert v100[8] == pytest.approx(job.spread.speed_by_accelerator["v100"].points[0][1])
    assert_checked(spread, schedopt.solve(spread, "optimus-greedy"))


@pytest.mark.parametrize(("seed", "objective"), [(102, None), (123, "jct_weighted_time"), (133, "jct_weighted_time")])
def test_heuristics_admit_the_most_jobs_where_it_takes_a_chain_or_the_count_stage(seed: int,
                                                                                  objective: str | None) -> None:
    """Found by a brute-force sweep (seeds 100-174): the optimum needs a chain of moves (seed 102: an
    8-GPU job on P100 once a 4-GPU job leaves it for K80, where a 1-GPU job leaves for V100), which
    _make_room now makes, and `optimus-lagrange`'s exact repair found the count but kept the plan
    (Σ t compared against no plan: NaN) or looked for it only among the configurations reduced-cost
    fixing keeps (valid among plans admitting no more). Both heuristics now admit the most."""
    inst = random_rigid_typed_instance(seed)
    if objective:
        inst = inst.with_objective(objective)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    for solver in ("optimus-greedy", "optimus-lagrange"):
        plan = assert_checked(inst, schedopt.solve(inst, solver))
        assert plan.objective.admitted == admitted, solver
        assert plan.objective.value >= total - 1e-6 * max(1.0, abs(total))


@pytest.mark.parametrize("seed", range(12))
def test_typed_lagrange_is_never_better_than_bruteforce_and_at_least_the_greedy(seed: int) -> None:
    """optimus-lagrange on a typed cluster starts from the type-aware greedy's plan and keeps it
    unless its priced allocation over those rows is better: never worse than the greedy, never
    better than the optimum, its bound below the optimum."""
    inst = random_typed_instance(seed)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    lag = assert_checked(inst, schedopt.solve(inst, "optimus-lagrange"))
    greedy = schedopt.solve(inst, "optimus-greedy")
    assert lag.objective.admitted == greedy.objective.admitted <= admitted
    if lag.objective.admitted == admitted and admitted:
        assert total - 1e-6 * total <= lag.objective.value <= greedy.objective.value + 1e-6 * greedy.objective.value
        if lag.objective.bound is not None:
            assert lag.objective.bound <= total + 1e-6 * total


def test_allocation_plan_takes_accelerators_on_typed_clusters() -> None:
    """Issue 49 §1: one plan builder for outside heuristics, typed or not; a typed plan rebuilt from its
    counts and types carries the same objective, checks, and a missing type is refused in one line."""
    from schedopt.allocation import allocation_plan
    from schedopt.errors import InputError
    from schedopt.testing.instances import random_quota_instance, random_typed_instance

    for inst in (random_typed_instance(3), random_quota_instance(3)):
        plan = schedopt.solve(inst, "optimus-greedy")
        again = allocation_plan(inst, plan.allocation, solver="outside", accelerators=plan.accelerators)
        assert not schedopt.check(inst, again)
        assert again.objective.value == pytest.approx(plan.objective.value) and again.paused == plan.paused
        if plan.allocation:
            with pytest.raises(InputError) as err:
                allocation_plan(inst, plan.allocation, solver="outside")
            assert "accelerators." in str(err.value) and "\n" not in str(err.value)


def test_a_typed_exact_solve_stopped_early_states_a_certified_bound() -> None:
    """Issue 49 §1: the typed driver, like the untyped one, returns the best plan with a bound its
    certificate proves when the limit stops it before its LP (it used to return none)."""
    inst = _gavel(60, 15, 2)  # skips, saying why, without ../shared/data
    plan = schedopt.solve(inst, "optimus-milp", time_limit=0)
    assert plan.status in (schedopt.Status.FEASIBLE, schedopt.Status.OPTIMAL) and plan.objective.bound is not None
    assert not schedopt.check(inst, plan)
    report = schedopt.checking.check_report(inst, plan)
    assert any("bound" in line for line in report.verified), report


def test_gavel_equal_share_follows_gavels_isolated_policy() -> None:
    """Issue 50: Gavel's X_eq splits the cluster over the M jobs, C_τ/(M·s_m) of each type (C_τ its
    workers), each row scaled to a time share of at most 1; schedopt's used 1/M of every type."""
    from schedopt.allocation.gavel import compile_gavel, equal_share_throughput

    def cluster(jobs: int, workers: int = 1) -> schedopt.Instance:
        speeds = {"v100": {"form": "amdahl", "serial": 0.0, "parallel": 1.0},
                  "k80": {"form": "amdahl", "serial": 0.0, "parallel": 4.0}}
        return schedopt.Instance.from_dict({
            "name": "gavel-eq", "resources": ["cpu", "gpu"],
            "servers": [{"name": "v", "accelerator": "v100", "count": 1, "capacity": {"cpu": 8, "gpu": 1}},
                        {"name": "k", "accelerator": "k80", "count": 1, "capacity": {"cpu": 8, "gpu": 4}}],
            "jobs": [{"id": f"j{i}", "roles": {"worker": {"demand": {"cpu": 1, "gpu": 1}, "min": workers, "max": workers}},
                      "remaining_steps": 100, "speed_by_accelerator": speeds} for i in range(jobs)]})

    crowded = compile_gavel(cluster(10))  # 10 jobs, 5 GPUs: 1/10 of the V100, 4/10 of the K80s each
    step = [1.0, 0.25]  # steps/s on v100, k80 at one worker
    assert equal_share_throughput(crowded)[0] == pytest.approx(step[0] * 0.1 + step[1] * 0.4)
    light = compile_gavel(cluster(2))  # 2 jobs: 1/2 and 4/2 exceed one time share, scaled to 1/5 and 4/5
    assert equal_share_throughput(light)[0] == pytest.approx(step[0] * 0.2 + step[1] * 0.8)
    wide = compile_gavel(cluster(2, workers=2))  # s_m = 2 workers: C_τ/(M·s_m) = 1/4 and 1, scaled to 1/5, 4/5
    assert equal_share_throughput(wide)[0] == pytest.approx(wide.T[0, 0] * 0.2 + wide.T[0, 1] * 0.8)


def _one_v100(jobs: int, received: dict[str, float] | None = None) -> schedopt.Instance:
    """``jobs`` one-GPU jobs, alike, on one V100: only one runs per round."""
    speeds = {"v100": {"form": "amdahl", "serial": 0.0, "parallel": 1.0}}
    return schedopt.Instance.from_dict({
        "name": "one-v100", "resources": ["gpu"],
        "servers": [{"name": "v", "accelerator": "v100", "capacity": {"gpu": 1}}],
        "jobs": [{"id": f"j{i}", "roles": {"worker": {"demand": {"gpu": 1}, "min": 1, "max": 1}}, "remaining_steps": 100,
                  "speed_by_accelerator": speeds, **({"received_s": {"v100": (received or {}).get(f"j{i}", 0.0)}}
                                                      if received else {})} for i in range(jobs)]})


def test_gavel_mechanism_with_history_serves_the_job_that_ran_least() -> None:
    """Issue 50 §2: Gavel's priorities divide X by the time each job ran on the type since the job set
    changed. Two alike jobs share the V100 (X = 1/2 each): stateless rounds always run j0; with history
    the one that ran less runs, and one that has not run comes first."""
    for solver in ("gavel-las", "gavel-max-sum-throughput", "gavel-finish-time-fairness"):
        fresh = _one_v100(2)
        assert set(schedopt.solve(fresh, solver).allocation) == set(schedopt.solve(fresh, solver, mechanism="stateless").allocation)
        ran = _one_v100(2, {"j0": 3600.0})
        if solver == "gavel-max-sum-throughput":
            continue  # its X need not split the V100 between alike jobs
        assert set(schedopt.solve(ran, solver, mechanism="stateless").allocation) == {"j0"}
        plan = schedopt.solve(ran, solver)
        assert set(plan.allocation) == {"j1"}, solver
        assert not schedopt.check(ran, plan)
        both = _one_v100(2, {"j0": 3600.0, "j1": 7200.0})
        assert set(schedopt.solve(both, solver).allocation) == {"j0"}, solver


def test_received_s_names_types_of_the_cluster() -> None:
    doc = _one_v100(1).to_dict()
    doc["jobs"][0]["received_s"] = {"k80": 60.0}
    with pytest.raises(schedopt.InputError, match=r"jobs\[0\]\.received_s\.k80"):
        schedopt.Instance.from_dict(doc)
    with pytest.raises(schedopt.InputError, match="mechanism"):
        schedopt.solve(_one_v100(1), "gavel-las", mechanism="fifo")


def test_simulator_keeps_gavels_history_and_resets_it_when_jobs_come_or_go() -> None:
    """Each view carries the seconds each job ran per type since the active set last changed."""
    from schedopt.sim import simulate

    doc = _one_v100(3).to_dict()
    doc["jobs"][2]["arrival"] = 7200.0  # joins at the third round: the history restarts
    for job in doc["jobs"]:
        job["remaining_steps"] = 36_000.0  # ten hours alone
    seen: list[dict[str, dict[str, float]]] = []
    simulate(schedopt.Instance.from_dict(doc), "gavel-las", seed=0, interval_s=3600.0,
             observer=lambda t, view, plan, reward: seen.append({j.id: dict(j.received_s or {}) for j in view.jobs}))
    assert seen[0] == {"j0": {}, "j1": {}}
    assert seen[1] == {"j0": {"v100": 3600.0}, "j1": {}}  # j0 ran the first round; j1 comes first now
    assert seen[2] == {"j0": {}, "j1": {}, "j2": {}}  # j2 arrived: reset
    assert sum(bool(r) for r in seen[3].values()) == 1


@pytest.mark.parametrize("solver", ["drf", "tetris", "fifo", "srtf", "dl2"])
def test_type_blind_solvers_take_instances_carrying_gavels_history(solver: str) -> None:
    """The simulator keeps Gavel's per-type history (``received_s``) on every job; a solver blind
    to types sees the cluster as one type and must drop it with the types (it named a type of
    the erased cluster and was refused, which stopped typed simulations of these solvers)."""
    inst = _one_v100(2, {"j0": 3600.0})
    plan = _strict_ok_plan(inst, schedopt.solve(inst, solver))
    assert len(plan.allocation) == 1


def test_making_room_moves_admitted_jobs_to_other_types_within_capacity() -> None:
    """typed._make_room, asked to fit a paused job's row next to a plan: when it answers, every move
    takes an admitted job to its own row on another type, none twice and none held in place, at
    most RELOCATE_DEPTH; the slack it returns is the capacity the moved plan and the newcomer leave
    (recomputed), with no row short; its Σ t added is the moves' own. A table built beforehand
    (_MoveTable) gives the same answers as one built per call."""
    import numpy as np

    from schedopt.allocation.model import compile_typed
    from schedopt.allocation.typed import (RELOCATE_DEPTH, _admitted_rows, _free_after, _make_room, _MoveTable,
                                           typed_admission)

    answered = moved = 0
    for seed in range(60):
        model = compile_typed(random_rigid_typed_instance(seed))
        _, feasible, use, t_min = model.minimum
        config = typed_admission(model)
        if not config:
            continue
        row_of_job = {int(model.job[v]): v for v in config}
        admitted, rows = _admitted_rows(row_of_job)
        free = _free_after(model, config)
        table = _MoveTable(model, rows)
        held = np.zeros(len(rows), dtype=bool)
        held[::3] = True  # some jobs may not move
        for u in np.flatnonzero(feasible).tolist():
            if int(model.job[u]) in row_of_job:
                continue
            got = _make_room(model, rows, free - use[u], held, table)
            assert repr(got) == repr(_make_room(model, rows, free - use[u], held))
            if got is None:
                continue
            answered += 1
            added, moves, slack = got
            moved += bool(moves)
            assert len(moves) <= RELOCATE_DEPTH
            positions = [p for p, _ in moves]
            assert len(set(positions)) == len(positions) and not held[positions].any()
            new_rows = rows.copy()
            for p, w in moves:
                assert model.job[w] == model.job[rows[p]] and model.kind[w] != model.kind[rows[p]]
                new_rows[p] = w
            recomputed = _free_after(model, {int(v): (0, 0) for v in new_rows}) - use[u]
            assert np.allclose(slack, recomputed) and (slack >= 0).all()
            assert added == pytest.approx(float(t_min[new_rows].sum() - t_min[rows].sum()))
    assert answered >= 10 and moved >= 3, (answered, moved)


def test_exchange_grouped_by_rows_used_makes_the_same_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exchange's swap test over admitted jobs grouped by the rows they use (only a job using
    every row a paused row is short on can make room for it) gives the plans the test over every
    admitted job gives, on rigid multi-GPU, mixed and quota instances."""
    from schedopt.allocation import typed
    from schedopt.allocation.model import compile_model
    from schedopt.testing import random_quota_instance

    instances = ([random_rigid_typed_instance(s) for s in range(12)] + [random_typed_instance(s) for s in range(8)]
                 + [random_quota_instance(s) for s in range(8)])
    for inst in instances:
        plans = []
        for above in (10**9, 0):  # one group of every admitted job; grouped from the first
            monkeypatch.setattr(typed, "SWAP_GROUPS_ABOVE", above)
            data = compile_model(inst)
            start = typed.typed_admission(data, "aware", exchange=False)
            plans.append(typed._exchange(data, start, typed._free_after(data, start)))
        assert plans[0] == plans[1]


@pytest.mark.parametrize("seed", range(6))
def test_priced_terms_bound_every_plan(seed: int) -> None:
    """``typed._PricedCosts``, which rules out relocating swaps: for every feasible plan of a small
    rigid multi-GPU instance admitting at least the LP's count (enumerated), Σ t − L is at least the
    plan's enter terms plus its paused jobs' pause terms, each of them >= 0."""
    import itertools

    import numpy as np

    from schedopt.allocation import typed
    from schedopt.allocation.model import compile_model, lp_bound
    from schedopt.tolerances import capacity_limit

    inst = random_rigid_typed_instance(seed, n_jobs=6)
    data = compile_model(inst)
    start = typed.typed_admission(data, "aware")
    admit = None if len(start) == data.J else len(start)
    _, cs, _ = data.choices
    priced = typed._PricedCosts(data, lp_bound(data, cs, admit=admit))
    _, feasible, use, t_min = data.minimum
    options = [[-1] + [v for v in range(int(data.job_start[j]), int(data.job_start[j + 1])) if feasible[v]]
               for j in range(data.J)]
    assert np.all(priced.enter[np.isfinite(priced.enter)] >= -1e-6)
    assert np.all(priced.pause >= -1e-6)
    checked = 0
    for pick in itertools.product(*options):
        rows = [v for v in pick if v >= 0]
        if len(rows) < (data.J if admit is None else admit):
            continue
        if rows and np.any(use[rows].sum(axis=0) > capacity_limit(data.rows.cap)):
            continue
        terms = sum(priced.enter[v] for v in rows) + sum(priced.pause[j] for j, v in enumerate(pick) if v < 0)
        assert float(t_min[rows].sum()) - priced.bound >= terms - 1e-6 * max(1.0, priced.bound)
        checked += 1
    assert checked > 0
