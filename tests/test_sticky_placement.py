"""Placement that keeps running tasks where they are (issue 15 §2): the exact
models' fewest-moved-tasks stage against a brute force written here, the
heuristics' incremental placement, and the moved-task metrics in the checker."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import schedopt
from schedopt.instance import Instance
from schedopt.placement.problem import transfer_time_s
from tests.conftest import assert_checked
from tests.test_placement import placement_instance, ps_job
from tests.test_placement_exact import random_placement_instance

EXACT = ["placement-milp", "placement-cpsat"]
HEURISTICS = ["optimus-placement", "kube-default", "dltap"]


def with_previous(inst: Instance, previous: dict) -> Instance:
    d = inst.to_dict()
    d["previous"] = previous
    return Instance.from_dict(d)


def _hand() -> Instance:
    inst = placement_instance([ps_job("a", 1, 2), ps_job("b", 1, 2), ps_job("c", 1, 1)], servers=3, slots=3)
    servers = inst.server_names
    return with_previous(inst, {"a": {servers[0]: {"ps": 1, "worker": 1}, servers[1]: {"worker": 1}},
                                "b": {servers[2]: {"ps": 1, "worker": 2}}})


@pytest.mark.parametrize("solver", HEURISTICS + EXACT)
def test_running_jobs_stay_put_when_nothing_changed(solver: str) -> None:
    inst = _hand()
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.metrics["moved_tasks"] == 0 and plan.metrics["moved_jobs"] == 0 and plan.metrics["kept_tasks"] == 6
    assert plan.placement["a"] == inst.previous["a"] and plan.placement["b"] == inst.previous["b"]


@pytest.mark.parametrize("solver", HEURISTICS)
def test_keep_false_replaces_from_scratch(solver: str) -> None:
    inst = _hand()
    plan = assert_checked(inst, schedopt.solve(inst, solver, keep=False))
    scratch = assert_checked(inst, schedopt.solve(inst.model_copy(update={"previous": None}), solver, keep=False))
    assert plan.placement == scratch.placement  # the running placement is only reported against


def test_a_shrinking_job_keeps_its_largest_groups_and_a_growing_one_adds_tasks() -> None:
    inst = placement_instance([ps_job("a", 1, 3), ps_job("b", 1, 3)], servers=3, slots=4)
    s = inst.server_names
    d = inst.to_dict()
    d["allocation"] = {"a": {"ps": 1, "worker": 2}, "b": {"ps": 1, "worker": 4}}
    d["previous"] = {"a": {s[0]: {"ps": 1, "worker": 2}, s[1]: {"worker": 1}}, "b": {s[2]: {"ps": 1, "worker": 3}}}
    for j in d["jobs"]:
        j["roles"]["worker"]["max"] = 4
    inst = Instance.from_dict(d)
    for solver in HEURISTICS:
        plan = assert_checked(inst, schedopt.solve(inst, solver))
        assert plan.placement["a"] == {s[0]: {"ps": 1, "worker": 2}}, solver
        assert plan.placement["b"][s[2]] == {"ps": 1, "worker": 3}, solver
        assert plan.metrics["moved_tasks"] == 0 and plan.metrics["moved_jobs"] == 2


def test_the_checker_recomputes_moved_tasks() -> None:
    inst = _hand()
    plan = schedopt.solve(inst, "optimus-placement", keep=False)
    wrong = plan.model_copy(update={"metrics": {**plan.metrics, "moved_tasks": plan.metrics["moved_tasks"] + 1}})
    assert any(v.path == "metrics.moved_tasks" for v in schedopt.check(inst, wrong))


# ---- the exact models against a brute force ---------------------------------------------------

def _random_previous(seed: int) -> Instance:
    """A random tiny placement instance whose jobs run somewhere (a random feasible
    placement of other counts: some jobs grew, some shrank, one may be new)."""
    inst = random_placement_instance(seed)
    rng = np.random.default_rng(500 + seed)
    servers = inst.server_names
    previous = {}
    for job in inst.jobs[: len(inst.jobs) - int(rng.integers(0, 2))]:
        per = {}
        for role in ("ps", "worker"):
            for _ in range(int(rng.integers(1, inst.allocation[job.id][role] + 2))):
                srv = servers[int(rng.integers(len(servers)))]
                per.setdefault(srv, {}).setdefault(role, 0)
                per[srv][role] += 1
        previous[job.id] = per
    return with_previous(inst, previous)


def _splits(n: int, k: int) -> list[tuple[int, ...]]:
    return [c for c in itertools.product(range(n + 1), repeat=k) if sum(c) == n]


def _brute_force(inst: Instance) -> tuple[int, int, float]:
    """(most placed jobs, then fewest moved tasks, then least Σ T_j), by enumeration."""
    servers = inst.server_names
    cap = inst.server_capacity
    per_job = []
    for job in inst.jobs:
        p, w = inst.allocation[job.id]["ps"], inst.allocation[job.id]["worker"]
        old = inst.previous.get(job.id)
        d_ps, d_w = inst.vector(job.roles["ps"].demand), inst.vector(job.roles["worker"].demand)
        opts = [None]
        for pk in _splits(p, len(servers)):
            for wk in _splits(w, len(servers)):
                P, W = np.array(pk), np.array(wk)
                load = P[:, None] * d_ps + W[:, None] * d_w
                if np.any(load > cap + 1e-9):
                    continue
                moved = 0
                if old:
                    for role, new in (("ps", P), ("worker", W)):
                        was = np.array([old.get(s, {}).get(role, 0) for s in servers])
                        moved += min(int(new.sum()), int(was.sum())) - int(np.minimum(new, was).sum())
                t = transfer_time_s(job.model_size, p, w, P, W, job.bandwidth.ps, job.bandwidth.worker)
                opts.append((moved, t, load))
        per_job.append(opts)
    best = (-1, math.inf, math.inf)
    for combo in itertools.product(*per_job):
        chosen = [o for o in combo if o is not None]
        if np.any(sum((o[2] for o in chosen), np.zeros_like(cap)) > cap + 1e-9):
            continue
        key = (len(chosen), sum(o[0] for o in chosen), sum(o[1] for o in chosen))
        if (key[0], -key[1], -key[2]) > (best[0], -best[1], -best[2]):
            best = key
    return best


@pytest.mark.parametrize("seed", range(8))
def test_exact_models_equal_brute_force_with_fewest_moves_first(seed: int) -> None:
    inst = _random_previous(seed)
    placed, moved, total = _brute_force(inst)
    for solver in EXACT:
        plan = assert_checked(inst, schedopt.solve(inst, solver))
        assert plan.status == schedopt.Status.OPTIMAL, (solver, plan.message)
        assert plan.objective.admitted == placed, solver
        assert plan.metrics["moved_tasks"] == moved, solver
        assert plan.objective.value == pytest.approx(total, abs=1e-6), solver
    for solver in HEURISTICS:
        plan = assert_checked(inst, schedopt.solve(inst, solver))
        if plan.objective.admitted == placed:
            assert plan.metrics["moved_tasks"] >= moved, solver  # never fewer moves than the optimum


@pytest.mark.parametrize("seed", range(4))
def test_moves_ignore_is_the_plain_optimum(seed: int) -> None:
    inst = _random_previous(seed)
    plain = schedopt.solve(inst.model_copy(update={"previous": None}), "placement-milp")
    for solver in EXACT:
        plan = assert_checked(inst, schedopt.solve(inst, solver, moves="ignore"))
        assert plan.objective.value == pytest.approx(plain.objective.value, abs=1e-6)
