"""Baseline allocation policies: drf, tetris, fifo, srtf on hand-checked cases,
and never better than the exact optimum."""

from __future__ import annotations

import pytest

import schedopt
from tests.conftest import assert_checked, make_instance, random_tiny_instance

BASELINES = ["drf", "tetris", "fifo", "srtf"]
LINEAR = {"form": "amdahl", "serial": 0.0, "parallel": 1.0}  # f(n) = n steps/s


def one_role(job_id: str, demand: dict[str, float], steps: float, *, arrival: float = 0.0, hi: int = 10) -> dict:
    return {"id": job_id, "arrival": arrival, "roles": {"worker": {"demand": demand, "min": 1, "max": hi}},
            "speed": LINEAR, "remaining_steps": steps}


def test_drf_paper_example() -> None:
    """DRF paper §4: 9 CPUs, 18 GB; A's tasks <1 CPU, 4 GB>, B's <3 CPU, 1 GB>: A gets 3 tasks, B 2."""
    inst = make_instance([one_role("A", {"cpu": 1, "mem": 4}, 100), one_role("B", {"cpu": 3, "mem": 1}, 100)],
                         {"cpu": 9, "mem": 18})
    plan = assert_checked(inst, schedopt.solve(inst, "drf", seed=0))
    assert plan.allocation == {"A": {"worker": 3}, "B": {"worker": 2}}


def test_drf_weights() -> None:
    """Weight 2 doubles a job's fair share: 6 slots split 4:2."""
    a, b = one_role("A", {"cpu": 1}, 100), one_role("B", {"cpu": 1}, 100)
    a["weight"] = 2
    inst = make_instance([a, b], {"cpu": 6})
    assert assert_checked(inst, schedopt.solve(inst, "drf")).allocation == {"A": {"worker": 4}, "B": {"worker": 2}}


def test_srtf_picks_the_shortest() -> None:
    inst = make_instance([one_role("long", {"cpu": 1}, 1000, hi=3), one_role("short", {"cpu": 1}, 100, arrival=10, hi=3)],
                         {"cpu": 4})
    plan = assert_checked(inst, schedopt.solve(inst, "srtf"))
    assert plan.allocation == {"long": {"worker": 1}, "short": {"worker": 3}}


def test_fifo_respects_arrival_order() -> None:
    inst = make_instance([one_role("late", {"cpu": 1}, 100, arrival=10, hi=3), one_role("early", {"cpu": 1}, 1000, hi=3)],
                         {"cpu": 4})
    plan = assert_checked(inst, schedopt.solve(inst, "fifo"))
    assert plan.allocation == {"late": {"worker": 1}, "early": {"worker": 3}}


def test_tetris_prefers_short_jobs_and_fills_the_cluster() -> None:
    inst = make_instance([one_role("long", {"cpu": 1}, 1000, hi=8), one_role("short", {"cpu": 1}, 100, hi=8)], {"cpu": 8})
    plan = assert_checked(inst, schedopt.solve(inst, "tetris"))
    assert plan.metrics["utilization"]["cpu"] == pytest.approx(1.0)
    workers = {j: plan.allocation.get(j, {}).get("worker", 0) for j in ("long", "short")}
    assert workers["short"] >= workers["long"]  # by default Tetris's own score admits too: the long job may wait


def test_two_role_jobs_grow_one_to_one() -> None:
    sync = {"form": "optimus-sync", "theta": [1.02, 2.78, 4.92, 0.0, 0.02], "batch": 32}
    job = {"id": "j", "roles": {"ps": {"demand": {"cpu": 1}, "min": 1, "max": 8}, "worker": {"demand": {"cpu": 1}, "min": 1, "max": 8}},
           "speed": sync, "remaining_steps": 1000}
    inst = make_instance([job], {"cpu": 10})
    for name in BASELINES:
        plan = assert_checked(inst, schedopt.solve(inst, name))
        assert plan.allocation["j"] == {"ps": 5, "worker": 5}, name


@pytest.mark.parametrize("seed", range(8))
def test_never_better_than_the_optimum(seed: int) -> None:
    inst = random_tiny_instance(300 + seed)
    best = schedopt.solve(inst, "optimus-milp")
    for name in BASELINES:
        plan = assert_checked(inst, schedopt.solve(inst, name, seed=seed))
        assert plan.objective.admitted <= best.objective.admitted
        if best.objective.value is not None and plan.objective.admitted == best.objective.admitted:
            assert plan.objective.value >= best.objective.value * (1 - 1e-9), name


def _tie_instance():
    """Two jobs with equal dominant (cpu) shares; B's second share (mem) is lower. One task fits after both minimums."""
    jobs = [{"id": "A", "roles": {"worker": {"demand": {"cpu": 1, "mem": 2}, "min": 1, "max": 2}},
             "speed": {"form": "amdahl", "serial": 0.0, "parallel": 1.0}, "remaining_steps": 10, "arrival": 0},
            {"id": "B", "roles": {"worker": {"demand": {"cpu": 1, "mem": 1}, "min": 1, "max": 2}},
             "speed": {"form": "amdahl", "serial": 0.0, "parallel": 1.0}, "remaining_steps": 10, "arrival": 5}]
    return make_instance(jobs, {"cpu": 3, "mem": 10})


def test_drf_tie_break_mesos_listing_order_vs_yarn_second_share() -> None:
    inst = _tie_instance()
    mesos = assert_checked(inst, schedopt.solve(inst, "drf"))
    yarn = assert_checked(inst, schedopt.solve(inst, "drf", tie_break="second-share"))
    assert mesos.allocation == {"A": {"worker": 2}, "B": {"worker": 1}}  # equal cpu share: the earlier job
    assert yarn.allocation == {"A": {"worker": 1}, "B": {"worker": 2}}  # equal cpu share: the lower mem share
    assert yarn.options["tie_break"] == "second-share"


def test_drf_stop_at_first_failure_as_the_dl2_repository() -> None:
    """After B's second task, A (2 cpu per task) is next and does not fit; the paper's DRF goes on growing B, DL2's stops."""
    jobs = [{"id": "A", "roles": {"worker": {"demand": {"cpu": 2}, "min": 1, "max": 2}},
             "speed": {"form": "amdahl", "serial": 0.0, "parallel": 1.0}, "remaining_steps": 10, "arrival": 0},
            {"id": "B", "roles": {"worker": {"demand": {"cpu": 1}, "min": 1, "max": 3}},
             "speed": {"form": "amdahl", "serial": 0.0, "parallel": 1.0}, "remaining_steps": 10, "arrival": 1}]
    inst = make_instance(jobs, {"cpu": 5})
    paper = assert_checked(inst, schedopt.solve(inst, "drf"))
    dl2 = assert_checked(inst, schedopt.solve(inst, "drf", stop="first-failure"))
    assert paper.allocation == {"A": {"worker": 1}, "B": {"worker": 3}}
    assert dl2.allocation == {"A": {"worker": 1}, "B": {"worker": 2}}


def test_drf_rejects_unknown_options() -> None:
    from schedopt.errors import InputError

    with pytest.raises(InputError, match="tie_break"):
        schedopt.get_solver("drf", tie_break="random")
