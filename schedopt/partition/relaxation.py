"""The utilization LP of Dorm's partition problem, solved for the prices of its
``utilization-lagrangian`` certificate (solver side: it drives HiGHS; the replay is
``partition/certificates.py``)."""

from __future__ import annotations

import numpy as np

from schedopt.backends.lp import solve_lp_colwise
from schedopt.partition.problem import PartitionData
from schedopt.plan import Proof
from schedopt.tolerances import capacity_limit


def utilization_relaxation(data: PartitionData) -> tuple[float, Proof]:
    """An upper bound on Σ_k u_k of every plan within capacity and n_max, with its
    certificate: the LP max Σ_i n_i·util_i s.t. Σ_i n_i·d_i <= C, 0 <= n <= n_max
    (servers merged, n_min and Dorm's budgets dropped) gives prices μ >= 0, and

        Σ_k u_k <= U(μ) = μ·C + Σ_i n_max_i·max(0, util_i - μ·d_i)

    for any μ >= 0 (Lagrangian duality), so U is evaluated at the LP's prices
    whatever the LP's accuracy. Applications demanding a resource the cluster
    lacks cannot be placed and add nothing."""
    live = data.total > 0
    placeable = ~np.any((data.demand > 0) & ~live, axis=1) & (data.n_max > 0)
    apps = np.flatnonzero(placeable)
    mu = np.zeros(data.R)
    if len(apps) and live.any():
        rows = np.flatnonzero(live)
        use = data.demand[apps][:, rows]  # (n, R')
        nonzero = use != 0
        res = solve_lp_colwise(-data.util[apps], np.concatenate([[0], np.cumsum(nonzero.sum(axis=1))]),
                               np.nonzero(nonzero)[1], use[nonzero], row_lower=np.full(len(rows), -np.inf),
                               row_upper=data.total[rows], col_lower=np.zeros(len(apps)),
                               col_upper=data.n_max[apps].astype(float))
        if res.optimal:
            mu[rows] = np.maximum(-res.row_dual, 0.0)  # HiGHS: a binding <= row of a minimisation has dual <= 0
    bound = float(mu @ capacity_limit(data.total)) + float((data.n_max[apps] * np.maximum(0.0, data.util[apps] - data.demand[apps] @ mu)).sum())
    proof = Proof(kind="utilization-lagrangian", prices={r: float(v) for r, v in zip(data.instance.resources, mu)})
    return bound, proof
