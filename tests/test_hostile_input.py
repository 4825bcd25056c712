"""Every hostile input the reliability review found ends in one clear line:
exit 2 (1 for a failed check), no traceback, nothing written, bounded time.
Then a hypothesis fuzz test keeps it so: malformed documents and option
values through the CLI entry point in process."""

from __future__ import annotations

import copy
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import schedopt
from schedopt.cli import app
from tests.conftest import INSTANCES

runner = CliRunner()
HAND = yaml.safe_load((INSTANCES / "small-hand.yaml").read_text())
BOUNDED_S = 20.0


def invoke(args: list[str], cwd: Path) -> tuple[int, str, float]:
    before = set(os.listdir(cwd))
    t0 = time.monotonic()
    res = runner.invoke(app, args)
    elapsed = time.monotonic() - t0
    out = res.output or ""
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in out
    new = set(os.listdir(cwd)) - before
    if res.exit_code == 2:  # bad input writes nothing (an infeasible plan, exit 1, is a result and is written)
        assert not new, f"wrote {new} on bad input"
    return res.exit_code, out, elapsed


def write(tmp: Path, name: str, doc: Any = None, text: str | None = None) -> str:
    path = tmp / name
    path.write_text(text if text is not None else yaml.safe_dump(doc))
    return str(path)


