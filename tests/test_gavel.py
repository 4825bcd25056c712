"""Gavel's policies' LPs (allocation/gavel.py: ``SharesLp``, built as arrays for HiGHS) against the
same LPs written out term by term, dense, and solved by scipy's ``linprog``: the optimum of each
policy's objective, and shares within its rows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from schedopt.allocation.gavel import (_runnable_pairs, compile_gavel, equal_share_throughput, las,
                                       max_sum_throughput)
from schedopt.testing import random_rigid_typed_instance


def _dense(g):
    """Variables X[m, τ] for every runnable pair (by job, then type); the rows Σ_τ X <= 1 per job
    and Σ_m X·use <= C per type and resource, written one by one."""
    fits = _runnable_pairs(g)
    pairs = [(m, t) for m in range(g.M) for t in range(g.T.shape[1]) if fits[m, t]]
    A, b = [], []
    for m in sorted({m for m, _ in pairs}):
        A.append([1.0 if p[0] == m else 0.0 for p in pairs])
        b.append(1.0)
    for t in range(g.cap.shape[0]):
        for r in range(g.cap.shape[1]):
            row = [float(g.use[m, tt, r]) if tt == t else 0.0 for m, tt in pairs]
            if any(row):
                A.append(row)
                b.append(float(g.cap[t, r]))
    return pairs, np.array(A), np.array(b)


def _within_rows(g, X) -> None:
    assert np.all(X >= 0) and np.all(X.sum(axis=1) <= 1 + 1e-7)
    assert np.all(np.einsum("mt,mtr->tr", X, g.use) <= g.cap + 1e-6)
    assert np.all(X[~_runnable_pairs(g)] == 0)


@pytest.mark.parametrize("seed", range(8))
def test_max_sum_throughput_is_the_dense_lps_optimum(seed: int) -> None:
    g = compile_gavel(random_rigid_typed_instance(seed))
    pairs, A, b = _dense(g)
    want = linprog([-g.T[p] for p in pairs], A_ub=A, b_ub=b, bounds=(0, 1), method="highs")
    X, value, _ = max_sum_throughput(g, normalize="none", time_limit=None, seed=0)
    assert value == pytest.approx(-want.fun, rel=1e-7)
    assert (g.T * X).sum() == pytest.approx(value, rel=1e-7)
    _within_rows(g, X)


@pytest.mark.parametrize("seed", range(8))
def test_las_is_the_dense_lps_max_min(seed: int) -> None:
    """max t s.t. w_m·thr(m, X_eq)·t <= s_m·thr(m, X) for every job with a runnable pair."""
    inst = random_rigid_typed_instance(seed)
    g = compile_gavel(inst)
    pairs, A, b = _dense(g)
    eq = equal_share_throughput(g)
    n = len(pairs)
    A = np.hstack([A, np.zeros((len(A), 1))])
    fair = []
    for m in sorted({m for m, _ in pairs}):
        row = [-float(g.s[m]) * g.T[p] if p[0] == m else 0.0 for p in pairs]
        fair.append(row + [inst.jobs[m].weight * eq[m]])
    want = linprog([0.0] * n + [-1.0], A_ub=np.vstack([A, fair]), b_ub=np.concatenate([b, np.zeros(len(fair))]),
                   bounds=[(0, 1)] * n + [(0, None)], method="highs")
    X, value, _ = las(g, time_limit=None, seed=0)
    assert value == pytest.approx(-want.fun, rel=1e-7)
    _within_rows(g, X)
    thr = (g.T * X).sum(axis=1)
    for m in sorted({m for m, _ in pairs}):  # every job at least the max-min ratio
        assert g.s[m] * thr[m] >= inst.jobs[m].weight * eq[m] * value * (1 - 1e-6)


def test_a_time_limit_counts_from_the_call_not_from_the_threads_highs() -> None:
    """HiGHS compares its ``time_limit`` with the run time its instance accumulated over every run:
    after 0.6 s of earlier runs on the thread's instance, a 0.5 s limit still lets an LP solve."""
    from schedopt.backends import lp

    args = dict(row_lower=np.array([1.0]), row_upper=np.array([2.0]), col_lower=np.zeros(1), col_upper=np.full(1, 5.0))
    one = (np.ones(1), np.array([0, 1]), np.array([0]), np.ones(1))
    assert lp.solve_lp_colwise(*one, **args).optimal
    h = lp._THREAD.highs
    spent = h.getRunTime()
    while h.getRunTime() - spent < 0.6:
        lp.solve_lp_colwise(*one, **args)
    res = lp.solve_lp_colwise(*one, **args, time_limit=0.5)
    assert res.optimal and res.x[0] == pytest.approx(1.0)
