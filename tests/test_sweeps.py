"""Sweeps (schedopt/sweeps, ``schedopt sweep``): the same table on Ray and in
process, resumable from the cache, failing cells recorded, Ctrl-C leaves a
consistent folder, solve sweeps, bad specs, and Ray imported only by sweeps."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import schedopt
from schedopt.cli import app
from schedopt.sweeps import engine, sweep
from schedopt.sweeps.cells import TIMING_COLUMNS
from tests.conftest import ROOT

runner = CliRunner()
HAS_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAS_RAY, reason="Ray is not installed (optional extra schedopt[ray]; make install installs it)")

SPEC: dict[str, Any] = {
    "schema": "schedopt/sweep@1", "name": "t", "kind": "simulate",
    "workloads": [{"family": "optimus-workload", "jobs": 6, "servers": 4}],
    "seeds": [0, 1], "loads": [1.0, 2.0],
    "schedulers": [{"name": "optimus-greedy"}, {"name": "drf"}],
}


def deterministic(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rows]


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path) as fh:
        return list(csv.DictReader(fh))


def test_in_process_table_rows_and_summary(tmp_path: Path) -> None:
    table = sweep(SPEC, tmp_path, workers=1)
    assert len(table.rows) == 8 and not table.failed
    first = table.rows[0]
    assert {"workload", "seed", "load", "scheduler", "avg_jct_s", "makespan_s", "restarts", "cell_seconds"} <= set(first)
    assert first["finished"] == first["jobs"] == 6
    summary = table.summary
    assert len(summary) == 4 and all(s["seeds"] == 2 for s in summary)
    for name in ("results.csv", "results.json", "summary.csv", "summary.json", "jct_makespan_vs_load.png"):
        assert (tmp_path / name).is_file(), name
    assert len(read_csv(tmp_path / "results.csv")) == 8
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["schema"] == "schedopt/sweep-results@1" and len(doc["rows"]) == 8


def test_load_factor_compresses_arrivals() -> None:
    spec = {**SPEC, "seeds": [0], "schedulers": [{"name": "fifo"}], "loads": [1.0, 4.0]}
    rows = {r["load"]: r for r in sweep(spec, workers=1).rows}
    assert rows[4.0]["makespan_s"] < rows[1.0]["makespan_s"]  # arrivals 4× as fast: everything ends sooner


@needs_ray
def test_ray_and_in_process_give_the_identical_table(tmp_path: Path) -> None:
    local = sweep(SPEC, tmp_path / "local", workers=1)
    on_ray = sweep(SPEC, tmp_path / "ray", workers=2)
    assert deterministic(on_ray.rows) == deterministic(local.rows)
    nodes = engine.CellCache(tmp_path / "ray").nodes()
    assert len(nodes) == 8 and all(nodes.values())  # every cell ran as a Ray task


def test_rerun_computes_only_missing_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sweep(SPEC, tmp_path, workers=1)
    cells = sorted((tmp_path / "cells").glob("*.json"))
    assert len(cells) == 8
    cells[3].unlink()
    ran: list[str] = []
    real = engine.run_cell
    monkeypatch.setattr(engine, "run_cell", lambda cell: ran.append(cell["key"]) or real(cell))
    table = sweep(SPEC, tmp_path, workers=1)
    assert len(ran) == 1 and len(table.rows) == 8


class _FailsAtRunTime:
    """A scheduler that raises in every cell (the sweep records it and goes on)."""

    def solve(self, instance, *, time_limit=None, seed=None):  # type: ignore[no-untyped-def]
        raise RuntimeError("broke on purpose")


@pytest.fixture
def failing_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fails-at-run-time`` registered for this test only."""
    from schedopt import registry

    registry.solvers()  # the built-in registry first
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    schedopt.register("fails-at-run-time", problem="allocation", exact=False, backend="python")(_FailsAtRunTime)


def test_a_failing_cell_is_recorded_and_the_rest_go_on(tmp_path: Path, failing_scheduler: None) -> None:
    spec = {**SPEC, "seeds": [0], "loads": [1.0], "schedulers": [{"name": "drf"}, {"name": "tetris"}]}
    spec["workloads"] = [{"family": "optimus-workload", "jobs": 4, "servers": 3}, {"file": "missing.yaml"}]
    res = runner.invoke(app, ["sweep", _write(tmp_path, spec), "--out", str(tmp_path / "o"), "--workers", "1"])
    assert res.exit_code == 2 and "missing.yaml" in res.output  # a missing file is bad input, before any cell
    spec["workloads"][1] = {"family": "optimus-workload", "jobs": 4, "servers": 3, "max_tasks": 4}
    spec["schedulers"][1] = {"name": "drf", "options": {"tie_break": "coin"}}
    res = runner.invoke(app, ["sweep", _write(tmp_path, spec), "--out", str(tmp_path / "o"), "--workers", "1"])
    assert res.exit_code == 2 and "schedulers[1].options" in res.output and "tie_break" in res.output  # before any cell
    assert not (tmp_path / "o").exists()
    spec["schedulers"][1] = {"name": "fails-at-run-time"}  # valid at the door, fails in every cell
    res = runner.invoke(app, ["sweep", _write(tmp_path, spec), "--out", str(tmp_path / "o"), "--workers", "1"])
    assert res.exit_code == 1, res.output
    rows = read_csv(tmp_path / "o" / "results.csv")
    bad = [r for r in rows if r["ok"] == "False"]
    assert len(rows) == 4 and len(bad) == 2 and all("broke on purpose" in r["error"] for r in bad)
    assert len(list((tmp_path / "o" / "cells").glob("*.error.json"))) == 2


