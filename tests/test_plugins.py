"""Solvers from other packages: a test distribution (tests/plugin_demo, a real
``.dist-info`` with an ``entry_points.txt``) declares ``first-come-minimum`` in
the group ``schedopt.solvers``. With it on the path, importlib.metadata finds
it and it appears in ``solvers``, ``compare``, ``simulate`` and the contract
suite, with no code in this repository naming it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import INSTANCES, ROOT

PLUGIN_PATH = Path(__file__).parent / "plugin_demo"
NAME = "first-come-minimum"


def run(args: list[str], cwd: Path, *, plugin_path: Path = PLUGIN_PATH, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), str(ROOT)])}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run(["-c", "from schedopt.cli import main; main()", *args], cwd)


def test_entry_point_solver_is_listed_and_solves(tmp_path: Path) -> None:
    listed = cli("solvers", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert NAME in listed.stdout
    plan = tmp_path / "plan.yaml"
    solved = cli("solve", str(INSTANCES / "optimus-testbed.yaml"), "--solver", NAME, "--out", str(plan), cwd=tmp_path)
    assert solved.returncode == 0, solved.stdout + solved.stderr
    checked = cli("check", str(INSTANCES / "optimus-testbed.yaml"), str(plan), cwd=tmp_path)
    assert checked.returncode == 0 and "passes every check" in checked.stdout


def test_entry_point_solver_in_compare_and_simulate(tmp_path: Path) -> None:
    compared = cli("compare", str(INSTANCES / "optimus-testbed.yaml"), "--solvers", f"optimus-greedy,{NAME}", cwd=tmp_path)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    row = next(line for line in compared.stdout.splitlines() if NAME in line)
    assert "heuristic" in row and "ok" in row
    wl = tmp_path / "wl.yaml"
    assert cli("generate", "optimus-workload", "--jobs", "6", "--servers", "4", "--out", str(wl), cwd=tmp_path).returncode == 0
    sim = cli("simulate", str(wl), "--scheduler", NAME, "--out", str(tmp_path / "r.yaml"), cwd=tmp_path)
    assert sim.returncode == 0, sim.stdout + sim.stderr
    assert "6/6" in sim.stdout  # every job finished


def test_entry_point_solver_runs_the_contract_suite(tmp_path: Path) -> None:
    """The contract suite parametrises over the registered solvers: the plugin is in it."""
    res = run(["-m", "pytest", str(ROOT / "tests" / "test_contract.py"), "-k", NAME, "-o", "addopts=", "-m", "not slow",
               "-p", "no:cacheprovider"], ROOT)
    assert res.returncode == 0, res.stdout[-3000:]
    passed = re.search(r"(\d+) passed", res.stdout)
    assert passed and int(passed.group(1)) >= 10 and "failed" not in res.stdout, res.stdout[-2000:]


def test_a_broken_plugin_warns_and_the_library_still_works(tmp_path: Path) -> None:
    dist = tmp_path / "broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[schedopt.solvers]\nbroken = no_such_module:Nothing\n")
    res = run(["-W", "always", "-c", "import schedopt; print(len(schedopt.solvers()))"], tmp_path, plugin_path=tmp_path)
    assert res.returncode == 0, res.stderr
    assert int(res.stdout.strip()) >= 25
    assert "entry point 'broken'" in res.stderr and "failed to load" in res.stderr
