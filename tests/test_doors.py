"""Bad input refused at the door (issue 41): option values, the simulator's seed,
the Python API's arguments, plan counts given as strings. One line, exit 2,
nothing written, bounded time and memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import schedopt
from schedopt.cli import app
from schedopt.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "instances" / "small-hand.yaml")


def alias_bomb(levels: int = 10) -> str:
    parts = ["&a0 [x,x,x,x,x,x,x,x,x,x]"] + [f"&a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "[" + ",".join(parts) + "]"


@pytest.mark.parametrize("value, phrase", [
    ("[unclosed", "YAML syntax error"),
    (": :", "YAML"),
    ("\x07", "YAML"),
    ('!!python/object/apply:os.system ["echo pwned"]', "could not determine a constructor"),
    (alias_bomb(), "values (YAML aliases expanded)"),
    ("x" * 100_000, "more characters"),
])
def test_bad_option_values_exit_2_in_one_short_line(tmp_path: Path, value: str, phrase: str) -> None:
    out = tmp_path / "plan.yaml"
    res = CliRunner().invoke(app, ["solve", SMALL, "--solver", "optimus-greedy", "--option", f"stop_rule={value}",
                                   "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "stop_rule" in lines[0] and phrase in lines[0], lines
    assert len(lines[0]) < 600
    assert not out.exists()


def test_simulate_refuses_the_seeds_solve_refuses(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["simulate", SMALL, "--scheduler", "optimus-greedy", "--seed", "-1",
                                   "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 2 and "--seed" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "r.json").exists()


def test_api_takes_a_path_and_says_what_it_expects() -> None:
    plan = schedopt.solve(SMALL, "optimus-greedy")  # a newcomer's first guess works
    assert plan.has_solution
    with pytest.raises(TypeError, match="load_instance"):
        schedopt.solve(None, "optimus-greedy")
    with pytest.raises(TypeError, match="solver name"):
        schedopt.solve(SMALL, 42)
    instance = schedopt.load_instance(SMALL)
    assert schedopt.check(instance, plan.to_dict()) == []  # a plan mapping is read as a plan
    with pytest.raises(TypeError, match="load_plan"):
        schedopt.check(instance, 5)


def test_plan_counts_are_integers_not_strings() -> None:
    plan = schedopt.solve(SMALL, "optimus-greedy").to_dict()
    job = next(iter(plan["allocation"]))
    role = next(iter(plan["allocation"][job]))
    plan["allocation"][job][role] = "2"
    with pytest.raises(InputError, match=f"allocation.{job}.{role}"):
        schedopt.Plan.from_dict(plan, "plan.yaml")


def _with_huge_job() -> schedopt.Instance:
    from schedopt.generate import generate_instance

    data = generate_instance("optimus-workload", jobs=5, servers=4, seed=1, max_tasks=4).to_dict()
    big = {**data["jobs"][0], "id": "huge"}
    big["roles"] = {k: dict(v) for k, v in big["roles"].items()}
    big["roles"]["worker"]["demand"] = {**big["roles"]["worker"]["demand"], "gpu": 1000}
    data["jobs"].append(big)
    return schedopt.Instance.from_dict(data)


def test_a_job_that_can_never_fit_is_reported_at_once() -> None:
    from schedopt.sim import simulate

    inst = _with_huge_job()
    plan = schedopt.solve(inst, "optimus-greedy")
    assert "huge" in plan.paused and "1000 gpu" in plan.metrics["cannot_run"]["huge"]
    assert schedopt.check(inst, plan) == []
    result = simulate(inst, "optimus-greedy", interval_s=600)  # stops when the others finish, not at the horizon
    assert result.finished == 5 and result.unfinished == 1 and "huge" in result.unfinishable
    assert result.plans < 1000


def test_generate_help_lists_the_families() -> None:
    res = CliRunner().invoke(app, ["generate", "--help"])
    assert res.exit_code == 0
    for family in ("optimus", "slaq", "dorm-table2", "placement"):
        assert f"{family}:" in res.output


def test_out_into_an_unwritable_folder_is_refused_before_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == tmp_path and mode == os.W_OK else real(p, mode))
    res = CliRunner().invoke(app, ["solve", SMALL, "--solver", "optimus-greedy", "--out", str(tmp_path / "plan.yaml")])
    assert res.exit_code == 2 and "not writable" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "plan.yaml").exists()


SWEEP_CASES = {
    "unknown scheduler": ({"schedulers": [{"name": "optimus-greedyy"}]}, "schedulers[0]", "unknown solver"),
    "unknown option": ({"schedulers": [{"name": "optimus-greedy", "options": {"stop_rulez": 1}}]},
                       "schedulers[0].options.stop_rulez", "unknown option"),
    "bad option value": ({"schedulers": [{"name": "optimus-greedy", "options": {"stop_rule": 3}}]},
                         "schedulers[0].options", "stop_rule"),
    "unknown family": ({"workloads": [{"family": "optimus-workloadz"}]}, "workloads[0].family", "unknown family"),
    "infinite interval": ({"simulator": {"interval_s": float("inf")}}, "simulator.interval_s", "finite"),
    "negative seed": ({"seeds": [-1]}, "seeds[0]", "greater than or equal to 0"),
    "infinite load": ({"loads": [float("inf")]}, "loads[0]", "finite"),
    "not an instance": ({"workloads": [{"file": "/etc/passwd"}]}, "workloads[0].file", "/etc/passwd"),
    "a folder": ({"workloads": [{"file": "/tmp"}]}, "workloads[0].file", "/tmp"),
    "not an allocation solver": ({"schedulers": [{"name": "dorm-milp"}]}, "schedulers[0].name", "allocation solver"),
}


@pytest.mark.parametrize("case", sorted(SWEEP_CASES))
def test_bad_sweep_spec_is_refused_before_any_cell(tmp_path: Path, case: str) -> None:
    import yaml

    change, field, phrase = SWEEP_CASES[case]
    doc = {"schema": "schedopt/sweep@1", "workloads": [{"family": "optimus-workload", "jobs": 3, "servers": 4}],
           "schedulers": [{"name": "optimus-greedy"}], **change}
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(doc))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(out), "--workers", "1"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert str(spec) in res.output and field in res.output and phrase in res.output, res.output
    assert not out.exists()


def test_simulate_over_several_seeds_prints_intervals_and_names_the_sense(tmp_path: Path) -> None:
    from schedopt.generate import generate_instance

    wl = tmp_path / "wl.yaml"
    schedopt.save_instance(generate_instance("optimus-workload", jobs=6, servers=4, seed=1, max_tasks=4), wl)
    res = CliRunner().invoke(app, ["simulate", str(wl), "--compare", "optimus-greedy,drf", "--seeds", "2",
                                   "--error-steps", "0.2", "--out", str(tmp_path / "r.json"), "--plot", str(tmp_path / "figs")])
    assert res.exit_code == 0, res.output
    assert "95 % interval over 2 seeds" in res.output and "±" in res.output and "lower" in res.output
    from schedopt.sim.result import load_results

    results = load_results(tmp_path / "r.json")
    assert sorted((r.scheduler, r.seed) for r in results) == [("drf", 0), ("drf", 1), ("optimus-greedy", 0), ("optimus-greedy", 1)]
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["jct_cdf.png", "jct_makespan.png", "utilization.png"]


def test_scaling_a_table_keeps_interpolation() -> None:
    """Issue 35 §2: an interpolated table's in-between counts stay possible when the simulator scales it."""
    from schedopt.sim.simulator import scaled_speed
    from schedopt.speed import TableSpeed

    table = TableSpeed(form="table", points=[[1, 1.0], [4, 4.0]], interpolate=True)
    table.step_time_s(2, 0)  # its grid cached before scaling
    scaled = scaled_speed(table, 2.0)
    assert scaled.interpolate and scaled.step_time_s(2, 0) == pytest.approx(table.step_time_s(2, 0) / 2)
