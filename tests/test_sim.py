"""The simulator: conservation, arrivals, determinism, checked plans, estimation
errors, workloads and the ``simulate`` verb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import schedopt
from schedopt.cli import app
from schedopt.generate import generate_instance
from schedopt.sim import simulate
from schedopt.sim.result import load_results
from tests.conftest import SHARED_DATA, make_instance

runner = CliRunner()
LINEAR = {"form": "amdahl", "serial": 0.0, "parallel": 1.0}  # f(n) = n steps/s


def fixed_job(job_id: str, steps: float, arrival: float = 0.0, n: int = 2) -> dict:
    """One role pinned to n tasks (min = max = n) at f(n) = n steps/s."""
    return {"id": job_id, "arrival": arrival, "roles": {"worker": {"demand": {"cpu": 1}, "min": n, "max": n}},
            "speed": LINEAR, "remaining_steps": steps}


@pytest.mark.parametrize("overhead", [0.0, 60.0])
def test_conservation_one_job(overhead: float) -> None:
    """One job with a fixed allocation: completion = start + overhead + steps / speed,
    even across several intervals (no overhead again while the configuration stays)."""
    inst = make_instance([fixed_job("j", 5000.0)], {"cpu": 4})
    r = simulate(inst, "optimus-greedy", interval_s=600, restart_overhead_s=overhead, check_plans=True)
    assert r.jobs["j"].completion_s == pytest.approx(overhead + 5000.0 / 2)
    assert r.avg_jct_s == pytest.approx(overhead + 2500.0) and r.makespan_s == pytest.approx(overhead + 2500.0)
    assert r.check_violations == 0


def test_arrival_waits_for_the_next_tick_and_never_finishes_early() -> None:
    inst = make_instance([fixed_job("a", 100.0, arrival=50.0), fixed_job("b", 10.0, arrival=1300.0)], {"cpu": 4})
    r = simulate(inst, "drf", interval_s=600, restart_overhead_s=0.0, check_plans=True)
    assert r.jobs["a"].completion_s == pytest.approx(600 + 50.0)
    assert r.jobs["b"].completion_s == pytest.approx(1800 + 5.0)
    for o in r.jobs.values():
        assert o.completion_s >= o.arrival_s


def test_paused_jobs_wait_and_restart_costs_overhead() -> None:
    """Two jobs needing the whole cluster: the second runs after the first, paying its own start overhead."""
    inst = make_instance([fixed_job("a", 2400.0, n=4), fixed_job("b", 2400.0, n=4)], {"cpu": 4})
    r = simulate(inst, "fifo", interval_s=600, restart_overhead_s=30.0, check_plans=True)
    first, second = sorted(o.completion_s for o in r.jobs.values())
    assert first == pytest.approx(30 + 600)
    assert second == pytest.approx(1200 + 30 + 600)
    assert r.finished == 2 and r.check_violations == 0


@pytest.mark.parametrize("scheduler", ["optimus-greedy", "drf", "tetris", "fifo", "srtf"])
def test_every_plan_checks_and_runs_are_deterministic(scheduler: str) -> None:
    wl = generate_instance("optimus-workload", jobs=12, servers=6, seed=3, max_tasks=8)
    a = simulate(wl, scheduler, seed=5, check_plans=True)
    b = simulate(wl, scheduler, seed=5)
    assert a.check_violations == 0, a.first_violation
    assert a.jobs == b.jobs and a.avg_jct_s == b.avg_jct_s
    assert a.unfinished == 0 and all(o.completion_s > o.arrival_s for o in a.jobs.values())


def test_the_simulator_asks_for_no_bound_and_no_proof_search() -> None:
    """Certified bounds and the branch-certificate search change no plan: the simulator turns both
    off (``bound``, ``branch_proof``) unless the caller sets them, for heuristics and exact solvers."""
    wl = generate_instance("optimus-workload", jobs=6, servers=4, seed=3, max_tasks=4)
    seen: list[dict] = []
    for scheduler in ("optimus-milp", "optimus-lagrange"):
        simulate(wl, scheduler, seed=5, observer=lambda t, view, plan, reward: seen.append(plan.options))
        assert seen and seen[-1]["branch_proof"] is False
    assert seen[-1]["bound"] is False
    simulate(wl, "optimus-milp", seed=5, options={"branch_proof": True},
             observer=lambda t, view, plan, reward: seen.append(plan.options))
    assert seen[-1]["branch_proof"] is True


def test_joint_scheduler_with_placement_checks() -> None:
    wl = generate_instance("optimus-workload", jobs=10, servers=6, seed=4, max_tasks=8)
    r = simulate(wl, "optimus-greedy", placement="optimus-placement", check_plans=True)
    assert r.check_violations == 0, r.first_violation
    assert r.placement == "optimus-placement" and r.finished == 10


def test_estimation_errors_change_decisions_not_the_truth() -> None:
    wl = generate_instance("optimus-workload", jobs=15, servers=6, seed=2, max_tasks=8)
    exact = simulate(wl, "optimus-greedy")
    noisy = simulate(wl, "optimus-greedy", error_steps=0.5, error_speed=0.3, seed=1)
    assert noisy.finished == exact.finished == 15
    assert noisy.error_steps == 0.5 and noisy.jobs != exact.jobs


def test_horizon_leaves_jobs_unfinished() -> None:
    inst = make_instance([fixed_job("j", 10_000.0)], {"cpu": 4})
    r = simulate(inst, "optimus-greedy", horizon_s=1200)
    assert r.jobs["j"].completion_s is None and r.unfinished == 1 and r.makespan_s is None


def test_bad_workload_is_an_input_error() -> None:
    inst = make_instance([{"id": "j", "roles": {"worker": {"demand": {"cpu": 1}}}}], {"cpu": 4})
    with pytest.raises(schedopt.InputError, match=r"jobs\[0\].speed"):
        simulate(inst, "drf")
    with pytest.raises(schedopt.InputError, match="allocation solver"):
        simulate(make_instance([fixed_job("j", 1.0)], {"cpu": 4}), "optimus-placement")


def test_cli_simulate_compare_writes_results_and_figures(tmp_path: Path) -> None:
    wl = tmp_path / "wl.yaml"
    assert runner.invoke(app, ["generate", "poisson", "--jobs", "8", "--servers", "6", "--max-tasks", "6",
                               "--out", str(wl)]).exit_code == 0
    out = tmp_path / "r.yaml"
    figs = tmp_path / "figs" / "new"  # created when absent
    r = runner.invoke(app, ["simulate", str(wl), "--compare", "optimus-greedy,drf", "--out", str(out), "--plot", str(figs)])
    assert r.exit_code == 0, r.output
    results = load_results(out)  # --out writes exactly the file it names, holding both results
    assert [res.scheduler for res in results] == ["optimus-greedy", "drf"]
    assert results[1].finished == 8 and sorted(p.name for p in tmp_path.iterdir()) == ["figs", "r.yaml", "wl.yaml"]
    assert (figs / "jct_cdf.png").stat().st_size > 0 and (figs / "utilization.png").exists()


def test_cli_simulate_json_on_standard_output(tmp_path: Path) -> None:
    wl = tmp_path / "wl.yaml"
    runner.invoke(app, ["generate", "poisson", "--jobs", "4", "--servers", "4", "--out", str(wl)])
    r = runner.invoke(app, ["simulate", str(wl), "--scheduler", "drf", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["schema"] == "schedopt/simulation@1" and doc["scheduler"] == "drf"


def test_cli_simulate_bad_input_exits_2(tmp_path: Path) -> None:
    wl = tmp_path / "wl.yaml"
    runner.invoke(app, ["generate", "poisson", "--jobs", "3", "--servers", "3", "--out", str(wl)])
    out = tmp_path / "r.yaml"
    for args in (["--scheduler", "nope"], ["--scheduler", "drf", "--interval", "0"], []):
        r = runner.invoke(app, ["simulate", str(wl), *args, "--out", str(out)])
        assert r.exit_code == 2 and not out.exists(), r.output
        assert "Traceback" not in r.output


@pytest.mark.skipif(not (SHARED_DATA / "traces").is_dir(), reason="needs ../shared/data/traces (real traces are not in the repo)")
@pytest.mark.parametrize("family", ["philly", "dl2", "dl2-fitted"])
def test_trace_workloads(family: str) -> None:
    wl = generate_instance(family, jobs=10, servers=8, seed=0, max_tasks=8)
    assert all(j.remaining_steps > 0 for j in wl.jobs)
    r = simulate(wl, "optimus-greedy", check_plans=True)
    assert r.check_violations == 0, r.first_violation
    assert r.finished == 10
