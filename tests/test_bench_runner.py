"""`bench run` (issue 53): gaps to a record, the summary MIPLIB reports give, plugins,
improvements written where `bench verify` accepts them, and the testing kit's
assertion against a recorded optimum."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from schedopt import solve
from schedopt.bench import (assert_record_gap, gap_to_record, load_collection, record_instance, run,
                            shifted_geometric_mean, verify)
from schedopt.bench.build import best_verified
from schedopt.bench.records import Collection, Record, collection_dir, read_plan, write_collection, write_plan
from schedopt.bench.report import read_run, render
from schedopt.errors import InputError
from schedopt.plan import Objective, Plan, Status, Termination
from schedopt.testing import GapError


def rec(rid: str) -> Record:
    return next(r for r in load_collection()[0].records if r.id == rid)


def plan_with(sense: str, value: float, admitted: int | None = None) -> Plan:
    return Plan(instance="x", solver="s", status=Status.HEURISTIC, termination=Termination.COMPLETED, solve_seconds=0.0,
                objective=Objective(name="o", sense=sense, value=value, admitted=admitted))


def test_gap_to_record_by_hand() -> None:
    r = rec("optimus-50j-12s-s1")  # min, 12 admitted
    best = r.best_known
    assert gap_to_record(plan_with("min", best, 12), r).gap == 0.0
    g = gap_to_record(plan_with("min", 2 * best, 12), r)
    assert g.gap == pytest.approx(0.5) and not g.improves
    g = gap_to_record(plan_with("min", best * 0.9, 12), r)
    assert g.improves and g.gap < 0
    g = gap_to_record(plan_with("min", 0.5 * best, 11), r)
    assert math.isinf(g.gap) and g.fewer_admitted and not g.improves and g.as_json() is None
    assert gap_to_record(plan_with("min", 3 * best, 13), r).improves
    assert not gap_to_record(plan_with("min", best * (1 + 1e-12), 12), r).improves
    q = rec("slaq-10j-1s-t4-s1")  # max
    assert q.sense == "max"
    assert gap_to_record(plan_with("max", q.best_known / 2, q.admitted), q).gap == pytest.approx(1.0)


def test_shifted_geometric_mean() -> None:
    assert shifted_geometric_mean([]) is None
    assert shifted_geometric_mean([1.0, 1.0]) == pytest.approx(1.0)
    assert shifted_geometric_mean([0.0, 3.0]) == pytest.approx(math.sqrt(4.0) - 1.0)


def test_run_reports_gaps_and_summary() -> None:
    result = run("optimus-8j-3s-t3-s1,optimus-50j-12s-s1,kit-quota-s1,slaq-10j-1s-t4-s1", "optimus-greedy")
    assert result.problem == "allocation" and result.other_problems == 1
    assert [r.id for r in result.rows] == ["optimus-8j-3s-t3-s1", "optimus-50j-12s-s1", "kit-quota-s1"]
    for row in result.rows:
        assert row.outcome == "solved" and row.verified and row.gap is not None and row.gap >= 0
        assert row.best_status == "optimal"
    s = result.summary()
    assert s["ran"] == 3 and s["solved"] == 3 and s["check_failed"] == 0
    assert s["at_best"] == sum(r.gap <= 1e-4 for r in result.rows)
    assert s["worst_gap"] == max(r.gap for r in result.rows)
    data = result.to_dict()
    assert data["environment"]["versions"]["schedopt"] and data["summary"]["sgm_shift_s"] == 1.0


def test_exact_solver_meets_every_optimal_record() -> None:
    result = run("optimus-8j-3s-t3-s1,optimus-50j-12s-s1,kit-quota-s1,optimus-running-50j-50s-s1", "optimus-milp",
                 time_limit=30)
    assert all(r.outcome == "solved" and r.gap is not None and abs(r.gap) <= 1e-4 and not r.improves for r in result.rows)
    assert result.summary()["proven_optimal"] == 4


def test_refusals_are_rows_not_errors() -> None:
    """A solver that does not model what an instance states (a plugin declaring no quotas
    nor types: every built-in allocation solver takes them) is refused there, in its row."""
    from schedopt import registry

    registry.register_class("bench-flagless-plugin", FlaglessGreedy)
    try:
        result = run("kit-quota-s1,optimus-8j-3s-t3-s1", "bench-flagless-plugin")
    finally:
        registry._REGISTRY.pop("bench-flagless-plugin", None)
    by_id = {r.id: r for r in result.rows}
    assert by_id["kit-quota-s1"].outcome == "refused" and by_id["kit-quota-s1"].note
    assert by_id["optimus-8j-3s-t3-s1"].outcome == "solved"
    assert result.summary()["refused"] == 1


def test_bad_arguments() -> None:
    with pytest.raises(InputError, match="solver"):
        run("benchmark", "no-such-solver")
    with pytest.raises(InputError, match="time_limit"):
        run("benchmark", "optimus-greedy", time_limit=-1)


class FlaglessGreedy:
    """A plugin declaring no capability flags: optimus-greedy under another name."""

    problem = "allocation"

    def solve(self, instance, *, time_limit=None, seed=None) -> Plan:
        plan = solve(instance, "optimus-greedy", seed=seed)
        return plan.model_copy(update={"solver": "bench-flagless-plugin"})


class EchoGreedy:
    """A plugin: optimus-greedy under another name."""

    problem = "allocation"

    def solve(self, instance, *, time_limit=None, seed=None) -> Plan:
        plan = solve(instance, "optimus-greedy", seed=seed)
        return plan.model_copy(update={"solver": "bench-test-plugin"})


def test_a_plugin_solver_runs_with_one_call() -> None:
    from schedopt import registry

    registry.register_class("bench-test-plugin", EchoGreedy)
    try:
        result = run("optimus-50j-12s-s1", "bench-test-plugin")
    finally:
        registry._REGISTRY.pop("bench-test-plugin", None)
    row = result.rows[0]
    assert row.outcome == "solved" and row.gap is not None and row.gap >= 0


def _worse_submission(folder: Path, rid: str) -> Record:
    """A valid record of ``rid`` whose best known is optimus-greedy's (worse than the optimum)."""
    r = rec(rid)
    inst = record_instance(r)
    greedy = solve(inst, "optimus-greedy")
    claimed, _ = best_verified(inst, [greedy], lexicographic=True)
    o = claimed.objective
    worse = r.model_copy(update={"best_known": o.value, "bound": o.bound, "admitted_bound": o.admitted_bound,
                                 "admitted": o.admitted, "status": "optimal" if claimed.status == Status.OPTIMAL else "open"})
    write_plan(folder / r.plan, claimed)
    write_collection(folder, Collection(collection=load_collection()[0].collection, created="now", records=[worse]))
    return worse


