"""Placement (Optimus §4.2, Appendix): T_j and cross-node pairs, Fig. 10,
Theorem 1, and optimus-placement."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.instance import Instance
from schedopt.placement.problem import cross_pairs, transfer_time_s
from tests.conftest import assert_checked


def ps_job(job_id: str, p: int, w: int, *, size: float = 2.0, bw: float = 1.0) -> tuple[dict[str, Any], dict[str, int]]:
    job = {"id": job_id, "roles": {"ps": {"demand": {"slot": 1}, "max": p}, "worker": {"demand": {"slot": 1}, "max": w}},
           "model_size": size, "bandwidth": {"ps": bw, "worker": bw}}
    return job, {"ps": p, "worker": w}


def placement_instance(jobs: list[tuple[dict[str, Any], dict[str, int]]], servers: int, slots: float) -> Instance:
    return Instance.from_dict({
        "schema": "schedopt/instance@1", "name": "place", "resources": ["slot"],
        "servers": [{"name": "s", "count": servers, "capacity": {"slot": slots}}],
        "jobs": [j for j, _ in jobs], "allocation": {j["id"]: a for j, a in jobs},
    })


def test_fig10_placements() -> None:
    """Optimus Fig. 10: 2 PS, 4 workers, 3 servers of 3 slots, unit bandwidth, unit
    per-pair size (S/p = 1): placements (a), (b), (c) take 3, 3 and 2."""
    T = lambda pk, wk: transfer_time_s(2.0, 2, 4, np.array(pk), np.array(wk), 1.0, 1.0)  # noqa: E731
    assert T([1, 1, 0], [1, 1, 2]) == 3  # (a): ps1 talks to 3 remote workers
    assert T([2, 0, 0], [1, 2, 1]) == 3  # (b): both PS on one server with one worker
    assert T([1, 1, 0], [2, 2, 0]) == 2  # (c): the even placement on the fewest servers
    inst = placement_instance([ps_job("j", 2, 4)], servers=3, slots=3)
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-placement"))
    assert plan.objective.value == 2 and plan.metrics["servers_used"] == 2
    assert plan.metrics["cross_node_pairs"] == cross_pairs(2, 4, np.array([1, 1]), np.array([2, 2])) == 4


def best_single_job(p: int, w: int, servers: int, slots: int) -> float:
    """Brute force: the least T_j over every way to put p PS and w workers on the servers."""
    def splits(n: int) -> list[tuple[int, ...]]:
        return [c for c in itertools.product(range(n + 1), repeat=servers) if sum(c) == n]
    best = float("inf")
    for pk in splits(p):
        for wk in splits(w):
            if all(a + b <= slots for a, b in zip(pk, wk)):
                best = min(best, transfer_time_s(float(p), p, w, np.array(pk), np.array(wk), 1.0, 1.0))
    return best


@settings(max_examples=25, deadline=None)
@given(p=st.integers(1, 3), w=st.integers(1, 4), servers=st.integers(1, 4), slots=st.integers(2, 6))
def test_theorem1_even_placement_on_the_fewest_servers_is_optimal(p: int, w: int, servers: int, slots: int) -> None:
    """Theorem 1 (homogeneous servers): when the even placement on the fewest servers
    exists, optimus-placement finds it and its T_j equals the brute-force optimum."""
    inst = placement_instance([ps_job("j", p, w, size=float(p))], servers=servers, slots=slots)
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-placement"))
    best = best_single_job(p, w, servers, slots)
    if best == float("inf"):
        assert plan.paused == ["j"]
        return
    assert plan.paused == []  # some split fits, so the job is placed
    k = plan.metrics["servers_used"]
    assert k >= 1
    if p % k == 0 and w % k == 0:  # Theorem 1's setting: the same counts on each server
        assert plan.objective.value == pytest.approx(best)
    assert plan.objective.value >= best - 1e-12


def test_a_job_that_fits_only_unevenly_is_placed() -> None:
    """3 PS + 1 worker on 2 servers of 2 slots: no even split fits, 2+0 / 1+1 does
    (the example that failed on a fresh clone)."""
    inst = placement_instance([ps_job("j", 3, 1, size=3.0)], servers=2, slots=2)
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-placement"))
    assert plan.paused == [] and plan.metrics["servers_used"] == 2
    assert plan.objective.value == pytest.approx(best_single_job(3, 1, 2, 2))


@settings(max_examples=40, deadline=None)
@given(p=st.integers(0, 4), w=st.integers(1, 5), servers=st.integers(1, 4), slots=st.integers(1, 5),
       used=st.lists(st.integers(0, 3), min_size=4, max_size=4))
def test_fewest_prefix_split_is_exact(p: int, w: int, servers: int, slots: int, used: list[int]) -> None:
    """The fallback split exists exactly when brute force finds one on the free slots,
    and it uses the shortest prefix of the order that can hold the job."""
    from schedopt.placement.optimus import fewest_prefix_split

    free = np.array([[max(slots - u, 0)] for u in used[:servers]], dtype=float)
    order = np.arange(servers)
    one = np.ones(1)
    got = fewest_prefix_split(free, order, p, w, one, one)

    def fits(n: int) -> bool:
        return int(free[:n, 0].sum()) >= p + w  # unit demands: a prefix fits iff its slots suffice
    want = next((n for n in range(1, servers + 1) if fits(n)), None)
    if want is None:
        assert got is None
        return
    assert got is not None
    srv, pk, wk = got
    assert pk.sum() == p and wk.sum() == w
    assert np.all(pk + wk <= free[srv, 0]) and srv.max() + 1 == want


def test_jobs_that_do_not_fit_are_paused_and_smallest_first() -> None:
    inst = placement_instance([ps_job("big", 4, 8), ps_job("small", 1, 2)], servers=2, slots=6)
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-placement"))
    assert "small" in plan.allocation and plan.paused == ["big"]




def _free_after(plan_data: Any, where: list) -> np.ndarray:
    free = plan_data.cap.astype(float).copy()
    for j, pl in enumerate(where):
        if pl is not None:
            np.subtract.at(free, pl[0], pl[1][:, None] * plan_data.demand[j, 0] + pl[2][:, None] * plan_data.demand[j, 1])
    return free


@pytest.mark.parametrize("seed", range(8))
def test_refined_placement_never_worse_than_the_papers(seed: int) -> None:
    """refine: at least as many jobs; at as many, Σ T_j no higher; every paused job fits nowhere on what is left."""
    from schedopt.generate import generate_instance
    from schedopt.placement.optimus import fewest_prefix_split
    from schedopt.placement.problem import compile_placement

    inst = generate_instance("placement-classes", jobs=30, servers=12, seed=seed, max_tasks=4)
    paper = assert_checked(inst, schedopt.solve(inst, "optimus-placement", refine=False))
    refined = assert_checked(inst, schedopt.solve(inst, "optimus-placement"))
    assert (refined.objective.admitted, -refined.objective.value) >= (paper.objective.admitted, -paper.objective.value - 1e-9)
    data = compile_placement(inst)
    index = {name: k for k, name in enumerate(data.servers)}
    for plan in (paper, refined):
        where = [None if job not in plan.placement else
                 (np.array([index[s] for s in plan.placement[job]]),
                  np.array([c.get("ps", 0) for c in plan.placement[job].values()]),
                  np.array([c.get("worker", 0) for c in plan.placement[job].values()])) for job in data.jobs]
        free = _free_after(data, where)
        for j, pl in enumerate(where):
            if pl is None:  # a paused job fits alone on no split of the free servers
                assert fewest_prefix_split(free, np.arange(data.S), int(data.counts[j, 0]), int(data.counts[j, 1]),
                                           data.demand[j, 0], data.demand[j, 1]) is None


def test_best_fit_keeps_the_large_server_for_the_large_job() -> None:
    """A 2-slot and a 4-slot server; jobs of 1+1 and 2+2 tasks. The paper puts the small job on the
    most available server and splits the large one; refined best fit places both whole (Σ T_j = 0)."""
    inst = Instance.from_dict({
        "schema": "schedopt/instance@1", "name": "fit", "resources": ["slot"],
        "servers": [{"name": "small", "count": 1, "capacity": {"slot": 2}}, {"name": "large", "count": 1, "capacity": {"slot": 4}}],
        "jobs": [ps_job("a", 1, 1)[0], ps_job("b", 2, 2)[0]], "allocation": {"a": {"ps": 1, "worker": 1}, "b": {"ps": 2, "worker": 2}}})
    paper = assert_checked(inst, schedopt.solve(inst, "optimus-placement", refine=False))
    refined = assert_checked(inst, schedopt.solve(inst, "optimus-placement"))
    assert paper.objective.admitted == refined.objective.admitted == 2
    assert paper.objective.value > 0 and refined.objective.value == 0
    assert refined.placement == {"a": {"small-0": {"ps": 1, "worker": 1}}, "b": {"large-0": {"ps": 2, "worker": 2}}}
