"""The clairvoyant JCT lower bound (``schedopt.sim.bounds``): no scheduler's run beats it,
and a job alone on an empty cluster meets it."""

from __future__ import annotations

import math

import pytest

from schedopt.sim import simulate
from schedopt.sim.bounds import avg_jct_lower_bound_s, jct_lower_bounds_s
from schedopt.testing.instances import random_rigid_typed_instance, random_typed_instance
from tests.test_sim import fixed_job
from tests.conftest import make_instance


def test_a_job_alone_meets_the_bound() -> None:
    """One job, arriving inside an interval: the next tick, its start overhead and its steps."""
    inst = make_instance([fixed_job("a", 5000.0, arrival=50.0)], {"cpu": 4})
    lb = jct_lower_bounds_s(inst, interval_s=600.0, restart_overhead_s=30.0)
    r = simulate(inst, "optimus-greedy", interval_s=600.0, restart_overhead_s=30.0)
    assert lb[0] == pytest.approx(550.0 + 30.0 + 2500.0)
    assert r.avg_jct_s == pytest.approx(lb[0])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scheduler,options", [("optimus-greedy", {}),
                                               ("optimus-greedy", {"objective": "jct_weighted_time"}),
                                               ("gavel-las", {}), ("gavel-max-sum-throughput", {})])
def test_no_run_beats_the_bound(seed: int, scheduler: str, options: dict) -> None:
    """Every job's completion is at or after its bound, on typed clusters (rigid and elastic jobs)."""
    for inst in (random_rigid_typed_instance(seed), random_typed_instance(seed)):
        lb = jct_lower_bounds_s(inst, interval_s=600.0, restart_overhead_s=60.0)
        r = simulate(inst, scheduler, options=options, interval_s=600.0, restart_overhead_s=60.0, seed=seed)
        for job, bound in zip(inst.jobs, lb):
            out = r.jobs[job.id]
            if out.completion_s is not None:
                assert out.completion_s - out.arrival_s >= bound * (1 - 1e-9), (inst.name, job.id)
        if r.finished == len(inst.jobs):
            assert r.avg_jct_s >= avg_jct_lower_bound_s(inst, interval_s=600.0) * (1 - 1e-9)
        assert all(math.isfinite(b) or r.jobs[j.id].completion_s is None for j, b in zip(inst.jobs, lb))


def test_srpt_on_one_machine_by_hand() -> None:
    from schedopt.sim.bounds import _srpt_total_completion
    import numpy as np

    assert _srpt_total_completion(np.array([0.0, 0.0]), np.array([1.0, 2.0])) == pytest.approx(1 + 3)
    # A (3 s) from 0, B (1 s) from 1: A runs 0-1, B 1-2, A 2-4
    assert _srpt_total_completion(np.array([0.0, 1.0]), np.array([3.0, 1.0])) == pytest.approx(2 + 4)
    # an idle gap before the second release
    assert _srpt_total_completion(np.array([0.0, 10.0]), np.array([1.0, 1.0])) == pytest.approx(1 + 11)


def test_pooled_capacity_bound_under_contention() -> None:
    """Two jobs each needing the whole cluster: alone each could finish at 630 s, but the
    cluster holds one at a time, so the average is at least (630 + 1260) / 2."""
    inst = make_instance([fixed_job("a", 2400.0, n=4), fixed_job("b", 2400.0, n=4)], {"cpu": 4})
    bound = avg_jct_lower_bound_s(inst, interval_s=600.0, restart_overhead_s=30.0)
    assert bound == pytest.approx((630 + 1260) / 2)
    r = simulate(inst, "fifo", interval_s=600.0, restart_overhead_s=30.0)
    assert r.avg_jct_s >= bound
