"""The testing kit's gap assertion against a record's stored best plan, for a
scheduler author's own test suite: no exact solve at test time."""

from __future__ import annotations

import math
from typing import Any

from schedopt.bench.library import gap_to_record, record_instance, select
from schedopt.plan import Plan


def assert_record_gap(record_id: str, plan_or_solver: Any, *, max_gap: float, data_dir: Any = None,
                      seed: int | None = 0, time_limit: float | None = 60.0) -> float:
    """Check ``plan_or_solver`` (a Plan, a registered solver name or a solver object) on the
    record ``record_id``'s instance: the plan passes ``schedopt.check`` and its gap to the
    record's proven optimum is at most ``max_gap`` (a fraction). The record must be
    ``optimal`` (an open record's best known is no optimum to certify a gap against).
    Returns the gap; raises :class:`schedopt.testing.GapError` otherwise."""
    from schedopt.checking import check
    from schedopt.testing.gaps import GapError
    from schedopt.testing.harness import resolve, solve_checked

    sel = select(record_id)
    record = sel.records[0]
    if record.status != "optimal":
        raise GapError(f"record {record_id} is {record.status}: its best known ({record.best_known}) is not a proven "
                       "optimum, so no gap can be certified against it")
    instance = record_instance(record, data_dir)
    if isinstance(plan_or_solver, Plan):
        plan = plan_or_solver
        wrong = check(instance, plan)
        if wrong:
            raise GapError(f"plan of {plan.solver} fails schedopt.check on {record_id}: {wrong[0]} ({len(wrong)} in all)")
    else:
        subject = resolve(plan_or_solver, record.problem)
        plan = solve_checked(subject, instance, seed=seed, time_limit=time_limit)
    g = gap_to_record(plan, record)
    if g.improves:
        raise GapError(f"{plan.solver} beats the proven optimum of {record_id} ({plan.objective.value} vs "
                       f"{record.best_known}): the checker or the record is wrong")
    if g.gap > max_gap:
        what = "admits fewer jobs than" if math.isinf(g.gap) else f"is {100 * g.gap:.4g}% from"
        raise GapError(f"{plan.solver} on {record_id} {what} the recorded optimum {record.best_known} "
                       f"(value {plan.objective.value}; max_gap {100 * max_gap:.4g}%)")
    return max(0.0, g.gap)
