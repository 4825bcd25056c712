"""Every built-in allocation family runs in the simulator with every built-in
placement solver, or is refused before the first interval naming the field the
setting needs (issue 36 §5)."""

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
    except InputError as exc:
        assert placement is not None and ("needs each PS/worker job's" in str(exc)
                                          or (workload.typed and "accelerator types" in str(exc))), str(exc)
        return
    assert result.finished + result.unfinished == len(workload.jobs)
