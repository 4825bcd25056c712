"""``dltap``: DLTAP (deep-learning task allocation priority) on the
Kubernetes-style scheduler.

A job's workers are placed first with the default score (DLTAP eq. 1); then
each PS with the default score plus weightOfDLTAP × (this job's workers on the
node / the job's workers) (eq. 2-3), so PS go where the workers are and fewer
PS-worker pairs cross the network. The paper gives no value for weightOfDLTAP;
the default here, 100, makes a node holding all the job's workers worth one
whole 0-100 priority.
"""

from __future__ import annotations

import numpy as np

from schedopt.errors import InputError
from schedopt.placement.kube import KubeScheduler
from schedopt.placement.problem import PlacementData
from schedopt.registry import register


@register("dltap", problem="placement", exact=False, backend="numpy", accelerator_types=True)
class Dltap(KubeScheduler):
    """DLTAP: workers by the default score, then PS scored up where the job's workers are (eq. 1-3)."""

    role_order = (1, 0)
    bonus_slots = (0,)

    def __init__(self, *, weight_dltap: float = 100.0, weight_least_allocated: float = 1.0,
                 weight_balanced_allocation: float = 1.0, resources: dict[str, int] | None = None, keep: bool = True,
                 bound: bool = False):
        super().__init__(weight_least_allocated=weight_least_allocated,
                         weight_balanced_allocation=weight_balanced_allocation, resources=resources, keep=keep,
                         bound=bound)
        if not (weight_dltap >= 0):
            raise InputError("dltap", f"weight_dltap: must be >= 0, got {weight_dltap}")
        self.weight_dltap = weight_dltap

    def options(self) -> dict:
        return {**super().options(), "weight_dltap": self.weight_dltap}

    def bonus(self, data: PlacementData, j: int, slot: int, nodes: np.ndarray, workers_on: np.ndarray) -> np.ndarray:
        # DLTAP eq. 2-3: weightOfDLTAP × workers of this job on the node / the job's workers
        return self.weight_dltap * workers_on / float(data.counts[j, 1])
