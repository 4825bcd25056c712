"""What the scheduler believes about a job during a simulation (Optimus §3).

``truth`` (the default): the scheduler sees each job's true remaining steps and
speed, optionally distorted by Fig. 15's shrinking errors (``error_steps``,
``error_speed``; see :mod:`schedopt.sim.simulator`).

``online``: the scheduler sees what Optimus itself would have, fitted during
the run from observations the simulator makes of the truth:

- **Convergence (§3.1).** A job whose ``loss_curve`` (Optimus eq. 1, the true
  normalised curve) is given emits ``LOSS_POINTS_PER_INTERVAL`` training losses
  per interval it runs, evenly spread over the steps it trained, each with
  multiplicative Gaussian noise of ``LOSS_NOISE``. Once ``MIN_LOSS_POINTS`` are
  in, eq. 1 is refitted (outlier removal, normalisation, NNLS start, bounded
  least squares: :func:`schedopt.convergence.fit_loss_curve`) and the remaining
  steps are K̂(δ) − steps done. Before that, and whenever the fit finds no
  downward trend, the prediction comes from the curves of the other jobs of
  the same model and speed form: the geometric mean of their β0/β1 (a
  cluster's history of that model; of every other job when none is of its
  kind), with the job's own threshold δ. The prediction never falls below
  ``MIN_REMAINING_SHARE`` of that prior (a job that has not finished is not done).
- **Speed (§3.2).** Before a job starts, it is pre-run at ``PRE_RUN`` (p, w)
  configurations (the paper pre-runs five "on a small dataset"); every interval
  it runs adds one sample at its configuration. Every sample is the true speed
  with multiplicative Gaussian noise of ``SPEED_NOISE``. Eq. 3/4 is refitted by
  NNLS (relative errors) whenever a sample arrives. A sample is of the speed
  the job actually ran at (:class:`schedopt.sim.truth.Truth`: placement,
  interference), a pre-run of its profile speed. A job whose truth is a
  measured ``table`` is fitted eq. 4 (its true shape is not eq. 4's: the
  mismatch DL2 §2.2 describes) and shown the fit at the table's allowed
  counts; ``amdahl`` jobs are shown their true speed.

The job's threshold δ is recovered from its truth (K = β1·(1/δ − 1)/β0): the
user sets δ, so the scheduler knows it. Every noise draw comes from a
generator seeded by the run's seed and the job's position: deterministic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedopt.convergence import CurveFitError, fit_loss_curve
from schedopt.instance import Job
from schedopt.speed import FitError, TableSpeed, fit_speed

ESTIMATION_MODES = ("truth", "online")

LOSS_POINTS_PER_INTERVAL = 10
LOSS_NOISE = 0.03
MIN_LOSS_POINTS = 20
MIN_REMAINING_SHARE = 0.02
#: the pre-run configurations (p, w): small ones, cheap to pre-run, and one larger
PRE_RUN = ((1, 1), (2, 1), (1, 2), (2, 2), (4, 4))
SPEED_NOISE = 0.05


def threshold_of(job: Job) -> float:
    """δ of a job with a true eq. 1 curve and total steps K: K = β1·(1/δ − 1)/β0."""
    b0, b1, _ = job.loss_curve.params  # type: ignore[union-attr]
    return 1.0 / (1.0 + float(job.remaining_steps) * b0 / b1)


def _kind(job: Job) -> tuple[str | None, str | None]:
    """Jobs whose steps are alike: the same model trained with the same speed form
    (synchronous and asynchronous steps differ in size)."""
    return job.model, getattr(job.speed, "form", None)


def model_priors(jobs: list[Job]) -> list[float | None]:
    """β0/β1 a scheduler expects for each job before its own fit: the geometric
    mean over the *other* jobs of its model and speed form (what the cluster
    has seen of that model); over all other jobs when it is the only one of
    its kind; None without a curve."""
    logs = [math.log(j.loss_curve.params[0] / j.loss_curve.params[1])
            if j.loss_curve is not None and j.loss_curve.family == "optimus" and j.loss_curve.params[0] > 0 else None
            for j in jobs]
    by_model: dict[tuple[str | None, str | None], list[float]] = {}
    for j, v in zip(jobs, logs):
        if v is not None:
            by_model.setdefault(_kind(j), []).append(v)
    every = [v for v in logs if v is not None]
    out: list[float | None] = []
    for j, v in zip(jobs, logs):
        if v is None:
            out.append(None)
            continue
        same = by_model[_kind(j)]
        pool, total = (same, sum(same)) if len(same) > 1 else (every, sum(every))
        out.append(math.exp((total - v) / (len(pool) - 1)) if len(pool) > 1 else math.exp(v))
    return out


@dataclass
class OnlineEstimate:
    """One job's observations and fits. Steps are training steps; speeds steps/s."""

    job: Job
    rng: np.random.Generator
    prior_rate: float | None  # β0/β1 of the job's model, or None without a curve
    steps: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    speed_samples: list[tuple[float, float, float]] = field(default_factory=list)
    _remaining_fit: tuple[int, float] | None = None  # (points, K̂) of the last loss fit
    _speed_fit: tuple[int, Any] | None = None  # (samples, fitted form)

    def __post_init__(self) -> None:
        self.delta = threshold_of(self.job) if self._has_curve else None
        if self._fits_speed:
            pre = PRE_RUN
            if self.job.speed.measured:  # only measured counts run: its smallest ones
                pts = self.job.speed.configuration_array()
                pre = tuple(map(tuple, pts[np.argsort(pts.sum(axis=1), kind="stable")][:len(PRE_RUN)].tolist()))
            for p, w in pre:
                if self._allowed(p, w):
                    self._sample_speed(p, w)

    @property
    def _has_curve(self) -> bool:
        c = self.job.loss_curve
        return c is not None and c.family == "optimus" and self.prior_rate is not None

    @property
    def _fits_speed(self) -> bool:
        return self.job.speed is not None and self.job.speed.n_roles == 2 and len(self.job.roles) == 2

    @property
    def _fit_form(self) -> str:
        """The form the scheduler fits: the job's own Optimus form, else eq. 4 (a measured
        table's true shape is not eq. 4's: the mismatch DL2 §2.2 describes)."""
        return self.job.speed.fit_form

    def _allowed(self, p: int, w: int) -> bool:
        r = self.job.roles
        inside = r["ps"].min <= p <= r["ps"].max and r["worker"].min <= w <= r["worker"].max
        return inside and math.isfinite(float(self.job.speed.step_time_s(p, w)))  # type: ignore[union-attr]

    def _sample_speed(self, p: int, w: int, step_s: float | None = None) -> None:
        """One noisy sample of the speed at (p, w): of the step time the job ran at
        (``step_s``, the simulator's truth), else of a pre-run (its profile speed)."""
        step = float(self.job.speed.step_time_s(p, w)) if step_s is None else float(step_s)  # type: ignore[union-attr]
        self.speed_samples.append((float(p), float(w), max(0.05, 1.0 + SPEED_NOISE * self.rng.standard_normal()) / step))

    def observe(self, done_before: float, done_after: float, counts: dict[str, int], step_s: float | None = None) -> None:
        """The job trained from step ``done_before`` to ``done_after`` at ``counts``, at
        ``step_s`` seconds per step (the truth: placement, interference; default its profile)."""
        if self._fits_speed and done_after > done_before:
            self._sample_speed(int(counts["ps"]), int(counts["worker"]), step_s)
        if self._has_curve and done_after > done_before:
            ks = np.linspace(done_before, done_after, LOSS_POINTS_PER_INTERVAL + 1)[1:]
            if self.steps:
                ks = ks[ks > self.steps[-1]]
            true = np.asarray(self.job.loss_curve.loss(ks), dtype=float)  # type: ignore[union-attr]
            noisy = true * np.maximum(0.0, 1.0 + LOSS_NOISE * self.rng.standard_normal(len(ks)))
            self.steps.extend(float(k) for k in ks)
            self.losses.extend(float(x) for x in noisy)

    def remaining_steps(self, done: float, true_remaining: float) -> float:
        """The predicted steps left after ``done`` (the truth when the job has no curve)."""
        if not self._has_curve:
            return true_remaining
        assert self.delta is not None and self.prior_rate is not None
        prior_total = (1.0 / self.delta - 1.0) / self.prior_rate
        total = prior_total
        if len(self.steps) >= MIN_LOSS_POINTS:
            if self._remaining_fit is None or self._remaining_fit[0] != len(self.steps):
                try:
                    fit = fit_loss_curve(self.steps, self.losses, max_points=100)
                    k_hat = fit.total_steps(self.delta) if not fit.flags else math.nan
                except CurveFitError:
                    k_hat = math.nan
                self._remaining_fit = (len(self.steps), k_hat)
            k_hat = self._remaining_fit[1]
            if math.isfinite(k_hat):
                total = k_hat
        return max(total - done, MIN_REMAINING_SHARE * prior_total)

    def speed(self) -> Any:
        """The fitted speed form (the truth for forms that are not fitted)."""
        if not self._fits_speed or not self.speed_samples:
            return self.job.speed
        if self._speed_fit is None or self._speed_fit[0] != len(self.speed_samples):
            batch = getattr(self.job.speed, "batch", None) or 1.0
            try:
                fitted = fit_speed(self.speed_samples, self._fit_form, batch=batch, relative=True).speed
                if self.job.speed.measured:  # the same allowed counts, at the fitted speeds
                    pts = self.job.speed.configuration_array()
                    step = np.asarray(fitted.step_time_s(pts[:, 0], pts[:, 1]), dtype=float)
                    fitted = TableSpeed(points=[[int(p), int(w), float(1.0 / t)] for (p, w), t in zip(pts.tolist(), step)
                                                if math.isfinite(t) and t > 0],
                                        interpolate=self.job.speed.interpolate)
            except FitError:
                fitted = self._speed_fit[1] if self._speed_fit else self.job.speed
            self._speed_fit = (len(self.speed_samples), fitted)
        return self._speed_fit[1]


def online_estimates(jobs: list[Job], seed: int) -> list[OnlineEstimate]:
    """One :class:`OnlineEstimate` per job, each with its own seeded noise."""
    priors = model_priors(jobs)
    return [OnlineEstimate(job=j, rng=np.random.default_rng([seed, i, 7919]), prior_rate=priors[i])
            for i, j in enumerate(jobs)]
