"""`schedopt bench list | materialize | run | verify | report` (issue 53): output, files and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from schedopt.cli import app
from schedopt.instance import load_instance
from schedopt.plan import load_plan
from schedopt.checking import check

runner = CliRunner()
FIELDS = {"id", "set", "problem", "family", "jobs", "servers", "recipe", "checksum", "status", "best_known", "bound"}


def test_list_json_has_every_field() -> None:
    r = runner.invoke(app, ["bench", "list", "--set", "benchmark", "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["collection"] == "schedlib-2026.1"
    assert data["instances"] and all(FIELDS <= set(row) for row in data["instances"])
    assert all(row["benchmark"] for row in data["instances"])
    r = runner.invoke(app, ["bench", "list", "--set", "quality"])
    assert r.exit_code == 0 and "slaq-10j-1s-t4-s1" in r.output


def test_materialize_writes_instances_and_plans(tmp_path: Path) -> None:
    r = runner.invoke(app, ["bench", "materialize", "kit-quota-s1,optimus-8j-3s-t3-s1", "--out", str(tmp_path), "--plans"])
    assert r.exit_code == 0, r.output
    for rid in ("kit-quota-s1", "optimus-8j-3s-t3-s1"):
        inst = load_instance(tmp_path / f"{rid}.json")
        assert inst.name == rid
        assert check(inst, load_plan(tmp_path / f"{rid}.plan.json"), strict=True) == []


def test_run_writes_json_and_report_renders(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    r = runner.invoke(app, ["bench", "run", "optimus-8j-3s-t3-s1,kit-quota-s1", "--solver", "optimus-greedy", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "shifted geometric mean" in r.output
    data = json.loads(out.read_text())
    assert data["summary"]["ran"] == 2 and len(data["instances"]) == 2
    page = tmp_path / "leaderboard.md"
    r = runner.invoke(app, ["bench", "report", str(out), "--out", str(page)])
    assert r.exit_code == 0, r.output
    assert "| 1 | `optimus-greedy` | heuristic | 2 |" in page.read_text()


def test_run_json_format() -> None:
    r = runner.invoke(app, ["bench", "run", "optimus-8j-3s-t3-s1", "--solver", "optimus-milp", "--time-limit", "10",
                            "--format", "json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.output)["instances"][0]
    assert row["outcome"] == "solved" and row["best_status"] == "optimal" and abs(row["gap"]) <= 1e-4


def test_verify_exit_codes(tmp_path: Path) -> None:
    r = runner.invoke(app, ["bench", "verify", "kit-quota-s1,optimus-8j-3s-t3-s1"])
    assert r.exit_code == 0, r.output
    assert "2 of 2 records verified" in r.output
    sub = tmp_path / "sub"
    (sub / "plans").mkdir(parents=True)
    from schedopt.bench.records import collection_dir, read_collection

    coll = read_collection(collection_dir())
    rec = next(x for x in coll.records if x.id == "kit-quota-s1")
    (sub / rec.plan).write_bytes((collection_dir() / rec.plan).read_bytes())
    doc = {"schema": "schedopt/bench-records@1", "collection": coll.collection, "created": "now",
           "records": [{**rec.model_dump(mode="json"), "best_known": rec.best_known * 0.5}]}
    (sub / "records.json").write_text(json.dumps(doc))
    r = runner.invoke(app, ["bench", "verify", "kit-quota-s1", "--submission", str(sub)])
    assert r.exit_code == 1 and "FAILED kit-quota-s1" in r.output and "best_known" in r.output


def test_bad_input_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    for args in (["bench", "run", "benchmark", "--solver", "nope", "--out", str(out)],
                 ["bench", "run", "no-such-set", "--solver", "optimus-greedy", "--out", str(out)],
                 ["bench", "run", "benchmark", "--solver", "optimus-greedy", "--out", str(tmp_path / "run.txt")],
                 ["bench", "list", "--format", "xml"],
                 ["bench", "report", str(tmp_path / "missing.json")]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, (args, r.output)
        assert "Traceback" not in r.output
    assert not out.exists()
    (tmp_path / "bad.json").write_text('{"schema": "x"}')
    r = runner.invoke(app, ["bench", "report", str(tmp_path / "bad.json")])
    assert r.exit_code == 2 and "bad.json" in r.output
