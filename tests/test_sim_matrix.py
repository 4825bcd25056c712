"""Every built-in allocation family runs in the simulator with every built-in
placement solver, typed clusters included since placement takes accelerator types
(issue 51 §3); what cannot run is refused before the first interval, saying why
(issue 36 §5)."""

from __future__ import annotations

import pytest

from schedopt.errors import InputError
from schedopt.generate import generate_instance
from schedopt.problems import families
from schedopt.sim import simulate
from tests.conftest import SHARED_DATA

FAMILIES = sorted(name for name, (problem, _) in families().items() if problem == "allocation")
PLACEMENTS = [None, "optimus-placement", "dltap", "kube-default"]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("placement", PLACEMENTS)
def test_family_runs_with_placement_or_is_refused_at_load(family: str, placement: str | None) -> None:
    try:
        workload = generate_instance(family, jobs=5, servers=4, seed=0, max_tasks=4, data_dir=SHARED_DATA)
    except InputError as exc:
        if "data" in str(exc).lower():
            pytest.skip(f"needs ../shared/data (not redistributed): {str(exc).splitlines()[0]}")
        raise
    try:
        result = simulate(workload, "optimus-greedy", placement=placement, interval_s=1800.0, horizon_s=30 * 86400.0)
    except InputError as exc:  # every family carries what placement needs (the dl2 families their
        raise AssertionError(f"{family} with {placement}: {exc}")  # model sizes, sim/workloads.DL2_MODEL_SIZE_MB)
    assert result.finished + result.unfinished == len(workload.jobs)


def test_dl2_jobs_carry_placement_data_from_stated_sources() -> None:
    """The issue's case: `generate dl2 --jobs 40 --servers 24 --seed 4` with `optimus-placement`
    ran one interval, then stopped for lack of model_size and bandwidth."""
    from schedopt.sim.workloads import DL2_MODEL_SIZE_MB, dl2_model_size_mb

    try:
        workload = generate_instance("dl2", jobs=40, servers=24, seed=4, data_dir=SHARED_DATA)
    except InputError as exc:
        pytest.skip(f"needs ../shared/data (not redistributed): {str(exc).splitlines()[0]}")
    assert {j.model for j in workload.jobs} <= set(DL2_MODEL_SIZE_MB)
    for job in workload.jobs:
        assert job.model_size == dl2_model_size_mb(job.model) and job.model_size > 0
        assert job.bandwidth is not None
    assert dl2_model_size_mb("resnet-50") == 100.0  # Optimus Table 1, as the optimus workloads
    result = simulate(workload, "optimus-greedy", placement="optimus-placement")
    assert result.finished == len(workload.jobs)
