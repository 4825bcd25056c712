"""The average-JCT objective (issue 50 §1, ``allocation/objectives.py``): its value from
the formula computed here by hand, the exact solvers against brute force and each other,
the heuristics never better than the optimum, the checker reading the objective a plan
names, and the SRPT preference that Σ t_j lacks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

import schedopt
from schedopt.allocation.bruteforce import solve_bruteforce_typed
from schedopt.cli import app
from schedopt.errors import InputError
from schedopt.testing import random_objective_instance
from tests.conftest import assert_checked

JCT = "jct_weighted_time"
H = 3600.0


def _two_types(steps: tuple[float, float]) -> schedopt.Instance:
    """Two one-GPU jobs, ``short`` and ``long`` (remaining steps), on one V100 and one K80:
    each runs at 1 step/s on the V100 and 0.2 step/s on the K80."""
    speeds = {"v100": {"form": "table", "points": [[1, 1.0]]}, "k80": {"form": "table", "points": [[1, 0.2]]}}
    jobs = [{"id": name, "roles": {"worker": {"demand": {"gpu": 1}, "min": 1, "max": 1}},
             "speed_by_accelerator": speeds, "remaining_steps": q}
            for name, q in zip(("short", "long"), steps)]
    return schedopt.Instance.from_dict({
        "name": "two-types", "resources": ["gpu"],
        "servers": [{"name": "v100", "accelerator": "v100", "capacity": {"gpu": 1}},
                    {"name": "k80", "accelerator": "k80", "capacity": {"gpu": 1}}],
        "jobs": jobs})


def test_the_value_is_the_formula_computed_by_hand() -> None:
    """t*_j is the job's time on the V100; c_j = H·(t_j - 2t*_j)/t*_j²."""
    inst = _two_types((1_000.0, 50_000.0))
    plan = schedopt.solve(inst, "optimus-milp", objective=JCT)
    assert plan.objective.name == JCT
    assert plan.status == schedopt.Status.OPTIMAL
    best = {"short": 1_000.0, "long": 50_000.0}
    speed = {"v100": 1.0, "k80": 0.2}
    by_hand = sum(H * (best[j] / speed[plan.accelerators[j]] - 2 * best[j]) / best[j] ** 2 for j in plan.allocation)
    assert plan.objective.value == pytest.approx(by_hand, rel=1e-9)
    assert_checked(inst, plan)


def test_short_work_gets_the_fast_type_unlike_total_time() -> None:
    """Σ t_j gives the V100 to the long job (it saves more seconds there); the average-JCT
    objective gives it to the short one (it finishes more jobs per hour), as SRPT would."""
    inst = _two_types((1_000.0, 50_000.0))
    total = schedopt.solve(inst, "optimus-milp")
    jct = schedopt.solve(inst, "optimus-milp", objective=JCT)
    assert total.accelerators == {"short": "k80", "long": "v100"}
    assert jct.accelerators == {"short": "v100", "long": "k80"}


def test_short_work_is_admitted_first() -> None:
    """One GPU, two jobs: both objectives admit one; the average-JCT one the shorter."""
    inst = _two_types((1_000.0, 50_000.0))
    doc = inst.to_dict()
    doc["servers"] = doc["servers"][:1]
    one = schedopt.Instance.from_dict(doc)
    for name in ("optimus-milp", "optimus-greedy", "optimus-lagrange"):
        plan = schedopt.solve(one, name, objective=JCT)
        assert set(plan.allocation) == {"short"}, name
        assert_checked(one, plan)


@pytest.mark.parametrize("seed", range(9))
def test_exact_solvers_equal_brute_force_and_each_other(seed: int) -> None:
    inst = random_objective_instance(seed)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    values = []
    for name in ("optimus-milp", "optimus-cpsat"):
        plan = schedopt.solve(inst, name, seed=0)
        assert_checked(inst, plan)
        assert plan.objective.name == JCT
        assert plan.objective.admitted == max(admitted, 0)
        if admitted > 0:
            assert plan.status == schedopt.Status.OPTIMAL
            assert plan.objective.value == pytest.approx(total, rel=1e-6, abs=1e-6)
            values.append(plan.objective.value)
    assert len(set(np.round(values, 6))) <= 1


@pytest.mark.parametrize("seed", range(9))
@pytest.mark.parametrize("name", ["optimus-greedy", "optimus-lagrange"])
def test_heuristics_never_beat_the_optimum_and_bounds_hold(seed: int, name: str) -> None:
    inst = random_objective_instance(seed)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    plan = schedopt.solve(inst, name, seed=0)
    assert_checked(inst, plan)
    tol = 1e-6 * max(1.0, abs(total))
    if plan.objective.admitted == admitted and admitted > 0:
        assert plan.objective.value >= total - tol
        if plan.objective.bound is not None:
            assert plan.objective.bound <= total + tol
    if plan.certificate is not None and plan.certificate.bound is not None and plan.certificate.bound.kind != "backend":
        assert not schedopt.check(inst, plan, strict=True)


