"""The CLI verbs and their exit codes (0 ok, 1 infeasible or failed check, 2 bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

import schedopt
from schedopt.testing import random_packing_instance
from schedopt.cli import app
from tests.conftest import INSTANCES

runner = CliRunner()


def test_solve_writes_a_plan_that_checks(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    r = runner.invoke(app, ["solve", str(INSTANCES / "optimus-testbed.yaml"), "--solver", "optimus-milp", "--out", str(out)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["check", str(INSTANCES / "optimus-testbed.yaml"), str(out)])
    assert r.exit_code == 0 and "passes every check" in r.output


def test_check_fails_on_a_tampered_plan(tmp_path: Path) -> None:
    inst = str(INSTANCES / "small-hand.yaml")
    out = tmp_path / "plan.yaml"
    assert runner.invoke(app, ["solve", inst, "--solver", "optimus-greedy", "--out", str(out)]).exit_code == 0
    plan = yaml.safe_load(out.read_text())
    plan["allocation"]["b"]["worker"] = 3  # 5 GPUs on a 3-GPU cluster
    out.write_text(yaml.safe_dump(plan))
    r = runner.invoke(app, ["check", inst, str(out)])
    assert r.exit_code == 1
    assert "capacity.gpu" in r.output and "objective.value" in r.output


def test_solver_options_pass_through(tmp_path: Path) -> None:
    out = tmp_path / "p.yaml"
    r = runner.invoke(app, ["solve", str(INSTANCES / "optimus-testbed.yaml"), "-s", "optimus-greedy",
                            "-o", "stop_rule=paper", "-o", "priority_factor=1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert yaml.safe_load(out.read_text())["options"]["stop_rule"] == "paper"


def test_infeasible_exits_1(tmp_path: Path) -> None:
    inst = tmp_path / "inf.yaml"
    inst.write_text(yaml.safe_dump({
        "schema": "schedopt/instance@1", "name": "inf", "resources": ["gpu"],
        "servers": [{"name": "n", "capacity": {"gpu": 1}}],
        "jobs": [{"id": "a", "roles": {"worker": {"demand": {"gpu": 1}, "min": 2, "max": 2}},
                  "speed": {"form": "amdahl", "serial": 1, "parallel": 1}, "remaining_steps": 5}],
    }))
    r = runner.invoke(app, ["solve", str(inst), "--solver", "optimus-milp"])
    assert r.exit_code == 1 and "infeasible" in r.output


def test_compare_and_solvers() -> None:
    r = runner.invoke(app, ["compare", str(INSTANCES / "optimus-testbed.yaml")])
    assert r.exit_code == 0, r.output
    for name in ("optimus-greedy", "optimus-milp", "optimus-cpsat"):
        assert name in r.output
    r = runner.invoke(app, ["solvers"])
    assert r.exit_code == 0 and "optimus-cpsat" in r.output and "exact" in r.output


def test_generate_is_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    for out in (a, b):
        r = runner.invoke(app, ["generate", "optimus", "--jobs", "20", "--servers", "30", "--seed", "5", "--out", str(out)])
        assert r.exit_code == 0, r.output
    assert a.read_text() == b.read_text()
    inst = schedopt.load_instance(a)
    assert len(inst.jobs) == 20 and len(inst.server_names) == 30
    r = runner.invoke(app, ["generate", "nope", "--jobs", "1", "--servers", "1", "--out", str(tmp_path / "c.yaml")])
    assert r.exit_code == 2 and not (tmp_path / "c.yaml").exists()


def test_bundled_instances_load_and_round_trip(tmp_path: Path) -> None:
    for f in sorted(INSTANCES.glob("*.y*ml")) + sorted(INSTANCES.glob("*.json")):
        inst = schedopt.load_instance(f)
        out = tmp_path / ("copy" + f.suffix)
        schedopt.save_instance(inst, out)
        again = schedopt.load_instance(out)
        assert again.to_dict() == inst.to_dict()
        assert again.server_names == inst.server_names


# ---- fit (issue 3) ---------------------------------------------------------------------------

def _write_loss_csv(path: Path) -> None:
    rows = ["step,loss"] + [f"{k},{2.0 * (1 / (0.01 * k + 1) + 0.1):.6f}" for k in range(0, 1000, 10)]
    path.write_text("\n".join(rows) + "\n")


def test_fit_loss_prints_coefficients_and_draws(tmp_path: Path) -> None:
    csv_path, png = tmp_path / "loss.csv", tmp_path / "loss.png"
    _write_loss_csv(csv_path)
    r = runner.invoke(app, ["fit", "loss", str(csv_path), "--threshold", "0.05", "--plot", str(png)])
    assert r.exit_code == 0, r.output
    assert "loss_curve: {family: optimus, params: [" in r.output and "steps remaining" in r.output
    # noiseless eq. 1 with β0/β1 = 0.01: K(0.05) = 19/0.01 = 1900 steps
    assert "converges (δ = 0.05) at step 1900" in r.output
    assert png.is_file() and png.stat().st_size > 1000


def test_fit_speed_recovers_the_coefficients(tmp_path: Path) -> None:
    csv_path = tmp_path / "speed.csv"
    rows = ["p,w,speed"] + [f"{p},{w},{1 / (0.3 * 32 / w + 1.0 + 0.5 * w / p + 0.1 * p):.12g}"
                            for p in (1, 2, 4) for w in (1, 2, 4, 8)]
    csv_path.write_text("\n".join(rows) + "\n")
    r = runner.invoke(app, ["fit", "speed", str(csv_path), "--batch", "32", "--plot", str(tmp_path / "s.svg")])
    assert r.exit_code == 0, r.output
    assert "relative error: mean 0.00%" in r.output and (tmp_path / "s.svg").is_file()
    r = runner.invoke(app, ["fit", "speed", str(csv_path), "--form", "amdahl"])  # wrong columns for amdahl
    assert r.exit_code == 2 and "does not name the columns (n, speed)" in r.output


def test_fit_bad_csv_exit_2_and_nothing_written(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("step,loss\n0,1.0\n10,abc\n20\n")
    png = tmp_path / "never.png"
    r = runner.invoke(app, ["fit", "loss", str(bad), "--plot", str(png)])
    assert r.exit_code == 2
    assert "bad.csv: line 3: expected numbers (step, loss)" in r.output
    assert "bad.csv: line 4: expected 2 values (step, loss), got 1" in r.output
    assert "Traceback" not in r.output and not png.exists()
    short = tmp_path / "short.csv"
    short.write_text("0,1.0\n10,0.5\n")
    r = runner.invoke(app, ["fit", "loss", str(short)])
    assert r.exit_code == 2 and "cannot fit the optimus family: need at least 3 loss points" in r.output
    r = runner.invoke(app, ["fit", "loss", str(short), "--plot", str(tmp_path / "x.gif")])
    assert r.exit_code == 2 and "unknown figure type" in r.output


def test_compare_infers_the_quality_problem() -> None:
    r = runner.invoke(app, ["compare", str(INSTANCES / "slaq-40.yaml")])
    assert r.exit_code == 0, r.output
    assert "slaq-greedy" in r.output and "slaq-milp" in r.output and "optimus" not in r.output


def test_observations_in_an_instance_are_fitted_on_load() -> None:
    r = runner.invoke(app, ["compare", str(INSTANCES / "slaq-observed.yaml"), "--problem", "quality"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["compare", str(INSTANCES / "slaq-observed.yaml"), "--problem", "allocation"])
    assert r.exit_code == 0 and "optimus-milp" in r.output


def test_compare_infers_the_partition_problem(tmp_path: Path) -> None:
    r = runner.invoke(app, ["compare", str(INSTANCES / "dorm-table2.yaml"), "--solvers", "dorm-3,drf-containers,swarm-static"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "plan.yaml"
    r = runner.invoke(app, ["solve", str(INSTANCES / "dorm-table2.yaml"), "-s", "dorm-milp", "-o", "mode=classes", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert runner.invoke(app, ["check", str(INSTANCES / "dorm-table2.yaml"), str(out)]).exit_code == 0
    r = runner.invoke(app, ["solve", str(INSTANCES / "dorm-table2.yaml"), "-s", "dorm-milp", "-o", "mode=fast"])
    assert r.exit_code == 2 and 'mode: expected "auto", "servers" or "classes"' in r.output
    r = runner.invoke(app, ["compare", str(INSTANCES / "dorm-table2.yaml")])
    assert r.exit_code == 0 and "swarm-static" in r.output and "optimus" not in r.output


def test_generate_placement_and_compare_infers_the_problem(tmp_path: Path) -> None:
    out = tmp_path / "pl.yaml"
    r = runner.invoke(app, ["generate", "placement", "--jobs", "4", "--servers", "3", "--max-tasks", "3", "--seed", "2",
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    inst = schedopt.load_instance(out)
    assert schedopt.api.infer_problem(inst) == "placement"
    r = runner.invoke(app, ["compare", str(out), "--time-limit", "30"])
    assert r.exit_code == 0, r.output
    assert "placement-milp" in r.output and "kube-default" in r.output and "violation" not in r.output


# ---- scriptable: --version, --format json, --out -, compare options, --log --------------------

def test_version() -> None:
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout.strip() == f"schedopt {schedopt.__version__}"


def test_json_formats_parse(tmp_path: Path) -> None:
    inst = str(INSTANCES / "optimus-testbed.yaml")
    r = runner.invoke(app, ["solve", inst, "--solver", "optimus-greedy", "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["plan"]["solver"] == "optimus-greedy"
    r = runner.invoke(app, ["compare", inst, "--solvers", "optimus-greedy,optimus-milp",
                            "--option", "optimus-milp.rel_gap=0.01", "--format", "json"])
    rows = json.loads(r.stdout)["rows"]
    assert r.exit_code == 0 and [row["solver"] for row in rows] == ["optimus-greedy", "optimus-milp"]
    assert all(row["check"] == "ok" for row in rows)
    solvers = json.loads(runner.invoke(app, ["solvers", "--format", "json"]).stdout)
    assert {"optimus-milp", "dorm-cpsat", "placement-cpsat"} <= {s["name"] for s in solvers}
    plan = tmp_path / "p.json"
    assert runner.invoke(app, ["solve", inst, "--solver", "optimus-greedy", "--out", str(plan)]).exit_code == 0
    r = runner.invoke(app, ["check", inst, str(plan), "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["ok"] is True
    r = runner.invoke(app, ["solve", inst, "--solver", "optimus-greedy", "--format", "yaml"])
    assert r.exit_code == 2 and "--format" in r.output


def test_out_dash_writes_the_plan_to_standard_output() -> None:
    r = runner.invoke(app, ["solve", str(INSTANCES / "optimus-testbed.yaml"), "--solver", "optimus-greedy", "--out", "-"])
    assert r.exit_code == 0
    doc = yaml.safe_load(r.stdout)
    assert doc["schema"] == "schedopt/plan@1" and doc["solver"] == "optimus-greedy"


def test_option_values_in_exponent_notation_are_numbers() -> None:
    """YAML 1.1 reads ``1e-3`` as a string; ``--option rel_gap=1e-3`` is the number."""
    from schedopt.cli.common import parse_options

    assert parse_options(["rel_gap=1e-3", "mode=classes", "threads=2", "x=5E+2"]) == {
        "rel_gap": 0.001, "mode": "classes", "threads": 2, "x": 500.0}
    r = runner.invoke(app, ["solve", str(INSTANCES / "optimus-testbed.yaml"), "--solver", "optimus-milp",
                            "--option", "rel_gap=1e-3"])
    assert r.exit_code == 0, r.output


def test_compare_option_needs_a_solver_prefix() -> None:
    r = runner.invoke(app, ["compare", str(INSTANCES / "optimus-testbed.yaml"), "--solvers", "optimus-greedy",
                            "--option", "rel_gap=0.1"])
    assert r.exit_code == 2 and "SOLVER.KEY=VALUE" in r.output


def test_wrong_problem_is_one_line_exit_2() -> None:
    r = runner.invoke(app, ["solve", str(INSTANCES / "optimus-testbed.yaml"), "--solver", "dorm-milp"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert 'solver "dorm-milp" solves the partition problem' in r.output
    r = runner.invoke(app, ["compare", str(INSTANCES / "optimus-testbed.yaml"), "--problem", "placement"])
    assert r.exit_code == 2 and "cannot pose it" in r.output


def test_log_streams_backend_progress_only_when_asked(tmp_path: Path) -> None:
    # a hard packing: the backend runs (on the testbed the LP's prices prove the greedy's plan first)
    inst = str(tmp_path / "packing.yaml")
    schedopt.save_instance(random_packing_instance(0, 30, 4), inst)
    r = runner.invoke(app, ["solve", inst, "--solver", "optimus-cpsat", "--log"])
    assert r.exit_code == 0 and "schedopt.cpsat" in r.stderr
    r = runner.invoke(app, ["solve", inst, "--solver", "optimus-cpsat"])
    assert r.exit_code == 0 and "schedopt.cpsat" not in r.stderr + r.stdout
