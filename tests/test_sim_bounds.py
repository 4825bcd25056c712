"""The clairvoyant JCT lower bound (``schedopt.sim.bounds``): no scheduler's run beats it,
and a job alone on an empty cluster meets it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    from schedopt.sim.bounds import _srpt_completions

    def _srpt_total_completion(release: np.ndarray, length: np.ndarray) -> float:  # Σ_j C_j
        return float(_srpt_completions(release, length).sum())

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


def test_the_joined_bound_passes_both_parts_by_hand() -> None:
    """A (1 of 4 CPUs, 4,000 s) and B, C (all 4 CPUs, 1,000 s each), all at 0, no overhead: the
    pooled machine's SRPT completes at 1,000, 2,000, 3,000 s and the jobs alone at 1,000, 1,000,
    4,000 s (both sums 6,000 s); the k-th completion is at least the larger of the two, so
    Σ C_j >= 1,000 + 2,000 + 4,000. The best run (B, C, then A) reaches 9,000."""
    inst = make_instance([fixed_job("a", 4000.0, n=1), fixed_job("b", 4000.0, n=4), fixed_job("c", 4000.0, n=4)],
                         {"cpu": 4})
    bound = avg_jct_lower_bound_s(inst, interval_s=600.0, restart_overhead_s=0.0)
    assert bound == pytest.approx(7000.0 / 3)
    r = simulate(inst, "optimus-greedy", interval_s=600.0, restart_overhead_s=0.0)
    assert r.avg_jct_s >= bound


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 10)), min_size=1, max_size=12))
def test_srpt_finishes_its_kth_job_first(jobs: list[tuple[int, int]]) -> None:
    """SRPT's k-th completion is no later than any other schedule's on the same machine: here
    first-come-first-served without preemption and longest-remaining-first with it."""
    from schedopt.sim.bounds import _srpt_completions

    release = np.array([float(r) for r, _ in jobs])
    length = np.array([float(p) for _, p in jobs])
    srpt = _srpt_completions(release, length)
    for other in (_fcfs(release, length), _longest_first(release, length)):
        assert np.all(srpt <= np.sort(other) + 1e-9)
    assert len(srpt) == len(jobs)


def _fcfs(release: np.ndarray, length: np.ndarray) -> np.ndarray:
    t, out = 0.0, []
    for j in np.argsort(release, kind="stable"):
        t = max(t, release[j]) + length[j]
        out.append(t)
    return np.array(out)


def _longest_first(release: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Preemptive, the longest remaining job first, in unit steps (integer data)."""
    left = length.copy()
    out, t = [], 0.0
    while np.any(left > 0):
        ready = np.flatnonzero((release <= t) & (left > 0))
        if len(ready):
            j = ready[np.argmax(left[ready])]
            left[j] -= 1.0
            if left[j] <= 0:
                out.append(t + 1.0)
        t += 1.0
    return np.array(out)
