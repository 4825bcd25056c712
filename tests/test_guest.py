"""A good guest in its users' environments (issue 40): optional CP-SAT, the
inputs a host scheduler naturally passes, warm-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import schedopt
from schedopt.backends import deps
from schedopt.backends.deps import MissingDependencyError
from schedopt.cli import app
from schedopt.generate import generate_instance

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "instances" / "small-hand.yaml")
EXACT = ["optimus-milp", "optimus-cpsat"]


def test_integer_job_ids_are_read_as_text() -> None:
    data = schedopt.load_instance(SMALL).to_dict()
    for k, job in enumerate(data["jobs"]):
        job["id"] = 100 + k
    inst = schedopt.Instance.from_dict(data)
    plan = schedopt.solve(inst, "optimus-greedy")
    assert set(plan.allocation) | set(plan.paused) == {str(100 + k) for k in range(len(data["jobs"]))}
    assert schedopt.check(inst, plan) == []


def _table_job(job_id: str, points: list[list[float]]) -> dict:
    return {"id": job_id, "roles": {"worker": {"demand": {"cpu": 1}, "min": 1, "max": 4}},
            "speed": {"form": "table", "points": points}, "remaining_steps": 1000}


def test_speed_zero_means_cannot_run() -> None:
    inst = schedopt.Instance.from_dict({
        "schema": "schedopt/instance@1", "name": "zeros", "resources": ["cpu"],
        "servers": [{"name": "s", "capacity": {"cpu": 8}}],
        "jobs": [_table_job("a", [[1, 1.0], [2, 0.0], [4, 3.0]]), _table_job("never", [[1, 0.0], [2, 0.0]])]})
    for solver in ["optimus-greedy", "optimus-milp", "drf"]:
        plan = schedopt.solve(inst, solver)
        assert plan.paused == ["never"], solver  # a job whose every speed is 0 cannot run
        assert plan.allocation["a"]["worker"] in (1, 4)  # never the configuration measured at 0
        assert schedopt.check(inst, plan) == []


@pytest.mark.parametrize("solver", EXACT + ["slaq-milp", "dorm-milp", "placement-milp", "optimus-greedy"])
def test_time_limit_zero_gives_the_best_plan_now(solver: str) -> None:
    problem = schedopt.solver_info(solver).problem
    family = {"allocation": "optimus", "quality": "slaq", "partition": "dorm-table2", "placement": "placement"}[problem]
    inst = generate_instance(family, jobs=30, servers=20, seed=1, max_tasks=4)
    plan = schedopt.solve(inst, solver, time_limit=0)
    assert plan.has_solution, plan.message
    assert schedopt.check(inst, plan) == []


def test_negative_time_limit_is_refused() -> None:
    with pytest.raises(schedopt.InputError, match=">= 0"):
        schedopt.solve(SMALL, "optimus-milp", time_limit=-1)


def test_cpsat_without_ortools_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deps, "why_unavailable",
                        lambda req: "ortools is not installed (pip install 'schedopt[cpsat]')" if req == "ortools" else None)
    with pytest.raises(MissingDependencyError, match=r"schedopt\[cpsat\]"):
        schedopt.get_solver("optimus-cpsat")
    assert schedopt.get_solver("optimus-milp") is not None  # HiGHS solvers are unaffected
    assert schedopt.solver_info("optimus-cpsat").unavailable is not None
    res = CliRunner().invoke(app, ["solve", SMALL, "--solver", "optimus-cpsat"])
    assert res.exit_code == 2 and "schedopt[cpsat]" in res.output and "Traceback" not in res.output
    listing = CliRunner().invoke(app, ["solvers", "--format", "json"])
    rows = {r["name"]: r for r in json.loads(listing.output)}
    assert rows["optimus-cpsat"]["available"] is False and rows["optimus-milp"]["available"] is True


def test_highspy_version_clash_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    versions = {"highspy": "1.15.1", "ortools": "9.15.6755"}
    monkeypatch.setattr(deps, "_installed", lambda dist: versions.get(dist))
    assert "cannot load in one process" in (deps.clash() or "")


def test_warm_up_pays_first_calls() -> None:
    spent = schedopt.warm_up(["optimus-greedy", "optimus-milp"])
    assert set(spent) == {"optimus-greedy", "optimus-milp"} and all(s >= 0 for s in spent.values())


@pytest.mark.parametrize("solver, backend", [("optimus-milp", "HighsBackend"), ("optimus-cpsat", "CpSatBackend")])
def test_warm_up_runs_an_exact_solvers_backend_model(solver: str, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny instances' solves end at their LP bound (or size classes) without a model, so an exact
    solver's ``warm_up()`` builds and solves its backend's stage model once: without it the first
    solve that needs one paid Pyomo's import (2.5 s: 4,000 typed jobs seed 33 took 3.7 s, then 0.6)."""
    from schedopt.allocation import cpsat, milp

    cls = {"HighsBackend": milp.HighsBackend, "CpSatBackend": cpsat.CpSatBackend}[backend]
    calls: list[str] = []
    original = cls.solve_stage

    def spy(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(kwargs.get("stage", ""))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "solve_stage", spy)
    schedopt.warm_up([solver])
    assert calls and calls[-1] == "time"