def test_the_option_and_the_policy_pose_the_same_problem() -> None:
    inst = random_objective_instance(3)
    plain = inst.with_objective("total_remaining_time")
    by_policy = schedopt.solve(inst, "optimus-milp")
    by_option = schedopt.solve(plain, "optimus-milp", objective=JCT)
    assert by_policy.allocation == by_option.allocation
    assert by_policy.objective.value == pytest.approx(by_option.objective.value)
    assert by_option.options["objective"] == JCT
    assert not schedopt.check(plain, by_option)  # the plan names its objective: checked against it


def test_the_checker_reads_the_objective_the_plan_names() -> None:
    inst = _two_types((1_000.0, 50_000.0))
    plan = schedopt.solve(inst, "optimus-milp", objective=JCT)
    renamed = plan.model_copy(update={"objective": plan.objective.model_copy(update={"name": "total_remaining_time"})})
    assert any(v.path == "objective.value" for v in schedopt.check(inst, renamed))
    unknown = plan.model_copy(update={"objective": plan.objective.model_copy(update={"name": "makespan"})})
    assert [v.path for v in schedopt.check(inst, unknown)] == ["objective.name"]


def test_forged_jct_optimum_fails_strict() -> None:
    """A plan under the average-JCT objective that claims optimal with the Σ-time plan's
    allocation (not the optimum here) has no proof that holds."""
    inst = _two_types((1_000.0, 50_000.0))
    good = schedopt.solve(inst, "optimus-milp", objective=JCT)
    wrong = schedopt.solve(inst, "optimus-milp")
    forged = good.model_copy(update={"allocation": wrong.allocation, "accelerators": wrong.accelerators})
    assert schedopt.check(inst, forged, strict=True)


def test_srtf_orders_by_seconds_whatever_the_objective() -> None:
    inst = random_objective_instance(0)
    a = schedopt.solve(inst, "srtf")
    b = schedopt.solve(inst.with_objective("total_remaining_time"), "srtf")
    assert a.allocation == b.allocation
    assert a.objective.name == JCT and b.objective.name == "total_remaining_time"


def test_unknown_objective_option_and_field_are_refused(tmp_path) -> None:
    with pytest.raises(InputError, match="objective"):
        schedopt.solve(_two_types((1.0, 2.0)), "optimus-greedy", objective="makespan")
    doc = _two_types((1.0, 2.0)).to_dict()
    doc["policy"] = {"objective": "makespan"}
    path = tmp_path / "bad.json"
    path.write_text(__import__("json").dumps(doc))
    result = CliRunner().invoke(app, ["solve", str(path), "--solver", "optimus-greedy"])
    assert result.exit_code == 2
    assert "policy.objective" in result.output and "Traceback" not in result.output


def test_weights_from_the_instance_alone() -> None:
    """t*_j is the least over the job's types and counts; a job that can run nowhere keeps weight 1."""
    from schedopt.allocation.objectives import best_training_s, objective_terms

    inst = _two_types((1_000.0, 50_000.0)).with_objective(JCT)
    assert [best_training_s(inst, j) for j in inst.jobs] == [1_000.0, 50_000.0]
    weight, offset = objective_terms(inst)
    assert weight.tolist() == pytest.approx([H / 1e6, H / 2.5e9])
    assert offset.tolist() == pytest.approx([-2 * H / 1e3, -2 * H / 5e4])
    assert math.isfinite(float(weight.sum()))


@pytest.mark.parametrize("seed", range(12))
def test_least_step_time_is_the_least_of_every_allowed_count(seed: int) -> None:
    """t*_j read from a measured table's grid block (memoised across jobs) is Q_j times the least
    step time :func:`job_step_times` lists over every type and allowed count, on typed, two-role,
    formula and quota instances alike."""
    from schedopt.allocation.objectives import best_training_s, job_step_times
    from schedopt.testing import (random_objective_instance, random_quota_instance, random_rigid_typed_instance,
                                  random_tiny_instance, random_typed_instance)

    for make in (random_objective_instance, random_quota_instance, random_rigid_typed_instance,
                 random_tiny_instance, random_typed_instance):
        inst = make(seed)
        least: dict = {}
        for job in inst.jobs:
            step = job_step_times(inst, job)[2]
            expected = float(job.remaining_steps) * float(step.min()) if step.size and np.isfinite(step.min()) else math.inf
            assert best_training_s(inst, job, least) == expected
            assert best_training_s(inst, job) == expected
