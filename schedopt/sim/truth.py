"""The simulated truth: one object that says how fast each job really trains (issue 35 §2).

Everything the simulator runs a job at comes from :class:`Truth`, and what a
scheduler is shown with online estimation comes only from samples of it
(:mod:`schedopt.sim.estimation`). A job's true step time in an interval is

    step = base(job, counts, accelerator type, placement) × slowdown(job, interval)

- ``base``: the job's speed form on its type (``Instance.speed_on``); with a
  placement solver, a PS job whose form has a transfer term runs at the
  placement-aware step time of :mod:`schedopt.sim.communication` (transfer
  share φ, PS imbalance λ). Table speeds keep ``interpolate``.
- ``slowdown``: 1 without interference. With :class:`Interference` (DL2 §2.2:
  a job's speed varies with the jobs it shares the cluster with and over time),
  a lognormal factor of mean 1 per job and interval:

      slowdown = exp(σ_run·Z_j·ρ + σ_step·Z_jt − (σ_run²ρ² + σ_step²)/2) ... (1)

  Z_j ~ N(0, 1) drawn once per job and run (who its neighbours are in this
  run), Z_jt ~ N(0, 1) per interval (their load changing over time), both from
  the run's seed; ρ = min(1, used / capacity)/ρ̄ scales the persistent part
  by how busy the rest of the cluster is this interval (ρ̄ = 0.75: a busy
  cluster). DL2 measured the spread of a job's completion time over repeated
  runs on a shared cluster: standard deviation / mean = 27.3 % on average
  (§2.2, Fig. 4). The defaults, σ_run = 0.268 and σ_step = 0.10, give a
  lognormal completion-time spread of √(exp(σ_run²) − 1) = 27.3 % for a job
  that runs on a busy cluster; ``tests/test_truth.py`` measures it over seeds.
  This is a statistical model of interference, not a model of its cause
  (which the paper says is hard to model explicitly).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from schedopt.instance import Instance, Job
from schedopt.sim import communication

#: DL2 §2.2: average (std / mean) of a job's completion time over repeated runs
DL2_AVERAGE_VARIATION = 0.273


@dataclass(frozen=True)
class Interference:
    """Eq. (1) of this module. ``sigma_run``: the per-run (neighbour) part, ``sigma_step``:
    the per-interval part, ``busy``: the cluster use ρ̄ at which the per-run part is
    ``sigma_run`` (it scales with use, at most 1/busy times)."""

    sigma_run: float = math.sqrt(math.log1p(DL2_AVERAGE_VARIATION ** 2))  # 0.268
    sigma_step: float = 0.10
    busy: float = 0.75

    def __post_init__(self) -> None:
        for name in ("sigma_run", "sigma_step"):
            v = getattr(self, name)
            if not (math.isfinite(v) and 0 <= v <= 2):
                raise ValueError(f"interference {name} must be in [0, 2], got {v}")
        if not (math.isfinite(self.busy) and 0 < self.busy <= 1):
            raise ValueError(f"interference busy must be in (0, 1], got {self.busy}")


def _pw(job: Job, counts: Mapping[str, int]) -> tuple[int, int]:
    names = job.role_names
    return (int(counts["ps"]), int(counts["worker"])) if len(names) == 2 else (int(counts[names[0]]), 0)


class Truth:
    """Each job's true step time (seconds per step) in a run of ``workload``.

    ``communication_aware``: placement changes a PS job's speed; ``imbalance``:
    λ(job, PS count) from a ps-assignment, or None (λ = 1); ``interference``:
    :class:`Interference` or None; ``seed``: the run's seed (the draws of eq. 1)."""

    def __init__(self, workload: Instance, *, communication_aware: bool = True,
                 imbalance: Callable[[Job, int], float] | None = None, interference: Interference | None = None,
                 seed: int = 0):
        self.workload = workload
        self.communication_aware = communication_aware
        self.imbalance = imbalance
        self.interference = interference
        self.seed = int(seed)
        self._index = {job.id: i for i, job in enumerate(workload.jobs)}
        self._run = None
        if interference is not None:
            self._run = np.random.default_rng([self.seed, 35, 0]).standard_normal(len(workload.jobs))

    def base_step_s(self, job: Job, counts: Mapping[str, int], accelerator: str | None = None,
                    where: Mapping[str, Mapping[str, int]] | None = None) -> tuple[float, float | None]:
        """(step time without interference, transfer share φ or None): the job's speed on its
        type; for a job that communicates, placement-aware (φ of ``where``, 1 without a
        placement: its profile's all-remote speed) and with its PS imbalance λ."""
        if communication.communicates(job) and (self.communication_aware or self.imbalance is not None):
            phi = communication.job_transfer_share(job, where if self.communication_aware else None)
            lam = self.imbalance(job, counts["ps"]) if self.imbalance is not None else 1.0
            return communication.step_time_s(job, counts, phi, lam), phi
        speed = self.workload.speed_on(job, accelerator)
        return float(speed.step_time_s(*_pw(job, counts))), None

    def slowdown(self, job: Job, interval: int, use: float) -> float:
        """Eq. (1): the job's interference factor in interval ``interval`` (1 without
        interference); ``use``: the cluster's busiest-resource use this interval, in [0, 1]."""
        if self.interference is None:
            return 1.0
        f = self.interference
        i = self._index[job.id]
        rho = min(1.0, max(0.0, use)) / f.busy
        z_step = float(np.random.default_rng([self.seed, 35, 1, i, int(interval)]).standard_normal())
        a, b = f.sigma_run * float(self._run[i]) * rho, f.sigma_step * z_step  # type: ignore[index]
        return math.exp(a + b - ((f.sigma_run * rho) ** 2 + f.sigma_step ** 2) / 2.0)

    def step_s(self, job: Job, counts: Mapping[str, int], *, accelerator: str | None = None,
               where: Mapping[str, Mapping[str, int]] | None = None, interval: int = 0,
               use: float = 0.0) -> tuple[float, float | None]:
        """(true step time in seconds, φ or None) of ``job`` at ``counts`` in ``interval``."""
        base, phi = self.base_step_s(job, counts, accelerator, where)
        return base * self.slowdown(job, interval, use), phi


def measured_variation(truth: Truth, job: Job, counts: Mapping[str, int], *, intervals: int, use: float,
                       runs: int) -> float:
    """std / mean of the job's time for ``intervals`` intervals of work at ``counts`` over
    ``runs`` runs (seeds 0..runs-1) of ``truth``'s model: DL2 §2.2's variation."""
    times = []
    for seed in range(runs):
        other = Truth(truth.workload, communication_aware=truth.communication_aware, imbalance=truth.imbalance,
                      interference=truth.interference, seed=seed)
        times.append(sum(other.step_s(job, counts, interval=k, use=use)[0] for k in range(intervals)))
    arr = np.asarray(times)
    return float(arr.std() / arr.mean())


def describe(interference: Interference | None) -> dict[str, Any] | None:
    """The interference settings a result records."""
    if interference is None:
        return None
    return {"sigma_run": interference.sigma_run, "sigma_step": interference.sigma_step, "busy": interference.busy}
