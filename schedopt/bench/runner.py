"""``bench run``: any registered solver (plugins too) on each record of a set;
each plan checked, its gap to the best known reported, and a summary as MIPLIB
reports give it (solved count, mean gap, shifted geometric mean time).

A plan better than its record is an improvement: with ``submit``, it is written
with its record (the old best kept in ``history``) into a submission folder that
``bench verify --submission DIR`` replays. It carries the record's proof where
that still holds (a bound is about the instance, not about one plan).
"""

from __future__ import annotations

import math
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

from schedopt.bench.library import RecordGap, Selection, gap_to_record, record_instance, select
from schedopt.bench.records import Collection, Provenance, Record, read_plan, write_collection, write_plan
from schedopt.bench.recipes import MissingData
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan, Status
from schedopt.tolerances import OPTIMAL_GAP

#: the shift of the shifted geometric mean of times, seconds (MIPLIB's reports use 1 s or 10 s)
SGM_SHIFT_S = 1.0
RUN_SCHEMA = "schedopt/bench-run@1"


@dataclass
class RunRow:
    """One record's outcome. ``outcome``: ``solved`` (a plan that check accepts), ``no-plan``
    (infeasible or stopped with none), ``refused`` (the solver does not model what the
    instance states), ``check-failed``, ``skipped`` (its data folder is absent) or
    ``instance-differs`` (the materialised instance is not the recorded one)."""

    id: str
    set: str
    outcome: str
    status: str | None = None
    value: float | None = None
    admitted: int | None = None
    best_known: float | None = None
    best_admitted: int | None = None
    best_status: str | None = None
    gap: float | None = None
    fewer_admitted: bool = False
    improves: bool = False
    verified: bool = False
    seconds: float | None = None
    note: str | None = None


@dataclass
class RunResult:
    """What ``bench run`` found, with the environment it ran in."""

    collection: str
    set: str
    solver: str
    problem: str
    time_limit: float | None
    seed: int | None
    options: dict[str, Any]
    rows: list[RunRow]
    environment: dict[str, Any] = field(default_factory=dict)
    other_problems: int = 0

    def summary(self) -> dict[str, Any]:
        return summarize(self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": RUN_SCHEMA, "collection": self.collection, "set": self.set, "solver": self.solver,
                "problem": self.problem, "time_limit": self.time_limit, "seed": self.seed, "options": self.options,
                "environment": self.environment, "other_problems": self.other_problems,
                "summary": self.summary(), "instances": [asdict(r) for r in self.rows]}


def shifted_geometric_mean(values: list[float], shift: float = SGM_SHIFT_S) -> float | None:
    """exp(mean(log(t + shift))) - shift (None for no values)."""
    if not values:
        return None
    return math.exp(sum(math.log(v + shift) for v in values) / len(values)) - shift


def summarize(rows: list[RunRow]) -> dict[str, Any]:
    """Counts, gaps and times of ``rows``: ``at_best`` counts plans within 1e-4 of the best
    known or better; ``proven_optimal`` those whose "optimal" ``check --strict`` verifies;
    mean and worst gap over plans admitting as many jobs as the record."""
    ran = [r for r in rows if r.outcome not in ("refused", "skipped", "instance-differs")]
    solved = [r for r in ran if r.outcome == "solved"]
    gaps = [max(0.0, r.gap) for r in solved if r.gap is not None]
    return {
        "records": len(rows), "ran": len(ran), "solved": len(solved),
        "skipped": sum(r.outcome == "skipped" for r in rows), "refused": sum(r.outcome == "refused" for r in rows),
        "no_plan": sum(r.outcome == "no-plan" for r in rows), "check_failed": sum(r.outcome == "check-failed" for r in rows),
        "instance_differs": sum(r.outcome == "instance-differs" for r in rows),
        "at_best": sum(r.improves or (r.gap is not None and r.gap <= OPTIMAL_GAP) for r in solved),
        "proven_optimal": sum(r.verified and r.status == Status.OPTIMAL.value for r in solved),
        "improvements": sum(r.improves for r in solved),
        "fewer_admitted": sum(r.fewer_admitted for r in solved),
        "mean_gap": sum(gaps) / len(gaps) if gaps else None, "worst_gap": max(gaps) if gaps else None,
        "sgm_seconds": shifted_geometric_mean([r.seconds for r in ran if r.seconds is not None]),
        "sgm_shift_s": SGM_SHIFT_S,
    }