def test_warm_up_also_solves_a_typed_instance_for_typed_solvers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50 §4: the typed code paths are their own, so a solver that solves typed clusters is
    warmed on a tiny typed instance too (the first typed call after warm_up then costs what the
    next does: `benchmarks/bench_typed.py --only latency`); one that does not, on the untyped only."""
    from schedopt.allocation.solvers import OptimusGreedy
    from schedopt.placement.paa import Paa

    seen: list[tuple[str, bool]] = []
    for cls in (OptimusGreedy, Paa):
        original = cls.solve

        def spy(self, instance, *, time_limit=None, seed=None, _original=original):  # type: ignore[no-untyped-def]
            seen.append((self.name, instance.has_types))
            return _original(self, instance, time_limit=time_limit, seed=seed)

        monkeypatch.setattr(cls, "solve", spy)
    schedopt.warm_up(["optimus-greedy", "paa"])
    assert seen == [("optimus-greedy", False), ("optimus-greedy", True), ("paa", False)]


def test_warm_up_on_a_hosts_instance_solves_it_with_the_solvers_that_model_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50 §4 (first call as fast as the next): ``warm_up(instance=...)`` also solves the host's own
    instance with each named solver of its problem that models it, so its speed tables' grids are built
    (and shared with later instances listing the same points); a solver of another problem is warmed
    on its tiny instance only."""
    from schedopt import speed
    from schedopt.allocation.solvers import OptimusGreedy
    from schedopt.allocation.baselines import Drf
    from schedopt.placement.paa import Paa
    from schedopt.testing import random_typed_instance

    host = random_typed_instance(3)
    assert any(j.speed_by_accelerator for j in host.jobs)
    seen: list[tuple[str, str]] = []
    for cls in (OptimusGreedy, Drf, Paa):
        original = cls.solve

        def spy(self, instance, *, time_limit=None, seed=None, _original=original):  # type: ignore[no-untyped-def]
            seen.append((self.name, instance.name))
            return _original(self, instance, time_limit=time_limit, seed=seed)

        monkeypatch.setattr(cls, "solve", spy)
    monkeypatch.setattr(speed, "_SHARED_GRIDS", {})
    spent = schedopt.warm_up(["optimus-greedy", "drf", "paa"], instance=host)
    assert set(spent) == {"optimus-greedy", "drf", "paa"}
    assert {who for who, name in seen if name == host.name} == {"optimus-greedy", "drf"}, seen
    assert ("paa", host.name) not in seen and any(who == "paa" for who, _ in seen)
    tables = [s for j in host.jobs for s in (j.speed_by_accelerator or {}).values() if getattr(s, "measured", False)]
    assert all((s.interpolate, tuple(map(tuple, s.points))) in speed._SHARED_GRIDS for s in tables
               if len(s.points) <= speed.SHARED_GRID_POINTS)


HOST_PACKAGES = ["cvxpy==1.9.*", "highspy>=1.14", "protobuf>=7", "grpcio-tools"]


