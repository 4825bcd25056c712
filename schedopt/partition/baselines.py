"""Dorm's baselines: weighted DRF in whole containers (``drf-containers``) and
Swarm's static partitions (``swarm-static``, Dorm §V-A4)."""

from __future__ import annotations

import time

import numpy as np

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.partition.problem import build_plan, compile_partition, drf_containers, first_fit
from schedopt.partition.relaxation import utilization_relaxation
from schedopt.plan import Plan, Status, Termination
from schedopt.profiles import load_dorm_profiles
from schedopt.registry import register


@register("drf-containers", problem="partition", exact=False, backend="numpy")
class DrfContainers:
    """Weighted DRF in whole containers on the cluster total (the source of ŝ_i), then packed first-fit.

    The counts on the cluster total are in ``metrics.drf_containers``; the plan
    places them first-fit (largest dominant share first), and containers that
    no server can take are dropped and counted in ``containers_not_packed``."""

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_partition(instance)
        fair = drf_containers(data)
        x = first_fit(data, fair)
        lost = int(fair.sum() - x.sum())
        bound, proof = utilization_relaxation(data)
        return build_plan(data, x, solver=self.name, status=Status.HEURISTIC, termination=Termination.COMPLETED,
                          started=started, seed=seed, fair=fair, bound=bound, proof=proof,
                          metrics={"drf_containers": {a: int(n) for a, n in zip(data.apps, fair)},
                                   "containers_not_packed": lost})


def _static_counts(instance: Instance, containers: dict[str, int] | None) -> np.ndarray:
    """Swarm's fixed count per application: the option (by application id or
    model), else the model profile's ``swarm_containers``, else n_min."""
    profiles = {p.name: p for p in load_dorm_profiles()}
    out = []
    for job in instance.jobs:
        fixed = None
        if containers:
            fixed = containers.get(job.id, containers.get(job.model or "", None))
        if fixed is None and job.model in profiles:
            fixed = profiles[job.model].swarm_containers
        if fixed is None:
            fixed = job.roles[job.role_names[0]].min
        out.append(int(fixed))
    return np.array(out, dtype=np.int64)


@register("swarm-static", problem="partition", exact=False, backend="numpy")
class SwarmStatic:
    """Swarm baseline: a fixed container count per application type, first-fit in arrival order; the rest wait."""

    def __init__(self, *, containers: dict[str, int] | None = None):
        if containers is not None and not (isinstance(containers, dict) and all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in containers.values())):
            raise InputError("swarm-static", f"containers: expected a mapping of name -> count >= 0, got {containers!r}")
        self.containers = containers

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_partition(instance)
        counts = _static_counts(instance, self.containers)
        counts = np.minimum(counts, data.n_max)
        arrival = np.array([job.arrival for job in instance.jobs])
        order = np.lexsort((np.arange(data.A), arrival))
        x = first_fit(data, counts, order=order, whole=True)
        bound, proof = utilization_relaxation(data)
        return build_plan(data, x, solver=self.name, status=Status.HEURISTIC, termination=Termination.COMPLETED,
                          started=started, seed=seed, bound=bound, proof=proof, options={"containers": self.containers},
                          metrics={"waiting": int(np.count_nonzero((counts > 0) & (x.sum(axis=1) == 0)))})