def environment() -> dict[str, Any]:
    """Date, versions and machine of this run."""
    import datetime as dt

    versions = {}
    for pkg in ("schedopt", "numpy", "scipy", "pyomo", "highspy", "ortools"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    return {"date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
            "python": platform.python_version(), "versions": versions, "machine": platform.machine(),
            "system": platform.system(), "cores": os.cpu_count()}


def run(spec: str, solver: str, *, time_limit: float | None = None, seed: int | None = 0,
        options: dict[str, Any] | None = None, data_dir: Any = None, submissions: list[Path] | None = None,
        submit: Path | None = None, progress: Callable[[RunRow], None] | None = None) -> RunResult:
    """Run ``solver`` on every record of ``spec`` (:func:`schedopt.bench.library.select`) that poses
    its problem; each plan is checked (and its claims replayed) from the instance alone.
    ``submit``: write improvements there (a submission folder for ``bench verify``)."""
    from schedopt.api import check_run_settings
    from schedopt.registry import solver_info

    check_run_settings(time_limit, seed)
    info = solver_info(solver)
    if info.unavailable is not None:
        raise InputError("--solver", f"{solver} cannot run here: {info.unavailable}")
    sel = select(spec, submissions=submissions)
    mine = [r for r in sel.records if r.problem == info.problem]
    result = RunResult(sel.collection.collection, spec, solver, info.problem, time_limit, seed, dict(options or {}), [],
                       environment(), other_problems=len(sel.records) - len(mine))
    improved: list[Record] = []
    for record in mine:
        row, plan, instance = _run_one(record, solver, time_limit, seed, dict(options or {}), data_dir)
        result.rows.append(row)
        if progress is not None:
            progress(row)
        if submit is not None and plan is not None and instance is not None and row.improves and row.outcome == "solved":
            improved.append(_submission(record, sel, instance, plan, time_limit, submit))
    if submit is not None and improved:
        write_collection(submit, Collection(collection=sel.collection.collection, created=result.environment["date"],
                                            records=improved))
    return result


def _run_one(record: Record, solver: str, time_limit: float | None, seed: int | None,
             options: dict[str, Any], data_dir: Any) -> tuple[RunRow, Plan | None, Instance | None]:
    from schedopt.api import solve
    from schedopt.checking import check_report

    row = RunRow(record.id, record.set, "solved", best_known=record.best_known, best_admitted=record.admitted,
                 best_status=record.status)
    try:
        instance = record_instance(record, data_dir)
    except MissingData as exc:
        row.outcome, row.note = "skipped", str(exc)
        return row, None, None
    except ValueError as exc:
        row.outcome, row.note = "instance-differs", str(exc)
        return row, None, None
    started = time.perf_counter()
    try:
        plan = solve(instance, solver, time_limit=time_limit, seed=seed, **options)
    except InputError as exc:
        row.outcome, row.note = "refused", exc.render(limit=1)
        return row, None, instance
    row.seconds = time.perf_counter() - started
    row.status = plan.status.value
    if not plan.has_solution:
        row.outcome, row.note = "no-plan", plan.message
        return row, None, instance
    report = check_report(instance, plan, strict=True)
    if report.violations:
        row.outcome, row.note = "check-failed", f"{report.violations[0]} ({len(report.violations)} in all)"
        return row, None, instance
    row.verified = not report.unverified
    row.value, row.admitted = plan.objective.value, plan.objective.admitted
    g: RecordGap = gap_to_record(plan, record)
    row.gap, row.fewer_admitted, row.improves = g.as_json(), g.fewer_admitted, g.improves
    if g.improves and record.status == "optimal":
        row.outcome = "check-failed"
        row.note = "better than the record's proven optimum: the checker, the record or its certificate is wrong"
        return row, None, instance
    return row, plan, instance


def _submission(record: Record, sel: Selection, instance: Instance, plan: Plan, time_limit: float | None,
                folder: Path) -> Record:
    """The improved record: ``plan`` with the tightest claims ``check --strict`` verifies
    (its own, or the old best plan's proofs), written under ``folder``."""
    from schedopt.bench.build import best_verified, now_iso
    from schedopt.problems import get_problem
    from schedopt import __version__

    old = read_plan(sel.plan_path(record))
    lexicographic = get_problem(record.problem).lexicographic_admission
    # the new plan is the best; the old one only lends its proofs
    claimed, bound_from = best_verified(instance, [plan, old], lexicographic)
    write_plan(folder / record.plan, claimed)
    o = claimed.objective
    history = [*record.history, {"best_known": record.best_known, "admitted": record.admitted, "bound": record.bound,
                                 "status": record.status, "provenance": record.provenance.model_dump(mode="json")}]
    return record.model_copy(update={
        "status": "optimal" if claimed.status == Status.OPTIMAL else "open", "best_known": o.value,
        "admitted": o.admitted if lexicographic else None, "bound": o.bound,
        "admitted_bound": o.admitted_bound if lexicographic else None, "backend_optimal": False, "history": history,
        "provenance": Provenance(solver=plan.solver, bound_from=bound_from, options=plan.options, time_limit_s=time_limit,
                                 seconds=plan.solve_seconds, date=now_iso(), schedopt=__version__)})
