"""Malformed files: exit status 2, a message naming the file and the field, nothing written."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from typer.testing import CliRunner

from schedopt.cli import app
from tests.conftest import INSTANCES

BASE = yaml.safe_load((INSTANCES / "optimus-testbed.yaml").read_text())


def mutate(fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    fn(data)
    return data


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        for p in path[:-1]:
            d = d[p]
        d[path[-1]] = value
    return f


def _del(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        for p in path[:-1]:
            d = d[p]
        del d[path[-1]]
    return f


def _dup_id(d: dict[str, Any]) -> None:
    d["jobs"][3]["id"] = d["jobs"][1]["id"]


# (case, document or raw text, suffix, the text the message must contain)
CASES: list[tuple[str, Any, str, str]] = [
    ("missing name", mutate(_del(["name"])), ".yaml", "name: required field is missing"),
    ("missing roles", mutate(_del(["jobs", 2, "roles"])), ".yaml", "jobs[2].roles: required field is missing"),
    ("wrong schema", mutate(_set(["schema"], "schedopt/instance@9")), ".yaml", "schema: expected 'schedopt/instance@1'"),
    ("misspelt field", mutate(_set(["jobs", 1, "remaining_stepz"], 5)), ".yaml",
     'jobs[1].remaining_stepz: unknown field (did you mean "remaining_steps"?)'),
    ("string demand", mutate(_set(["jobs", 3, "roles", "worker", "demand", "gpu"], "two")), ".yaml",
     'jobs[3].roles.worker.demand.gpu: expected a number >= 0, got "two"'),
    ("bool count", mutate(_set(["jobs", 0, "roles", "ps", "max"], True)), ".yaml", "jobs[0].roles.ps.max: expected an integer >= 1"),
    ("fractional min", mutate(_set(["jobs", 0, "roles", "ps", "min"], 1.5)), ".yaml", "jobs[0].roles.ps.min: expected an integer >= 1, got 1.5"),
    ("negative capacity", mutate(_set(["servers", 0, "capacity", "cpu"], -8)), ".yaml", "servers[0].capacity.cpu: expected a number >= 0, got -8"),
    ("unknown speed form", mutate(_set(["jobs", 1, "speed", "form"], "magic")), ".yaml", 'jobs[1].speed: unknown form "magic"'),
    ("theta too short", mutate(_set(["jobs", 0, "speed", "theta"], [1, 2])), ".yaml", "jobs[0].speed.theta: expected at least 5 items, got 2"),
    ("duplicate id", mutate(_dup_id), ".yaml", "jobs[3].id: duplicate job id"),
    ("unknown resource", mutate(_set(["jobs", 4, "roles", "ps", "demand", "gpus"], 1)), ".yaml",
     'jobs[4].roles.ps.demand.gpus: unknown resource "gpus"'),
    ("unknown capacity resource", mutate(_set(["servers", 1, "capacity", "disk"], 1)), ".yaml", 'servers[1].capacity.disk: unknown resource "disk"'),
    ("max below min", mutate(_set(["jobs", 0, "roles", "worker", "max"], 0)), ".yaml", "jobs[0].roles.worker.max"),
    ("unknown field", mutate(_set(["jobs", 0, "priority"], 3)), ".yaml", "jobs[0].priority: unknown field"),
    ("jobs not a list", mutate(_set(["jobs"], {"a": 1})), ".yaml", "jobs: expected a list"),
    ("speed needs two roles", mutate(_del(["jobs", 0, "roles", "ps"])), ".yaml", 'jobs[0].speed.form: speed form "optimus-sync" needs two roles'),
    ("wrong schema", mutate(_set(["schema"], "schedopt/instance@2")), ".yaml", "schema: expected 'schedopt/instance@1'"),
    ("yaml syntax", "schema: schedopt/instance@1\nname: [unclosed\n", ".yaml", "YAML syntax error at line"),
    ("json truncated", json.dumps(BASE)[: len(json.dumps(BASE)) // 2], ".json", "JSON syntax error at line 1"),
    ("top level list", "[1, 2, 3]\n", ".yaml", "expected a mapping at the top level"),
    ("missing speed for allocation", mutate(_del(["jobs", 5, "speed"])), ".yaml", "jobs[5].speed: required by the allocation problem"),
]


@pytest.mark.parametrize("case,doc,suffix,expected", CASES, ids=[c[0] for c in CASES])
def test_bad_instance_exit_2_names_field_writes_nothing(tmp_path: Path, case: str, doc: Any, suffix: str, expected: str) -> None:
    src = tmp_path / f"bad{suffix}"
    src.write_text(doc if isinstance(doc, str) else (json.dumps(doc) if suffix == ".json" else yaml.safe_dump(doc)))
    out = tmp_path / "plan.yaml"
    result = CliRunner().invoke(app, ["solve", str(src), "--solver", "optimus-greedy", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert str(src) in result.output and expected in result.output, result.output
    assert "Traceback" not in result.output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [src.name]


def test_missing_file_and_unknown_extension(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["solve", str(tmp_path / "nope.yaml"), "--solver", "optimus-greedy"])
    assert r.exit_code == 2 and "file not found" in r.output
    txt = tmp_path / "inst.txt"
    txt.write_text("x")
    r = CliRunner().invoke(app, ["check", str(txt), str(txt)])
    assert r.exit_code == 2 and "expected .json, .yaml or .yml" in r.output


def test_unknown_solver_and_option(tmp_path: Path) -> None:
    inst = str(INSTANCES / "small-hand.yaml")
    r = CliRunner().invoke(app, ["solve", inst, "--solver", "nope"])
    assert r.exit_code == 2 and 'unknown solver "nope"' in r.output
    r = CliRunner().invoke(app, ["solve", inst, "--solver", "optimus-greedy", "--option", "bogus=1"])
    assert r.exit_code == 2 and "unknown option" in r.output
    r = CliRunner().invoke(app, ["solve", inst, "--solver", "optimus-greedy", "--option", "stop_rule=sometimes"])
    assert r.exit_code == 2 and "stop_rule" in r.output


def test_bad_plan_file(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("schema: schedopt/plan@1\ninstance: x\n")
    r = CliRunner().invoke(app, ["check", str(INSTANCES / "small-hand.yaml"), str(plan)])
    assert r.exit_code == 2 and "solver: required field is missing" in r.output
