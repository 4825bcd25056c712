"""Online estimation in the simulator (``schedopt/sim/estimation.py``, issue 16 §3):
the scheduler sees eq. 1 fitted to the losses a job emits and eq. 4 refitted to
the speeds it shows, not the truth."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import schedopt
from schedopt.cli import app
from schedopt.instance import Instance
from schedopt.io import write_document
from schedopt.sim import simulate
from schedopt.sim.estimation import MIN_LOSS_POINTS, model_priors, online_estimates, threshold_of
from schedopt.sim.faithful import faithful_workload

runner = CliRunner()


def table2_workload(seed: int = 0, jobs: int = 12, servers: int = 6) -> Instance:
    """``optimus-faithful`` with Table 2 speeds: no ../shared/data needed."""
    doc = faithful_workload(jobs, servers, np.random.default_rng(seed), 8, speeds="table2", hours=1.0)
    return Instance.model_validate({"schema": "schedopt/instance@1", "name": f"est-{seed}", **doc})


def test_threshold_is_recovered_from_the_curve_and_the_steps() -> None:
    for job in table2_workload().jobs:
        delta = threshold_of(job)
        assert 0.01 <= delta <= 0.05
        b0, b1, _ = job.loss_curve.params
        assert math.isclose(b1 * (1 / delta - 1) / b0, job.remaining_steps, rel_tol=1e-9)


def test_the_prior_never_uses_the_jobs_own_curve() -> None:
    jobs = list(table2_workload(jobs=20).jobs)
    priors = model_priors(jobs)
    kind = (jobs[0].model, jobs[0].speed.form)
    others = [j for j in jobs[1:] if (j.model, j.speed.form) == kind]
    if others:
        expected = math.exp(np.mean([math.log(j.loss_curve.params[0] / j.loss_curve.params[1]) for j in others]))
        assert math.isclose(priors[0], expected, rel_tol=1e-9)
    own = jobs[0].loss_curve.params[0] / jobs[0].loss_curve.params[1]
    assert not math.isclose(priors[0], own, rel_tol=1e-6)


def test_fitted_total_converges_to_the_truth_as_the_job_runs() -> None:
    est = online_estimates(list(table2_workload().jobs), seed=0)[0]
    total = float(est.job.remaining_steps)
    done, errors = 0.0, []
    for _ in range(30):
        est.observe(done, done + total / 30, {"ps": 2, "worker": 2})
        done += total / 30
        errors.append(abs(est.remaining_steps(done, total - done) + done - total) / total)
    assert len(est.steps) >= MIN_LOSS_POINTS
    assert max(errors[3:25]) < 0.15, errors  # after a few intervals the fit is within 15 % of K
    fitted = est.speed()
    true = float(est.job.speed.step_time_s(2, 2))
    assert abs(float(fitted.step_time_s(2, 2)) / true - 1) < 0.1  # observed at (2, 2) 30 times, 5 % noise


@pytest.mark.parametrize("scheduler", ["optimus-greedy", "tetris"])
def test_online_runs_check_and_are_deterministic(scheduler: str) -> None:
    wl = table2_workload(seed=3)
    a = simulate(wl, scheduler, estimation="online", seed=1, check_plans=True)
    b = simulate(wl, scheduler, estimation="online", seed=1)
    assert a.check_violations == 0, a.first_violation
    assert a.finished == len(wl.jobs)
    assert a.jobs == b.jobs and a.estimate_error_steps == b.estimate_error_steps
    assert a.estimation == "online" and a.estimate_error_steps > 0 and a.estimate_error_speed > 0
    truth = simulate(wl, scheduler, seed=1)
    assert truth.estimate_error_steps == 0 and truth.estimate_error_speed is None


def test_drf_is_size_unaware_so_online_estimates_do_not_change_it() -> None:
    wl = table2_workload(seed=4)
    assert simulate(wl, "drf", estimation="online").jobs == simulate(wl, "drf").jobs


def test_online_estimates_change_optimus_decisions() -> None:
    wl = table2_workload(seed=5, jobs=16, servers=4)
    assert simulate(wl, "optimus-greedy", estimation="online").jobs != simulate(wl, "optimus-greedy").jobs


def test_bad_estimation_settings_are_input_errors() -> None:
    wl = table2_workload()
    with pytest.raises(schedopt.InputError, match="--estimation"):
        simulate(wl, "drf", estimation="oracle")
    with pytest.raises(schedopt.InputError, match="--error-steps"):
        simulate(wl, "drf", estimation="online", error_steps=0.2)


def test_cli_estimation_online(tmp_path: Path) -> None:
    path = tmp_path / "wl.yaml"
    write_document(path, table2_workload().model_dump(mode="json", by_alias=True, exclude_none=True))
    r = runner.invoke(app, ["simulate", str(path), "--scheduler", "optimus-greedy", "--estimation", "online", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert '"estimation": "online"' in r.output
    r = runner.invoke(app, ["simulate", str(path), "--scheduler", "drf", "--estimation", "guess"])
    assert r.exit_code == 2 and "--estimation" in r.output and "Traceback" not in r.output