def hand_with(**changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(HAND)
    for dotted, value in changes.items():
        node = doc
        keys = dotted.split("__")
        for k in keys[:-1]:
            node = node[int(k)] if k.isdigit() else node[k]
        last = keys[-1]
        if value is ...:
            del node[last]
        else:
            node[int(last) if last.isdigit() else last] = value
    return doc


CASES: list[tuple[str, Any, list[str], str]] = [
    # (id, document or raw text, extra args, a phrase of the message)
    ("deep yaml", "a: " + "[" * 50000 + "]" * 50000 + "\n", [], "nested more than"),
    ("deep json", '{"a": ' + "[" * 50000 + "]" * 50000 + "}", [], "nested more than"),
    ("capacity 1e308", hand_with(servers__0__capacity__gpu=1e308), [], "<= 1e+12"),
    ("steps 1e308 milp", hand_with(jobs__0__remaining_steps=1e308), ["--solver", "optimus-milp"], "<= 1e+15"),
    ("rel_gap -1", HAND, ["--solver", "optimus-milp", "--option", "rel_gap=-1"], "rel_gap"),
    ("rel_gap list", HAND, ["--solver", "optimus-milp", "--option", "rel_gap=[1,2]"], "rel_gap"),
    ("threads 100000", HAND, ["--solver", "optimus-milp", "--option", "threads=100000"], "threads"),
    ("workers -3", HAND, ["--solver", "optimus-cpsat", "--option", "workers=-3"], "workers"),
    ("seed -1", HAND, ["--seed", "-1"], "seed"),
    ("alias bomb", "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)), [], "values"),
    ("count 1e12", hand_with(servers__0__count=10**12), [], "servers[0].count"),
    ("count 1e7", hand_with(servers__0__count=10**7), [], "servers[0].count"),
    ("max 1e9", hand_with(jobs__0__roles__worker__max=10**9), [], "roles.worker.max"),
    ("bound maybe", HAND, ["--option", "bound=maybe"], "bound"),
    ("time limit -1", HAND, ["--time-limit", "-1"], "time_limit"),
    ("no jobs", hand_with(jobs=...), [], "jobs: required"),
    ("duplicate key", None, [], "duplicate key"),
]


@pytest.mark.parametrize("case,doc,extra,phrase", CASES, ids=[c[0] for c in CASES])
def test_hostile_solve_input(tmp_path: Path, case: str, doc: Any, extra: list[str], phrase: str) -> None:
    if case == "duplicate key":
        file = write(tmp_path, "bad.yaml", text=(INSTANCES / "small-hand.yaml").read_text() + "\nname: again\n")
    elif isinstance(doc, str):
        file = write(tmp_path, "bad.json" if doc.startswith("{") else "bad.yaml", text=doc)
    else:
        file = write(tmp_path, "bad.yaml", doc)
    args = ["solve", file] + (extra if "--solver" in extra else ["--solver", "optimus-greedy", *extra])
    code, out, elapsed = invoke(args + ["--out", str(tmp_path / "plan.yaml")], tmp_path)
    assert code == 2, out
    assert phrase in out and out.count("\n") <= 2, out
    assert elapsed < BOUNDED_S


def test_out_naming_a_directory_fails_before_solving(tmp_path: Path) -> None:
    code, out, _ = invoke(["solve", str(INSTANCES / "small-hand.yaml"), "--solver", "optimus-greedy", "--out", str(tmp_path)], tmp_path)
    assert code == 2 and str(tmp_path) in out


@pytest.mark.parametrize("args,phrase", [
    (["generate", "optimus", "--jobs", "1000000000", "--servers", "3"], "--jobs"),
    (["generate", "optimus", "--jobs", "3", "--servers", "1000000000000"], "--servers"),
    (["compare", str(INSTANCES / "small-hand.yaml"), "--solvers", ","], "no solver"),
])
def test_hostile_generate_and_compare(tmp_path: Path, args: list[str], phrase: str) -> None:
    if args[0] == "generate":
        args = args + ["--out", str(tmp_path / "g.yaml")]
    code, out, elapsed = invoke(args, tmp_path)
    assert code == 2 and phrase in out and elapsed < BOUNDED_S, out


@pytest.mark.parametrize("flag,value", [("--interval", "1e-6"), ("--horizon", "-1"), ("--restart-overhead", "inf")])
def test_hostile_simulate_settings(tmp_path: Path, flag: str, value: str) -> None:
    code, out, elapsed = invoke(["simulate", str(INSTANCES / "small-hand.yaml"), "--scheduler", "drf", flag, value,
                                 "--out", str(tmp_path / "r.yaml")], tmp_path)
    assert code == 2 and flag in out and elapsed < BOUNDED_S, out


def test_check_rejects_nan_unknown_jobs_and_false_infeasible(tmp_path: Path) -> None:
    inst = schedopt.load_instance(INSTANCES / "small-hand.yaml")
    plan = schedopt.solve(inst, "optimus-greedy")
    for label, bad in [
        ("nan value", plan.model_copy(update={"objective": plan.objective.model_copy(update={"value": float("nan")})})),
        ("nan bound", plan.model_copy(update={"objective": plan.objective.model_copy(update={"bound": float("nan")})})),
        ("nan gap", plan.model_copy(update={"objective": plan.objective.model_copy(update={"gap": float("nan")})})),
        ("nan metric", plan.model_copy(update={"metrics": {**plan.metrics, "tasks": float("nan")}})),
        ("false infeasible", plan.model_copy(update={"status": schedopt.Status.INFEASIBLE, "allocation": {},
                                                     "paused": ["a", "b"], "objective": plan.objective.model_copy(
                                                         update={"value": None, "bound": None, "gap": None, "admitted": 0})})),
        ("unknown job", plan.model_copy(update={"allocation": {**plan.allocation, "ghost": {"worker": 1}}})),
    ]:
        assert schedopt.check(inst, bad), label
        path = tmp_path / f"{label.replace(' ', '-')}.json"
        schedopt.save_plan(bad, path)
        code, out, _ = invoke(["check", str(INSTANCES / "small-hand.yaml"), str(path)], tmp_path)
        assert code == 1 and "violation" in out, (label, out)


def test_files_are_written_with_the_users_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        out = tmp_path / "plan.yaml"
        code, _, _ = invoke(["solve", str(INSTANCES / "small-hand.yaml"), "--solver", "optimus-greedy", "--out", str(out)], tmp_path)
        assert code == 0 and stat.S_IMODE(out.stat().st_mode) == 0o644
    finally:
        os.umask(old)


# ---- the fuzz test ------------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**15, 10**15), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
FIELDS = ["name", "resources", "servers", "jobs", "policy", "previous", "allocation", "servers__0__count",
          "servers__0__capacity", "servers__0__capacity__gpu", "jobs__0__roles", "jobs__0__roles__worker__max",
          "jobs__0__roles__worker__demand__gpu", "jobs__0__speed", "jobs__0__speed__form", "jobs__0__remaining_steps",
          "jobs__0__arrival", "jobs__1", "schema"]


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(field=st.sampled_from(FIELDS), value=values, solver=st.sampled_from(["optimus-greedy", "optimus-milp", "optimus-cpsat"]),
       option=st.one_of(st.none(), st.tuples(st.sampled_from(["rel_gap", "threads", "workers", "bound", "stop_rule", "nope"]),
                                              st.sampled_from(["-1", "0", "1e9", "[1]", "maybe", "nan", "1", "true"]))))
def test_fuzz_malformed_documents_and_options(tmp_path: Path, field: str, value: Any, solver: str,
                                             option: tuple[str, str] | None) -> None:
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    doc = hand_with(**{field: value})
    (work / "in.json").write_text(__import__("json").dumps(doc, allow_nan=True))
    args = ["solve", str(work / "in.json"), "--solver", solver, "--time-limit", "5", "--out", str(work / "plan.yaml")]
    if option is not None:
        args += ["--option", f"{option[0]}={option[1]}"]
    code, out, elapsed = invoke(args, work)
    assert code in (0, 1, 2), out
    if code == 2:
        lines = [line for line in out.splitlines() if line.strip()]
        assert lines and lines[0].startswith("error:"), out
    assert elapsed < BOUNDED_S
