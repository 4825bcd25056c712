"""kube-default and dltap: Kubernetes-style scores and DLTAP's aggregation (DLTAP Fig. 1, eq. 1-3)."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.placement.kube import default_scores
from schedopt.placement.problem import cross_pairs
from tests.conftest import assert_checked
from tests.test_placement import placement_instance, ps_job


def test_fig1_cross_node_transfers() -> None:
    """DLTAP Fig. 1: (a) wk1, wk3 on s1, ps1, ps2 on s2, wk2 on s3: 6 cross-node
    transfers; (b) wk1, wk3, ps1 on s1, ps2 on s2, wk2 on s3: 4."""
    assert cross_pairs(2, 3, np.array([0, 2, 0]), np.array([2, 0, 1])) == 6
    assert cross_pairs(2, 3, np.array([1, 1, 0]), np.array([2, 0, 1])) == 4


def fig1() -> schedopt.Instance:
    return placement_instance([ps_job("j", 2, 3)], servers=3, slots=2)


@pytest.mark.parametrize("seed", range(20))
def test_dltap_reaches_the_ideal_on_fig1(seed: int) -> None:
    plan = assert_checked(fig1(), schedopt.solve(fig1(), "dltap", seed=seed))
    assert plan.metrics["cross_node_pairs"] == 4


def test_kube_default_is_not_always_ideal_on_fig1() -> None:
    pairs = [assert_checked(fig1(), schedopt.solve(fig1(), "kube-default", seed=s)).metrics["cross_node_pairs"]
             for s in range(20)]
    assert min(pairs) == 4 and max(pairs) > 4


def test_scores_least_and_balanced() -> None:
    cap = np.array([[4.0, 8.0], [4.0, 8.0], [4.0, 0.0]])
    used = np.array([[0.0, 0.0], [2.0, 2.0], [0.0, 0.0]])
    d = np.array([2.0, 4.0])
    s = default_scores(cap, used, d, weight_least=1.0, weight_balanced=0.0, integer=False)
    assert s[0] == pytest.approx(50.0)  # (2/4 + 4/8) free: 50
    assert s[1] == pytest.approx((0.0 + 25.0) / 2)
    assert s[2] == -np.inf  # no memory: filtered out
    b = default_scores(cap, used, d, weight_least=0.0, weight_balanced=1.0, integer=False)
    assert b[0] == pytest.approx(100.0)  # 1/2 and 1/2 requested: perfectly balanced
    assert b[1] == pytest.approx((1 - 0.125) * 100)  # fractions 1 and 3/4: std 1/8


def test_kube_spreads_pods_over_empty_nodes() -> None:
    inst = placement_instance([ps_job("j", 1, 3)], servers=4, slots=4)
    plan = assert_checked(inst, schedopt.solve(inst, "kube-default", seed=1))
    assert plan.metrics["servers_used"] == 4  # least-allocated: one pod per empty node


def test_gang_rollback_keeps_capacity_for_later_jobs() -> None:
    """A job that does not fit is taken back whole, so the next job still fits."""
    inst = placement_instance([ps_job("big", 3, 6), ps_job("small", 1, 2)], servers=2, slots=4)
    for solver in ("kube-default", "dltap"):
        plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
        assert plan.paused == ["big"] and "small" in plan.placement


def test_bad_weights_are_input_errors() -> None:
    with pytest.raises(schedopt.InputError, match="weight_dltap"):
        schedopt.solve(fig1(), "dltap", weight_dltap=-1)
