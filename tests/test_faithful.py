"""The ``optimus-faithful`` workload (``schedopt/sim/faithful.py``, issue 16 §3)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from schedopt.generate import generate_instance
from schedopt.profiles import load_profiles
from schedopt.sim import simulate
from schedopt.sim.estimation import threshold_of
from schedopt.sim.faithful import MEASURED_MODEL, faithful_workload, measured_speeds
from schedopt.speed import steps_per_s
from schedopt.instance import Instance
from tests.conftest import SHARED_DATA

needs_data = pytest.mark.skipif(not (SHARED_DATA / "measured").is_dir(),
                                reason="needs ../shared/data/measured (the DL2 testbed's measured speeds are not in the repo)")


def test_every_table1_profile_has_a_measured_source() -> None:
    assert set(MEASURED_MODEL) == {p.name for p in load_profiles()}


def test_job_length_scales_with_hours_and_thresholds_stay_in_range() -> None:
    a = faithful_workload(20, 13, np.random.default_rng(0), 16, speeds="table2", hours=2.0)
    b = faithful_workload(20, 13, np.random.default_rng(0), 16, speeds="table2", hours=4.0)
    for ja, jb in zip(a["jobs"], b["jobs"]):
        assert jb["remaining_steps"] == pytest.approx(2 * ja["remaining_steps"])
    inst = Instance.model_validate({"schema": "schedopt/instance@1", "name": "t", **b})
    assert all(0.01 <= threshold_of(j) <= 0.05 for j in inst.jobs)
    assert all(0 <= j.arrival <= 12000 for j in inst.jobs)


def test_workload_modules_import_on_their_own() -> None:
    """Importing a workload module before the registry used to fail (KeyError: 'allocation')."""
    for module in ("schedopt.sim.faithful", "schedopt.sim.workloads"):
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)


@needs_data
def test_measured_fits_saturate_and_stay_inside_the_measured_counts() -> None:
    fits = measured_speeds(str(SHARED_DATA))
    wl = generate_instance("optimus-faithful", jobs=30, servers=13, seed=0, data_dir=SHARED_DATA)
    for job in wl.jobs:
        speed, p_max, w_max, err = fits[job.model]
        assert job.speed.form == "optimus-sync" and err < 0.15
        assert job.roles["ps"].max <= p_max and job.roles["worker"].max <= w_max
        assert job.loss_curve is not None and job.loss_curve.family == "optimus"
    for name, (speed, *_rest) in fits.items():
        from schedopt.speed import OptimusSync

        form = OptimusSync.model_validate(speed)
        assert steps_per_s(form, 8, 8) / steps_per_s(form, 1, 1) < 2.5, name  # Table 2's grows 3-7x


@needs_data
def test_faithful_simulation_checks() -> None:
    wl = generate_instance("optimus-faithful", jobs=12, servers=13, seed=1, data_dir=SHARED_DATA)
    r = simulate(wl, "optimus-greedy", estimation="online", check_plans=True, restart_aware=False)
    assert r.check_violations == 0, r.first_violation
    assert r.finished == 12
