"""The one allocation model (Optimus eq. 5-8 with accelerator types, quotas and restarts).

Rows labelled by (job, accelerator type), over named capacity rows (``r@type``, the
queues' quota and cohort rows: ``rows.py``); an instance without types, queues or
spread is the one-type case, whose rows are its jobs (``compile_allocation``). A
reduction in cvxpy's sense: :func:`compile_model` applies it (instance → rows);
a plan's {row: (c0, c1)} inverts it (``plans.build_plan``: counts and a type per job).
The multiple-choice model chooses, per job, one row and its counts:

    minimize   Σ_j Q_j / f_{j,τ_j}(p_j, w_j)  (+ ρ_j when the counts or type change)
    subject to Σ_{j: τ_j = τ} (w_j·O_j^r + p_j·N_j^r) <= C_{τ,r}   for all τ, r  (+ quota rows)
               at most one (τ, p, w) per job (exactly one when every job fits)

Every row-wise routine (the configurations, their pruning, eq. 9's greedy) applies
to the rows as is; a job's rows are contiguous and its configurations over all its
types form one group of the multiple-choice model, which the LP, the reduced-cost
fixing, the exact driver (``exact.py``) and the backends work on (:attr:`AllocationModel.by_job`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from collections.abc import Sequence
from typing import Any, Callable, overload

import numpy as np

from schedopt.allocation.admission import admission_lp, minimum_use
from schedopt.allocation.problem import (AllocationData, ChoiceSet, compile_allocation, enumerate_choices,
                                         min_configuration, role_arrays, use_of, with_objective_terms)
from schedopt.allocation.problem import cannot_run as cannot_run_plain
from schedopt.allocation.relaxation import relax_by_columns
from schedopt.allocation.rows import capacity_vector, queue_index, quota_rows, typed_resource_names
from schedopt.errors import FieldProblem, InputError
from schedopt.instance import Instance, Job
from schedopt.plan import Proof
from schedopt.tolerances import capacity_limit


@dataclass
class AllocationModel:
    """One allocation instance as the rows of the one model.

    ``rows``: one row per (job, type) pair, V rows, over the capacity rows
    :attr:`resource_names`; ``job`` (V,) the job of each row; ``kind`` (V,) its type's
    index in ``instance.accelerators``; ``job_start`` (J+1,) offsets of each job's rows.
    ``plain``: the rows are the instance's jobs themselves (no types, queues or spread:
    row v is job v, the capacity rows are the instance's resources).
    """

    instance: Instance
    rows: AllocationData
    job: np.ndarray
    kind: np.ndarray
    job_start: np.ndarray
    plain: bool = False

    @classmethod
    def of_jobs(cls, rows: AllocationData) -> "AllocationModel":
        """The one-type case: ``rows`` are the jobs (compiled by ``compile_allocation``
        or a problem of its own, SLAQ's)."""
        J = rows.J
        return cls(instance=rows.instance, rows=rows, job=np.arange(J, dtype=np.int64), kind=np.zeros(J, dtype=np.int64),
                   job_start=np.arange(J + 1, dtype=np.int64), plain=True)

    @property
    def priced_in_closed_form(self) -> bool:
        """Whether the dual prices the jobs without listing configurations (``dual.py``):
        plain rows whose cost is Q_j·step time (+ ρ_j). Typed rows are listed (one
        group per job over its types)."""
        return self.plain and self.rows.closed_form_cost

    @property
    def own_cost(self) -> bool:
        """Whether the rows' cost is the allocation problem's own (remaining time under the
        instance's objective, as its certificates price it), not another problem's (SLAQ's)."""
        return type(self.rows).time_s is AllocationData.time_s

    @property
    def allowed_at_least(self) -> int:
        """How many allowed configurations the model knows of without enumerating more: its pruned
        choices when they were enumerated (each one allowed), else 0."""
        got = self.__dict__.get("choices")
        return int(got[0].K) if got is not None else 0

    @cached_property
    def resource_names(self) -> list[str]:
        """The capacity rows' names, as certificates' prices name them."""
        return list(self.instance.resources) if self.plain else typed_resource_names(self.instance)

    @property
    def J(self) -> int:
        return len(self.instance.jobs)

    @property
    def by_job(self) -> AllocationData:
        """The job-level view the multiple-choice routines read (J, R, cap, the jobs' names)."""
        return self.rows if self.plain else replace(self.rows, jobs=list(self.instance.jobs))

    @cached_property
    def minimum(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each row's minimum configuration (V, 2), whether it can run (V,), its use
        (V, T·R) and its time t at that minimum (V,; inf where it cannot run)."""
        rows = self.rows
        mins, ok, use = minimum_use(rows)
        t_min = np.full(len(use), math.inf)
        at = np.flatnonzero(ok)
        t_min[at] = rows.times_at(at, mins[at, 0], mins[at, 1])
        return mins, ok & np.isfinite(t_min), use, t_min

    def minimum_configs(self, rows: Any) -> dict[int, tuple[int, int] | None]:
        """{row: its allowed configuration of least dominant demand (None: none)} for ``rows``:
        :func:`~schedopt.allocation.problem.min_configuration`'s answers, read from :attr:`minimum`."""
        mins, ok = self.minimum[:2]
        return {int(v): (int(mins[v, 0]), int(mins[v, 1])) if ok[v] else None for v in rows}

    @cached_property
    def choices(self) -> tuple[ChoiceSet, ChoiceSet, np.ndarray]:
        """The rows' enumerated, pruned configurations, the same regrouped by job
        (:meth:`group_choices`) and each one's row: enumerated once per instance."""
        mins, ok, _, t_min = self.minimum
        rows_cs = enumerate_choices(self.rows, least=(mins, ok, t_min))
        cs, row_of = self.group_choices(rows_cs)
        return rows_cs, cs, row_of

    @cached_property
    def row_on(self) -> np.ndarray:
        """Each job's row on each type (J, types), -1 where it cannot run there."""
        feasible = self.minimum[1]
        out = np.full((self.J, len(self.instance.accelerators)), -1, dtype=np.int64)
        ok = np.flatnonzero(feasible)
        out[self.job[ok], self.kind[ok]] = ok
        return out

    def indices(self, config: dict[int, tuple[int, int]], choices: ChoiceSet, row_of: np.ndarray) -> list[int]:
        """The positions in ``choices`` (rows ``row_of``) of {row: (c0, c1)}'s configurations that are there."""
        if not config or not len(row_of):
            return []
        if self.plain:  # rows are jobs: the choice set's own lookup
            return choices.indices_present(config)
        n_rows = max(int(row_of.max()), max(config)) + 1
        want = np.full((n_rows, 2), -1, dtype=np.int64)  # each row's wanted counts (-1: not in config)
        for v, c in config.items():
            want[v] = c
        hits = np.flatnonzero(np.all(choices.counts == want[row_of], axis=1))
        rows, first = np.unique(row_of[hits], return_index=True)  # each row's first matching configuration
        at = dict(zip(rows.tolist(), hits[first].tolist()))
        return [at[v] for v in config if v in at]

    def seed_columns(self, config: dict[int, tuple[int, int]], choices: ChoiceSet, row_of: np.ndarray) -> list[int]:
        """Columns that keep the LP's first master feasible for a plan ``config``: its
        configurations still in ``choices`` and each row's minimum one (never pruned:
        nothing uses fewer tasks; and it uses no more than the plan's)."""
        mins = self.minimum[0]
        least = {v: (int(mins[v, 0]), int(mins[v, 1])) for v in config}
        return sorted(set(self.indices(config, choices, row_of)) | set(self.indices(least, choices, row_of)))

    def accelerator(self, v: int) -> str | None:
        return self.instance.accelerators[int(self.kind[v])]

    def group_choices(self, rows_cs: ChoiceSet) -> tuple[ChoiceSet, np.ndarray]:
        """The rows' configurations regrouped by job (one group per job, over all its
        types), and each configuration's row (K,)."""
        cs = ChoiceSet(job=self.job[rows_cs.job], counts=rows_cs.counts, cost=rows_cs.cost, use=rows_cs.use,
                       start=rows_cs.start[self.job_start], enumerated=rows_cs.enumerated)
        return cs, rows_cs.job.copy()


class RowJobs(Sequence[Job]):
    """A typed model's jobs by row, each made on first use: row v is job ``job_of[v]`` as it runs on
    type ``kinds[v]`` (:meth:`Instance.job_on`, a copy with that type's speed). ``speeds`` (V,) holds
    each row's speed, read without making the job (the step table, the admission's tests): most rows
    of a call are never admitted, and their copies cost more than the rest of the compile."""

    def __init__(self, instance: Instance, job_of: list[int], kinds: list[str | None], speeds: list[Any]) -> None:
        self.instance, self.job_of, self.kinds, self.speeds = instance, job_of, kinds, speeds
        self._made: list[Job | None] = [None] * len(job_of)

    def __len__(self) -> int:
        return len(self.job_of)

    @overload
    def __getitem__(self, v: int) -> Job: ...

    @overload
    def __getitem__(self, v: slice) -> list[Job]: ...

    def __getitem__(self, v: int | slice) -> Job | list[Job]:
        if isinstance(v, slice):
            return [self[i] for i in range(*v.indices(len(self)))]
        job = self._made[v]
        if job is None:
            instance = self.instance
            job = self._made[v] = instance.job_on(instance.jobs[self.job_of[v]], self.kinds[v])
        return job


def compile_typed(instance: Instance) -> AllocationModel:
    """The rows of a typed instance; raises :class:`InputError` when a job lacks
    remaining steps or a speed on every type of the cluster. Row v is job ``job[v]`` on
    type ``kind[v]``: the job's own arrays (:func:`role_arrays`) repeated per row, its
    use widened to that type's capacity rows and the quota rows its queue counts in."""
    kinds = instance.accelerators
    problems: list[FieldProblem] = []
    job_of, kind_of, start, Q_job, speeds = [], [], [0], [], []
    for i, job in enumerate(instance.jobs):
        if job.remaining_steps is None:
            problems.append(FieldProblem(f"jobs[{i}].remaining_steps", "required by the allocation problem"))
        if job.speed is None and not job.speed_by_accelerator:
            problems.append(FieldProblem(f"jobs[{i}].speed", "required by the allocation problem (or speed_by_accelerator)"))
        for t, kind in enumerate(kinds):
            speed = instance.speed_on(job, kind)
            if speed is not None:
                job_of.append(i)
                kind_of.append(t)
                speeds.append(speed)
        start.append(len(job_of))
        Q_job.append(float(job.remaining_steps or 0.0))
    if problems:
        raise InputError(instance.source, problems)
    job_of_a, kind_a = np.array(job_of, dtype=np.int64), np.array(kind_of, dtype=np.int64)
    V, T, R = len(job_of_a), len(kinds), len(instance.resources)
    per_job = role_arrays(instance)  # (J, ...) in canonical role order; one-role jobs use slot 0
    per_task = per_job["demand"][job_of_a]  # (V, 2, R)
    cap = capacity_vector(instance)
    quotas = quota_rows(instance)
    on_type = np.zeros((V, 2, T, R))  # each row's use of the resources of its own type
    on_type[np.arange(V), :, kind_a, :] = per_task
    on_quota = np.zeros((V, 2, quotas.Q))
    if quotas.Q:  # a quota row counts a row's use when the job's queue is a member and the row's type counts in it
        index = queue_index(instance)
        queue = np.array([-1 if job.queue is None else index[job.queue] for job in instance.jobs], dtype=np.int64)[job_of_a]
        counts = np.zeros((V, quotas.Q), dtype=bool)
        queued = queue >= 0
        counts[queued] = quotas.member[:, queue[queued]].T & quotas.types[:, kind_a[queued]].T
        on_quota = per_task[:, :, quotas.resource] * counts[:, None, :]
    demand = np.concatenate([on_type.reshape(V, 2, T * R), on_quota], axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(demand > 0, demand / cap, 0.0).max(axis=2) if len(cap) else np.zeros((V, 2))
    jobs = RowJobs(instance, job_of, [kinds[t] for t in kind_of], speeds)
    running = np.full((V, 2), -1, dtype=np.int64)
    restart = np.zeros(V)
    for v in np.flatnonzero(np.repeat([instance.running_counts(job) is not None for job in instance.jobs],
                                      np.diff(start))).tolist():
        job = jobs[v]  # each row's running counts (another type's rows: none matches, job_on)
        counts = instance.running_counts(job)
        if counts is not None:
            names = job.role_names
            running[v] = (counts[names[0]], counts[names[1]] if len(names) == 2 else 0)
            restart[v] = instance.restart_cost_s(job)
    paying = bool(np.any((running[:, 0] >= 0) & (restart > 0)))
    rows = AllocationData(instance=instance, jobs=jobs, n_roles=per_job["n_roles"][job_of_a], lo=per_job["lo"][job_of_a],
                          hi=per_job["hi"][job_of_a], demand=demand, Q=np.array(Q_job, dtype=float)[job_of_a],
                          cap=cap, share=share, arrival=per_job["arrival"][job_of_a],
                          running=running if paying else None, restart_s=restart if paying else None)
    rows = with_objective_terms(rows, instance, job_of_a)
    return AllocationModel(instance=instance, rows=rows, job=job_of_a, kind=kind_a, job_start=np.array(start, dtype=np.int64))


def cannot_run(data: AllocationModel, jobs: Any = None) -> dict[str, str]:
    """Jobs (of ``jobs``, default all) no plan can ever run, with the reason: on no type
    does an allowed configuration fit that type's whole capacity (or the job has no
    speed on any type)."""
    if data.plain:
        return cannot_run_plain(data.rows, jobs)
    names = data.resource_names
    limit = capacity_limit(data.rows.cap)
    _, ok, use, _ = data.minimum  # each row's least use: a job runs alone when one of its rows fits
    runnable = np.zeros(data.J, dtype=bool)
    np.logical_or.at(runnable, data.job, ok & np.all(use <= limit, axis=1))
    out: dict[str, str] = {}
    for j in (range(data.J) if jobs is None else jobs):
        if runnable[j]:
            continue
        job = data.instance.jobs[j]
        rows = range(int(data.job_start[j]), int(data.job_start[j + 1]))
        why = []
        for v in rows:
            c = min_configuration(data.rows, v)
            if c is None:
                why.append(f"{data.accelerator(v)}: no allowed configuration")
                continue
            over = np.flatnonzero(use_of(data.rows, v, c) > limit)
            if not len(over):
                break
            r = int(over[0])
            why.append(f"{data.accelerator(v)}: needs {use_of(data.rows, v, c)[r]:g} {names[r]} at its least, "
                       f"the type has {data.rows.cap[r]:g}")
        else:
            out[job.id] = "; ".join(why) or "no speed on any accelerator type of the cluster"
    return out


def compile_model(instance: Instance, compile: Callable[[Instance], AllocationData] = compile_allocation) -> AllocationModel:
    """The one model of ``instance``: its typed rows when it has types, queues or spread,
    else its jobs as ``compile`` turns them into arrays (the allocation problem's, or a
    problem's own cost: SLAQ's)."""
    return compile_typed(instance) if instance.typed else AllocationModel.of_jobs(compile(instance))


@dataclass
class LpBound:
    """A certified lower bound on Σ cost over plans admitting at least ``proof.admit`` jobs (None: all)."""

    bound: float
    proof: Proof
    lp: Any  # the LagrangeResult (x, rc for fixing and rounding)


def lp_bound(model: AllocationModel, cs: ChoiceSet, *, admit: int | None,
             seed_columns: list[int] | None = None) -> LpBound:
    """The LP relaxation over the grouped configurations ``cs`` by column generation, its
    bound stated as the checker replays it, and its prices per capacity row."""
    relaxed = relax_by_columns(model.by_job, cs, admit=admit, seed_columns=seed_columns, names=model.resource_names)
    return LpBound(bound=relaxed.bound, proof=relaxed.proof, lp=relaxed.result)


def admitted_bound(model: AllocationModel) -> tuple[int, Proof | None]:
    """At most how many jobs any plan admits and its proof (the admission LP's prices μ per
    capacity row, kind ``lp-dual``, which ``check`` replays; None when no LP was solved):
    :func:`~schedopt.allocation.admission.admission_lp` over classes of interchangeable jobs
    (the count and the prices are all it gives), solved once per model."""
    cached = model.__dict__.get("_admitted_bound")
    if cached is None:
        count, mu, _ = admission_lp(model.rows, model.job, least=model.minimum[:2], weights=False)
        proof = None if mu is None else Proof(kind="lp-dual", prices=dict(zip(model.resource_names, mu.tolist())))
        cached = model.__dict__["_admitted_bound"] = (count, proof)
    return cached


def admission_weights(model: AllocationModel) -> np.ndarray:
    """Each row's weight (V,) in the admission LP over every job (HiGHS's vertex: which jobs the
    heuristics admit first), solved once per model, only where a heuristic reads it (its count
    and prices are :func:`admitted_bound`'s, which the classes' LP gives at a tenth of the cost)."""
    cached = model.__dict__.get("_admission_weights")
    if cached is None:
        # a class of interchangeable jobs' weight to its shortest first (their time at the minimum)
        cached = model.__dict__["_admission_weights"] = admission_lp(
            model.rows, model.job, least=model.minimum[:2], prefer=model.minimum[3])[2]
    return cached