def test_improvement_is_written_and_verifies(tmp_path: Path) -> None:
    rid = "optimus-50j-12s-s1"
    worse = _worse_submission(tmp_path / "worse", rid)
    assert worse.status == "open" and worse.best_known > rec(rid).best_known
    assert verify(rid, submissions=[tmp_path / "worse"])[0].ok is True
    result = run(rid, "optimus-milp", time_limit=30, submissions=[tmp_path / "worse"], submit=tmp_path / "better")
    row = result.rows[0]
    assert row.improves and row.gap is not None and row.gap < 0
    new = verify(rid, submissions=[tmp_path / "better"])[0]
    assert new.ok is True, new.reason
    better = load_collection(submissions=[tmp_path / "better"])[0]
    record = next(r for r in better.records if r.id == rid)
    assert record.status == "optimal" and record.provenance.solver == "optimus-milp"
    assert record.history[-1]["best_known"] == worse.best_known
    assert record.best_known == pytest.approx(rec(rid).best_known, rel=1e-6)


def test_nothing_submitted_without_improvement(tmp_path: Path) -> None:
    run("optimus-8j-3s-t3-s1", "optimus-greedy", submit=tmp_path / "sub")
    assert not (tmp_path / "sub" / "records.json").exists()


def test_assert_record_gap() -> None:
    best = read_plan(collection_dir() / rec("optimus-50j-12s-s1").plan)
    assert assert_record_gap("optimus-50j-12s-s1", best, max_gap=0.0) == 0.0
    gap = assert_record_gap("optimus-50j-12s-s1", "optimus-greedy", max_gap=0.5)
    assert 0.0 <= gap <= 0.5
    if gap > 0:
        with pytest.raises(GapError, match="from the recorded optimum"):
            assert_record_gap("optimus-50j-12s-s1", "optimus-greedy", max_gap=gap / 2)
    with pytest.raises(GapError, match="not a proven optimum"):
        assert_record_gap("placement-10j-5s-t2-s1", "optimus-placement", max_gap=0.1)


def test_report_renders_runs(tmp_path: Path) -> None:
    from schedopt.io import write_document

    result = run("optimus-8j-3s-t3-s1,optimus-50j-12s-s1", "optimus-greedy")
    path = tmp_path / "run.json"
    write_document(path, result.to_dict(), tidy=True)
    page = render([read_run(path)], kinds={"optimus-greedy": "heuristic"})
    assert "## allocation (2 instances)" in page and "`optimus-greedy`" in page
    assert result.environment["versions"]["numpy"] in page
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(InputError, match="bad.json"):
        read_run(tmp_path / "bad.json")


def test_leaderboard_page_is_its_stored_runs() -> None:
    """docs/leaderboard.md is what `bench report` renders from benchmarks/results/leaderboard/."""
    from schedopt.bench import report
    from schedopt.bench.report import LEADERBOARD_COMMAND

    root = Path(__file__).resolve().parent.parent
    runs = sorted((root / "benchmarks" / "results" / "leaderboard").glob("*.json"))
    assert runs, "no stored leaderboard runs"
    assert report(runs, command=LEADERBOARD_COMMAND) + "\n" == (root / "docs" / "leaderboard.md").read_text()
    from schedopt.registry import solvers

    ranked = {json_solver(p) for p in runs}
    assert {s.name for s in solvers()} <= ranked  # every built-in solver is on the board


def json_solver(path: Path) -> str:
    import json

    return json.loads(path.read_text())["solver"]


def test_hard_pass_improves_or_tags(tmp_path: Path) -> None:
    """The build's hard pass: an open record with a real gap gets the MILP; a better plan it
    proves optimal replaces the record's (old best in history), else the record is tagged hard."""
    import json as _json

    from schedopt.bench.build import HARD_TAG, harden_open

    rid = "optimus-50j-12s-s1"
    worse = _worse_submission(tmp_path / "worse", rid)
    stage = tmp_path / "stage"
    (stage / "records").mkdir(parents=True)
    (stage / "plans").mkdir()
    (stage / "plans" / f"{rid}.json.gz").write_bytes((tmp_path / "worse" / worse.plan).read_bytes())
    (stage / "records" / f"{rid}.json").write_text(_json.dumps(worse.model_dump(mode="json")))
    assert harden_open(stage, only=[rid], time_limit_s=20) == []
    got = Record.model_validate(_json.loads((stage / "records" / f"{rid}.json").read_text()))
    assert got.status == "optimal" and HARD_TAG not in got.tags
    assert got.best_known == pytest.approx(rec(rid).best_known, rel=1e-6)
    assert got.history and got.history[-1]["best_known"] == worse.best_known
    from schedopt.bench.verify import verify_record

    assert verify_record(got, stage / got.plan).ok is True