def test_ctrl_c_leaves_a_consistent_folder_and_the_rerun_finishes(tmp_path: Path) -> None:
    seen = {"n": 0}

    def stop_after_three(done: int, failed: int, running: int, total: int) -> None:
        if done >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep(SPEC, tmp_path, workers=1, progress=stop_after_three)
    assert not list(tmp_path.rglob("*.tmp"))  # no half-written file
    assert len(read_csv(tmp_path / "results.csv")) == 3 == len(list((tmp_path / "cells").glob("*.json")))
    table = sweep(SPEC, tmp_path, workers=1, progress=lambda *a: seen.__setitem__("n", seen["n"] + 1))
    assert len(table.rows) == 8 and len(read_csv(tmp_path / "results.csv")) == 8


def test_solve_sweep_gap_and_contention(tmp_path: Path) -> None:
    spec = {"schema": "schedopt/sweep@1", "name": "gaps", "kind": "solve",
            "workloads": [{"family": "optimus", "jobs": 8, "servers": s} for s in (4, 12)],
            "seeds": [0, 1], "schedulers": [{"name": "optimus-greedy"}, {"name": "optimus-milp"}], "time_limits": [10]}
    table = sweep(spec, tmp_path, workers=1)
    assert len(table.rows) == 8 and not table.failed
    for r in table.rows:
        assert r["violations"] == 0 and r["contention"] > 0 and r["time_limit"] == 10
        if r["scheduler"] == "optimus-milp":
            assert r["status"] == "optimal"
    assert (tmp_path / "gap_vs_contention.png").is_file()


def _write(tmp_path: Path, spec: dict[str, Any]) -> str:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return str(path)


def test_bad_spec_names_the_file_and_field(tmp_path: Path) -> None:
    res = runner.invoke(app, ["sweep", _write(tmp_path, {**SPEC, "seedz": [1]}), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "spec.json" in res.output and "seedz" in res.output
    assert not (tmp_path / "o").exists()  # nothing written
    res = runner.invoke(app, ["sweep", _write(tmp_path, {**SPEC, "loads": [0]}), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "loads" in res.output


def test_without_ray_workers_1_still_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as if not installed
    res = runner.invoke(app, ["sweep", _write(tmp_path, SPEC), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "Ray is not installed" in res.output and "--workers 1" in res.output
    res = runner.invoke(app, ["sweep", _write(tmp_path, SPEC), "--out", str(tmp_path / "o"), "--workers", "1"])
    assert res.exit_code == 0, res.output


def test_other_commands_never_import_ray() -> None:
    code = "import sys, schedopt, schedopt.cli, schedopt.sweeps; assert 'ray' not in sys.modules, 'ray imported'"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr


def test_python_api_is_exported() -> None:
    assert schedopt.sweep is sweep


@pytest.mark.slow
@needs_ray
def test_multi_node_cluster_on_one_machine(tmp_path: Path) -> None:
    """A head and a second node started with `ray start` on 127.0.0.1; the sweep
    submitted with --address; cells run on both nodes."""
    ray_bin = str(Path(sys.executable).parent / "ray")
    env = {**os.environ, "RAY_ADDRESS": "", "RAY_AUTH_MODE": "disabled"}  # one machine, a test: no token to share
    port = "6391"
    try:
        subprocess.run([ray_bin, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=1",
                        "--include-dashboard=false", "--disable-usage-stats"], check=True, env=env, capture_output=True, timeout=120)
        subprocess.run([ray_bin, "start", f"--address=127.0.0.1:{port}", "--node-ip-address=127.0.0.1", "--num-cpus=1",
                        "--disable-usage-stats"], check=True, env=env, capture_output=True, timeout=120)
        spec = {**SPEC, "seeds": [0, 1, 2, 3], "workloads": [{"family": "optimus-workload", "jobs": 20, "servers": 6}]}
        res = subprocess.run([str(Path(sys.executable).parent / "schedopt"), "sweep", _write(tmp_path, spec), "--out", str(tmp_path / "o"),
                              "--address", f"127.0.0.1:{port}"], env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert res.returncode == 0, res.stdout + res.stderr
        nodes = set(engine.CellCache(tmp_path / "o").nodes().values())
        assert len(nodes) == 2, nodes
    finally:
        subprocess.run([ray_bin, "stop", "--force"], env=env, capture_output=True, timeout=120)


def test_simulator_estimation_reaches_the_cells(tmp_path: Path) -> None:
    from schedopt.generate import generate_instance
    from schedopt.sim import simulate

    spec = {**SPEC, "seeds": [0], "loads": [1.0], "schedulers": [{"name": "optimus-greedy"}],
            "simulator": {"estimation": "online"}}
    table = sweep(spec, tmp_path, workers=1)
    assert not table.failed and len(table.rows) == 1
    wl = generate_instance("optimus-workload", jobs=6, servers=4, seed=0)
    direct = simulate(wl, "optimus-greedy", seed=0, estimation="online")
    assert table.rows[0]["avg_jct_s"] == pytest.approx(direct.avg_jct_s)
