"""``bench verify``: replay every record of a set from the instance alone.

For each record: the instance its recipe makes has the recorded checksum; the
stored plan answers it and passes ``check --strict`` (every claim replayed from
its certificate, none taken on a solver's word); its value, admitted count and
bounds are the record's; the record is ``optimal`` exactly when the plan's
verified status is. A tampered record, plan or recipe fails here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from schedopt.bench.library import record_instance, select
from schedopt.bench.records import Record, read_plan
from schedopt.bench.recipes import MissingData
from schedopt.errors import InputError
from schedopt.plan import Status
from schedopt.tolerances import REL_TOL


@dataclass
class VerifyRow:
    """One record: ``ok`` True (verified), False (``reason`` says what fails) or None (skipped)."""

    id: str
    set: str
    status: str
    ok: bool | None
    reason: str | None = None
    seconds: float = 0.0


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


def verify_record(record: Record, plan_path: Path, data_dir: Any = None) -> VerifyRow:
    """Replay one record (see the module's docstring)."""
    from schedopt.checking import check_report

    started = time.perf_counter()
    row = VerifyRow(record.id, record.set, record.status, True)

    def fail(why: str) -> VerifyRow:
        row.ok, row.reason, row.seconds = False, why, time.perf_counter() - started
        return row

    try:
        instance = record_instance(record, data_dir)
    except MissingData as exc:
        row.ok, row.reason = None, str(exc)
        return row
    except ValueError as exc:
        return fail(str(exc).split(": ", 1)[-1])
    except InputError as exc:
        return fail(f"the recipe does not make an instance: {exc.render(limit=1)}")
    if record.jobs != len(instance.jobs) or record.servers != len(instance.server_names):
        return fail(f"jobs/servers {record.jobs}/{record.servers} recorded, the instance has "
                    f"{len(instance.jobs)}/{len(instance.server_names)}")
    try:
        plan = read_plan(plan_path)
    except InputError as exc:
        return fail(exc.render(limit=1))
    if plan.problem != record.problem:
        return fail(f'the stored plan answers problem "{plan.problem}", the record says "{record.problem}"')
    report = check_report(instance, plan, strict=True)
    if report.violations or report.unverified:
        first = (report.violations or report.unverified)[0]
        return fail(f"the stored plan fails check --strict: {first}")
    o = plan.objective
    mismatches = []
    if o.name != record.objective or o.sense != record.sense:
        mismatches.append(f"objective {o.name} ({o.sense}) != recorded {record.objective} ({record.sense})")
    if not _close(o.value, record.best_known):
        mismatches.append(f"value {o.value} != best_known {record.best_known}")
    if not _close(o.bound, record.bound):
        mismatches.append(f"bound {o.bound} != recorded bound {record.bound}")
    if record.admitted is not None and o.admitted != record.admitted:
        mismatches.append(f"admitted {o.admitted} != recorded {record.admitted}")
    if record.admitted_bound is not None and o.admitted_bound != record.admitted_bound:
        mismatches.append(f"admitted_bound {o.admitted_bound} != recorded {record.admitted_bound}")
    proven = plan.status == Status.OPTIMAL
    if record.status == "optimal" and not proven:
        mismatches.append(f"recorded optimal, the stored plan's status is {plan.status.value}")
    if record.status == "open" and proven:
        mismatches.append("recorded open, the stored plan is verified optimal")
    if record.status == "infeasible":
        mismatches.append("infeasible: no certificate kind proves infeasibility, so no record may claim it")
    if mismatches:
        return fail("; ".join(mismatches))
    row.seconds = time.perf_counter() - started
    return row


def verify(spec: str = "all", *, data_dir: Any = None, submissions: list[Path] | None = None,
           progress: Callable[[VerifyRow], None] | None = None) -> list[VerifyRow]:
    """Replay every record ``spec`` names (:func:`schedopt.bench.library.select`); submission
    folders' records replace the package's by id."""
    sel = select(spec, submissions=submissions)
    rows = []
    for record in sel.records:
        row = verify_record(record, sel.plan_path(record), data_dir)
        rows.append(row)
        if progress is not None:
            progress(row)
    return rows
