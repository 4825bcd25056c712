"""SLAQ §2: quality-driven allocation (problem ``quality``).

    maximize   Σ_j Loss_j(a_j, t) - Loss_j(a_j, t + T)
    subject to Σ_j a_j · d_j <= C          (per resource; SLAQ: cores, d_j = 1)
               a_j integer in the role's [min, max]

Loss_j is the job's predicted *normalised* loss (``loss_curve``: 1 = the
largest loss seen), a_j the count of its single role (executors, cores) and
the steps it makes in T = ``policy.horizon_s`` are T · f_j(a_j) with
f_j the job's speed form. So the term of job j is

    R_j(a) = l_j(k_j) - l_j(k_j + T·f_j(a))

Admission as everywhere (DESIGN.md): when not every job fits at its minimum,
admit the most jobs first (the heuristics' admission rule for the greedy,
exactly for the MILP), then maximise Σ R_j.

``slaq-greedy`` is the paper's algorithm: every admitted job starts at its
minimum (SLAQ: one core, against starvation), then repeatedly the job whose
next unit gives the highest predicted reduction (per dominant share of one
unit, which is the plain reduction for SLAQ's cores) gets it, until nothing
fits. With one resource, equal unit demands and concave R_j the greedy is
optimal (marginal allocation for separable concave objectives); otherwise its
gap to ``slaq-milp`` is measured, and it always carries the LP bound.

``slaq-milp``/``slaq-cpsat`` are the exact multiple-choice model over each
job's count, solved by the same lexicographic driver as the Optimus models
with cost = -R_j (so ``time_s`` below returns a cost, not a time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from schedopt.allocation.problem import AllocationData, role_arrays
from schedopt.convergence import LossCurve
from schedopt.errors import FieldProblem, InputError
from schedopt.instance import Instance

OBJECTIVE_NAME = "total_loss_reduction"
StopRule = Literal["skip", "paper"]


@dataclass
class QualityData(AllocationData):
    """Allocation arrays whose cost is -R_j(a) (normalised loss units).

    ``horizon_s``: SLAQ's T in seconds."""

    horizon_s: float = 60.0
    closed_form_cost: bool = False  # -R_j is no Q_j·step form: the dual enumerates each job's counts

    def time_s(self, j: int, c0: Any, c1: Any) -> Any:
        """Cost -R_j(c0) (scalar or array); inf where the count is not allowed."""
        job = self.jobs[j]
        step = job.speed.step_time_s(c0, c1)
        if np.isscalar(step):
            step = float(step)
            if not math.isfinite(step) or step <= 0:
                return math.inf
            return -float(job.loss_curve.reduction(self.horizon_s / step))
        step = np.asarray(step, dtype=float)
        ok = np.isfinite(step) & (step > 0)
        ahead = np.divide(self.horizon_s, step, out=np.zeros_like(step), where=ok)
        return np.where(ok, -np.asarray(job.loss_curve.reduction(ahead), dtype=float), np.inf)


    def costs(self, jobs: np.ndarray, owner: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Cost -R of many (job, count) pairs at once: job ``jobs[owner[i]]`` with
        ``counts[i]`` units (flat arrays). Jobs with a formula speed are evaluated
        together per (form, curve family); tables one job at a time."""
        out = np.full(len(counts), np.inf)
        kinds: dict[tuple[type, str], list[int]] = {}
        for i, j in enumerate(jobs.tolist()):
            job = self.jobs[j]
            kinds.setdefault((type(job.speed), job.loss_curve.family), []).append(i)
        for (form, family), members in kinds.items():
            rows = np.isin(owner, members)
            if not self.jobs[int(jobs[members[0]])].speed.closed_form:
                for i in members:  # owner is sorted: job i's pairs are one slice
                    at = slice(int(np.searchsorted(owner, i)), int(np.searchsorted(owner, i, side="right")))
                    out[at] = self.time_s(int(jobs[i]), counts[at], 0)
                continue
            idx = np.full(len(jobs), -1)
            idx[members] = np.arange(len(members))
            sel = idx[owner[rows]]
            speed_p = np.array([self.jobs[int(jobs[i])].speed.params() for i in members], dtype=float)[sel]
            curve_p = np.array([self.jobs[int(jobs[i])].loss_curve.params for i in members], dtype=float)[sel]
            k0 = np.array([self.jobs[int(jobs[i])].loss_curve.step for i in members], dtype=float)[sel]
            step = np.asarray(form.formula(*speed_p.T, counts[rows].astype(float), 0.0), dtype=float)
            good = np.isfinite(step) & (step > 0)
            ahead = np.divide(self.horizon_s, step, out=np.zeros_like(step), where=good)
            with np.errstate(over="ignore", invalid="ignore"):
                red = LossCurve.formula(family, curve_p.T, k0) - LossCurve.formula(family, curve_p.T, k0 + ahead)
            out[rows] = np.where(good, -red, np.inf)
        return out


def compile_quality(instance: Instance) -> QualityData:
    """Arrays for the quality problem; raises :class:`InputError` naming each job
    that lacks what it needs (one role, a one-role speed form, a loss curve)."""
    problems = []
    for i, job in enumerate(instance.jobs):
        if len(job.roles) != 1:
            problems.append(FieldProblem(f"jobs[{i}].roles", "the quality problem allocates one role per job"))
        if job.speed is None:
            problems.append(FieldProblem(f"jobs[{i}].speed", "required by the quality problem (or speed_samples)"))
        if job.loss_curve is None:
            problems.append(FieldProblem(f"jobs[{i}].loss_curve", "required by the quality problem (or loss_history)"))
    if problems:
        raise InputError(instance.source, problems)
    return QualityData(**role_arrays(instance), Q=np.zeros(len(instance.jobs)), problem="quality",
                       objective_name=OBJECTIVE_NAME, sense="max", horizon_s=instance.horizon_s)


def predicted_reduction(instance: Instance, job_id: str, counts: dict[str, int]) -> float:
    """SLAQ's term Loss_j(a_j, t) - Loss_j(a_j, t + T): the predicted drop of the
    normalised loss over the horizon T = ``policy.horizon_s`` with a_j units of
    the job's (single) role; nan if the job lacks a curve or speed or the
    count is not allowed."""
    job = instance.jobs[instance.job_index[job_id]]
    if job.speed is None or job.loss_curve is None or len(job.roles) != 1:
        return math.nan
    step = float(job.speed.step_time_s(counts[job.role_names[0]], 0))
    if not math.isfinite(step) or step <= 0:
        return math.nan
    return float(job.loss_curve.reduction(instance.horizon_s / step))


def untyped_only(instance: Instance) -> str | None:
    """SLAQ's model has one pool of capacity: why ``instance`` is not one (or None)."""
    if instance.has_types:
        return "its servers name accelerator types; SLAQ's quality model has one pool of capacity"
    if instance.queues:
        return "it has queues with quotas; SLAQ's quality model has none"
    spread = [j.id for j in instance.jobs if j.spread is not None]
    if spread:
        return f'job "{spread[0]}" has a spread factor; SLAQ\'s speeds do not depend on the servers spanned'
    return None