@pytest.mark.slow
def test_host_matrix_installs_beside_cvxpy_latest_highspy_and_protobuf_7(tmp_path: Path) -> None:
    """A fresh environment holding cvxpy 1.9, the latest highspy and protobuf 7:
    installing schedopt downgrades nothing, the HiGHS solvers pass their contract
    checks, the README's allocation commands run and CP-SAT says which extra it needs."""
    venv = tmp_path / "host"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")

    def pip(*args: str) -> None:
        res = subprocess.run([py, "-m", "pip", "install", "-q", *args], capture_output=True, text=True, timeout=1200)
        assert res.returncode == 0, res.stderr[-2000:]

    def freeze() -> dict[str, str]:
        out = subprocess.run([py, "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
        return dict(line.split("==", 1) for line in out.splitlines() if "==" in line)

    pip(*HOST_PACKAGES)
    before = freeze()
    pip(f"{ROOT}[testing]")
    after = freeze()
    changed = {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v}
    assert not changed, f"installing schedopt changed the host's packages: {changed}"
    assert after["protobuf"].startswith("7.")
    script = (
        "from schedopt.testing import check_solver\n"
        "for s in ['optimus-milp', 'optimus-greedy', 'slaq-milp', 'dorm-milp', 'placement-milp']:\n"
        "    check_solver(s)\n"
        "print('contract ok')\n")
    env = {**os.environ, "PYTHONPATH": ""}
    res = subprocess.run([py, "-c", script], capture_output=True, text=True, timeout=1800, cwd=tmp_path, env=env)
    assert res.returncode == 0 and "contract ok" in res.stdout, res.stdout[-2000:] + res.stderr[-2000:]
    cli = str(venv / "bin" / "schedopt")
    plan = tmp_path / "plan.yaml"
    for args in (["solve", str(ROOT / "instances/optimus-testbed.yaml"), "--solver", "optimus-milp", "--out", str(plan)],
                 ["check", str(ROOT / "instances/optimus-testbed.yaml"), str(plan)],
                 ["compare", str(ROOT / "instances/optimus-100.yaml"), "--solvers", "optimus-greedy,optimus-milp"]):
        res = subprocess.run([cli, *args], capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
        assert res.returncode == 0, (args, res.stdout[-1000:], res.stderr[-1000:])
    res = subprocess.run([cli, "solve", str(ROOT / "instances/optimus-testbed.yaml"), "--solver", "optimus-cpsat"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert res.returncode == 2 and "schedopt[cpsat]" in res.stderr + res.stdout


HOST_RAN_HIGHS_FIRST = """
import json, sys
import highspy
h = highspy.Highs()  # the host's own HiGHS run, at its default thread count, before schedopt's
h.setOptionValue("output_flag", False)
h.setOptionValue("threads", {host_threads})
x = h.addVariable(lb=0, ub=4)
h.addConstr(x <= 3)
h.maximize(x)
import schedopt
inst = schedopt.load_instance({path!r})
out = {{}}
for solver in ("optimus-greedy", "optimus-lagrange", "optimus-milp", "slaq-milp", "dorm-milp"):
    problem = schedopt.solver_info(solver).problem
    if problem != "allocation":
        from schedopt.generate import generate_instance
        fam = {{"quality": "slaq", "partition": "dorm-table2"}}[problem]
        plan = schedopt.solve(generate_instance(fam, jobs=8, servers=6, seed=1, max_tasks=4), solver, seed=0)
    else:
        plan = schedopt.solve(inst, solver, seed=0)
    out[solver] = [plan.status.value, plan.objective.value, plan.objective.bound]
print(json.dumps(out))
"""


@pytest.mark.parametrize("host_threads", [0, 2])
def test_a_host_that_ran_highs_first_at_another_thread_count(host_threads: int) -> None:
    """HiGHS keeps one thread scheduler per process, made by its first run; a later run asking
    another count fails before it starts ("Not Set"). A host that ran HiGHS first (its default
    count, or 2) must not turn schedopt's LP bounds into an exception or its exact solves into
    errors: each process's plans are those of a process where schedopt ran first."""
    runs = {}
    for threads in (host_threads, 1):  # 1: the count schedopt asks for, as when it runs first
        code = HOST_RAN_HIGHS_FIRST.format(host_threads=threads, path=SMALL)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        runs[threads] = json.loads(done.stdout.strip().splitlines()[-1])
    hosted, alone = runs[host_threads], runs[1]
    for solver, (status, value, bound) in hosted.items():
        assert status in ("optimal", "heuristic"), (solver, status)
        assert value == pytest.approx(alone[solver][1], rel=1e-9), solver
        assert bound is not None, solver
