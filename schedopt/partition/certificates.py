"""Replaying partition certificates from the instance alone (checker side).

``utilization-lagrangian``: prices μ_k >= 0 on the cluster totals C_k. Every
plan within capacity and n_max has Σ_k u_k = Σ_i n_i·util_i with
util_i = Σ_k d_ik / C_k (Dorm eq. 1) and Σ_i n_i·d_i <= C, so

    Σ_k u_k <= Σ_i n_i·(util_i - μ·d_i) + μ·C <= μ·C + Σ_i n_max_i·max(0, util_i - μ·d_i).

Applications demanding a resource of capacity 0 cannot be placed and add nothing.
"""

from __future__ import annotations

import numpy as np

from schedopt.allocation.certificates import price_vector
from schedopt.claims import Replay
from schedopt.instance import Instance
from schedopt.tolerances import capacity_limit


def replay_utilization(instance: Instance, plan, proof) -> float:
    """U(μ): the upper bound on Σ_k u_k that the proof's prices give."""
    mu = price_vector(instance, proof.prices)
    total = instance.capacity_total
    live = total > 0
    bound = float(mu @ capacity_limit(total))
    for job in instance.jobs:
        role = job.roles[job.role_names[0]]
        d = instance.vector(role.demand)
        if np.any((d > 0) & ~live):
            continue
        util = float((d[live] / total[live]).sum())
        bound += role.max_count * max(0.0, util - float(mu @ d))
    return bound


CERTIFICATES = {"utilization-lagrangian": Replay("bound", replay_utilization)}
