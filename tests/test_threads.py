"""Concurrent solves from threads neither hang nor differ from sequential ones
(issue: two Pyomo + HiGHS solves in two threads deadlocked in pyomo.common.tee, when
``pyomo.contrib.solver`` ran them; HiGHS now gets the compiled model and logs through a callback).
Every exact solver runs in three threads at once under a watchdog."""

from __future__ import annotations

import threading
import time

import pytest

import schedopt
from schedopt.generate import generate_instance
from tests.conftest import INSTANCES, assert_checked

WATCHDOG_S = 120.0
THREADS = 3


def instance_for(problem: str) -> schedopt.Instance:
    if problem == "allocation":
        return schedopt.load_instance(INSTANCES / "optimus-100.yaml")
    if problem == "quality":
        return schedopt.load_instance(INSTANCES / "slaq-40.yaml")
    if problem == "partition":
        return schedopt.load_instance(INSTANCES / "dorm-table2.yaml")
    return generate_instance("placement", jobs=6, servers=4, seed=1, max_tasks=3)


EXACT = [(s.name, s.problem) for s in schedopt.solvers() if s.exact]


@pytest.mark.parametrize("solver,problem", EXACT, ids=[n for n, _ in EXACT])
def test_concurrent_solves_match_sequential(solver: str, problem: str) -> None:
    inst = instance_for(problem)
    sequential = assert_checked(inst, schedopt.solve(inst, solver, seed=0, time_limit=60))
    results: dict[int, schedopt.Plan] = {}
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            results[i] = schedopt.solve(inst, solver, seed=0, time_limit=60)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(THREADS)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, WATCHDOG_S - (time.monotonic() - start)))
    hung = [t for t in threads if t.is_alive()]
    assert not hung, f"{len(hung)} of {THREADS} concurrent {solver} solves still running after {WATCHDOG_S:.0f} s"
    assert not errors, errors
    for plan in results.values():
        assert_checked(inst, plan)
        assert plan.status == sequential.status
        assert plan.allocation == sequential.allocation and plan.placement == sequential.placement
        assert plan.objective.value == pytest.approx(sequential.objective.value, rel=1e-9)
