"""Instances: the cluster (servers, capacities), the jobs (roles, demands,
speed, remaining work) and the policy of one scheduling decision.

The file format is ``schema: schedopt/instance@1`` (``../shared/DESIGN.md``),
JSON or YAML by extension. Validation happens once, here, at the boundary:
structural checks by pydantic, then cross-field checks (unknown resources,
duplicate ids, bounds, speed form vs roles); every problem names the field
path. Solvers may assume a validated :class:`Instance`.
"""

from __future__ import annotations

import contextvars
import copy
import os
from functools import cached_property
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator, PrivateAttr, ValidationError, model_validator

from schedopt.convergence import CurveFitError, LossCurve, fit_history
from schedopt.errors import FieldProblem, InputError
from schedopt.io import as_document, number_validator, problems_from_validation, read_document, with_field_docs, write_document
from schedopt.speed import SPEED_FORMS, FitError, SpeedForm, fit_speed
from schedopt.tolerances import FIT_TOL

INSTANCE_SCHEMA = "schedopt/instance@1"

#: documented limits (docs/formats.md): beyond them an instance is refused with
#: a message naming the limit, instead of overflowing sums or looping for hours
MAX_QUANTITY = 1e12  # any capacity, demand, model size or bandwidth
MAX_STEPS = 1e15  # remaining_steps
MAX_TASKS = 10_000  # a role's min and max
MAX_SERVERS = 200_000  # servers after expanding ``count``
MAX_JOBS = 200_000
MAX_LENDING_MEMBERS = 12  # queues of one cohort lending one resource of one flavor with a lending limit

NonNeg = Annotated[float, PlainValidator(number_validator(ge=0))]
Quantity = Annotated[float, PlainValidator(number_validator(ge=0, le=MAX_QUANTITY))]
PositiveQuantity = Annotated[float, PlainValidator(number_validator(gt=0, le=MAX_QUANTITY))]
Steps = Annotated[float, PlainValidator(number_validator(ge=0, le=MAX_STEPS))]
TaskCount = Annotated[int, PlainValidator(number_validator(ge=1, le=MAX_TASKS, integer=True))]
ServerCount = Annotated[int, PlainValidator(number_validator(ge=1, le=MAX_SERVERS, integer=True))]
Positive = Annotated[float, PlainValidator(number_validator(gt=0))]
Count = Annotated[int, PlainValidator(number_validator(ge=0, integer=True))]
PositiveCount = Annotated[int, PlainValidator(number_validator(ge=1, integer=True))]
Name = Annotated[str, Field(min_length=1)]


def _id_text(value: Any) -> Any:
    """Integer ids (as a host scheduler's job ids often are) read as their decimal
    text: job 7 is "7" in plans. Booleans and other types are left to validation."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


#: a job id: a non-empty string, or an integer (kept as its decimal text)
JobId = Annotated[str, BeforeValidator(_id_text), Field(min_length=1)]

#: canonical role order of a two-role job: c0 = p (parameter servers), c1 = w (workers)
TWO_ROLES = ("ps", "worker")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Role(_Strict):
    """Per-task demand (resource -> amount) and bounds on the task count."""

    demand: dict[Name, Quantity] = Field(description="per-task demand: resource -> amount, in the unit the instance uses for that resource")
    min: TaskCount = Field(1, description="fewest tasks of this role when the job runs")
    max: TaskCount | None = Field(None, description="most tasks of this role (default: min)")

    @property
    def max_count(self) -> int:
        return self.min if self.max is None else self.max


class Bandwidth(_Strict):
    """Network bandwidth of one task at each end of a PS<->worker exchange."""

    ps: PositiveQuantity = Field(description="bandwidth of a parameter server, MB/s")
    worker: PositiveQuantity = Field(description="bandwidth of a worker, MB/s")


class LossHistory(_Strict):
    """Observed training losses, fitted on load (Optimus eq. 1 or a SLAQ family)
    into ``loss_curve`` and, for the optimus family, ``remaining_steps``."""

    steps: list[NonNeg] = Field(min_length=1, description="training steps at which the losses were observed")
    loss: list[NonNeg] = Field(min_length=1, description="observed training loss at each step (same length as steps)")
    family: Literal["optimus", "sublinear", "linear"] = Field("optimus", description="curve family: optimus (eq. 1), SLAQ sublinear or linear")
    decay: Annotated[float, PlainValidator(number_validator(gt=0, le=1))] = Field(0.9, description="SLAQ history weight in (0, 1]: older points count decay^age")
    threshold: Annotated[float, PlainValidator(number_validator(gt=0, lt=1))] = Field(0.05, description="Optimus convergence threshold δ in (0, 1): the job is done when the loss changes by less than δ")


class SpeedSamples(_Strict):
    """Observed speeds, fitted on load by NNLS (Optimus §3.2) into ``speed``.
    ``points``: ``[[p, w, steps_per_s], ...]`` (optimus forms) or ``[[n, steps_per_s], ...]`` (amdahl)."""

    form: Literal["optimus-sync", "optimus-async", "amdahl"] = Field(description="speed form to fit: optimus-sync (eq. 4), optimus-async (eq. 3) or amdahl (one role)")
    batch: Positive | None = Field(None, description="batch size M of optimus-sync, examples per step")
    points: list[list[float]] = Field(min_length=1, description="measured speeds: [[p, w, steps_per_s], ...] (optimus forms) or [[n, steps_per_s], ...] (amdahl)")


class Spread(_Strict):
    """How a job's speed changes with the servers its tasks span (locality): measured speeds when
    spread (``speed_by_accelerator``, e.g. Gavel's unconsolidated throughputs), else a factor."""

    factor_per_server: Annotated[float, PlainValidator(number_validator(gt=0, le=1))] = Field(
        1.0, description="speed multiplier in (0, 1] for each server beyond the first that the job's tasks span (types without a measured spread speed)")
    speed_by_accelerator: dict[Name, SpeedForm] | None = Field(
        None, description="measured speed on each type when the job's tasks span more than one server (Gavel's unconsolidated throughputs): type -> speed form; packed on one server the job runs at its speed there")


class Job(_Strict):
    """A training job. Time in seconds, work in training steps."""

    id: JobId = Field(description="unique job id (an integer id is read as its decimal text)")
    model: str | None = Field(None, description="name of the DL model (informational; profiles in models/)")
    arrival: NonNeg = Field(0.0, description="arrival time, seconds (simulation workloads)")
    weight: Positive = Field(1.0, description="priority weight (weighted DRF, Dorm's fair share)")
    roles: dict[Name, Role] = Field(min_length=1, description="one role (worker/executor/container) or two (ps and worker)")
    speed: SpeedForm | None = Field(None, description="training speed f(p, w) in steps/s: optimus-sync, optimus-async, amdahl or table")
    speed_by_accelerator: dict[Name, SpeedForm] | None = Field(None, description="speed per accelerator type (servers' accelerator): type -> speed form; on a type not listed the job runs at speed, or cannot run without one")
    remaining_steps: Steps | None = Field(None, description="training steps left to convergence (allocation problem)")
    model_size: Quantity | None = Field(None, description="parameters exchanged per step, MB (placement)")
    bandwidth: Bandwidth | None = Field(None, description="MB/s of a PS and of a worker (placement)")
    new: bool = Field(False, description="just started (Optimus priority factor)")
    loss_curve: LossCurve | None = Field(None, description="predicted normalised loss curve (SLAQ quality problem)")
    loss_history: LossHistory | None = Field(None, description="observed losses, fitted on validation into loss_curve and remaining_steps where absent")
    speed_samples: SpeedSamples | None = Field(None, description="observed speeds, fitted on validation (NNLS) into speed where absent")
    param_blocks: list[PositiveCount] | None = Field(None, description="parameters per block, in MXNet's order (ps-assignment)")
    running: dict[Name, Count] | None = Field(None, description="counts the job runs with now: role -> tasks (allocation's reconfiguration cost; default: summed from previous)")
    restart_s: NonNeg | None = Field(None, description="seconds the job loses when its counts change (checkpoint and restart); default: policy.restart_s")
    running_accelerator: Name | None = Field(None, description="the accelerator type the job runs on now (typed clusters): moving it to another type is a restart")
    received_s: dict[Name, NonNeg] | None = Field(None, description="seconds the job has run on each accelerator type since the job set last changed (the history of Gavel's round mechanism, gavel-* solvers)")
    queue: Name | None = Field(None, description="the queue (tenant) the job is submitted to; its quotas bound what the job may use (null: only the cluster's capacity)")
    allowed_flavors: list[Name] | None = Field(None, description="the flavors (accelerator types; default-flavor: servers without one) the job may run on: Kueue's flavors whose taints its pods tolerate and whose node labels its node selector and affinity match; null: every flavor")
    spread: Spread | None = Field(None, description="speed by servers spanned: a configuration spans the fewest servers of its type that hold it (packed), and runs factor_per_server^(servers - 1) times its speed")

    @property
    def role_names(self) -> tuple[str, ...]:
        """Roles in canonical order: ``(ps, worker)`` for two-role jobs."""
        return TWO_ROLES if len(self.roles) == 2 else tuple(self.roles)


class Server(_Strict):
    """A server, or ``count`` identical ones named ``name-0 .. name-(count-1)``."""

    name: Name = Field(description="server name (with count: the prefix of the expanded names)")
    count: ServerCount = Field(1, description="identical servers this entry stands for")
    capacity: dict[Name, Quantity] = Field(description="resource -> amount this server offers, in the instance's units")
    accelerator: Name | None = Field(None, description="accelerator type of its GPUs (e.g. v100, k80); a job runs on one type at a time. Without any, the cluster is one type")


#: the flavor of servers that name no accelerator type (Kueue's conventional name)
DEFAULT_FLAVOR = "default-flavor"


class Quota(_Strict):
    """Kueue's quota of one resource of one flavor in a ClusterQueue."""

    nominal: Quantity = Field(description="nominalQuota: what the queue may use of this flavor and resource")
    borrowing_limit: Quantity | None = Field(None, description="borrowingLimit: most it may use beyond nominal from its cohort's unused quota (null: up to the cohort's)")
    lending_limit: Quantity | None = Field(None, description="lendingLimit: most of its unused nominal quota others in its cohort may use (null: all of it)")


class Preemption(_Strict):
    """Kueue's ClusterQueue ``preemption`` (classic preemption): which admitted workloads a pending one may evict."""

    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = Field(
        "Never", description="withinClusterQueue: evict this queue's own workloads of lower priority (or, LowerOrNewerEqualPriority, equal priority and newer)")
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = Field(
        "Never", description="reclaimWithinCohort: evict workloads of other queues in the cohort that use more than their nominal quota (of lower priority, or any)")
    borrow_within_cohort: Literal["Never", "LowerPriority"] = Field(
        "Never", description="borrowWithinCohort.policy: a workload that must borrow may evict lower-priority workloads of other queues in the cohort that use more than their nominal quota (classic preemption; needs reclaim_within_cohort)")
    max_priority_threshold: float | None = Field(
        None, description="borrowWithinCohort.maxPriorityThreshold in the jobs' weights: only workloads of at most this weight are evicted that way (null: any lower)")


class Queue(_Strict):
    """A tenant's queue (Kueue's ClusterQueue): quotas per flavor and resource, and its cohort."""

    name: Name = Field(description="queue name (jobs name it in queue)")
    cohort: Name | None = Field(None, description="cohort: queues that lend each other unused quota")
    quotas: dict[Name, dict[Name, Quota]] = Field(description="flavor -> resource -> quota; a flavor is an accelerator type (default-flavor: servers without one) or one of the instance's shared_flavors; a flavor or resource not listed: the queue cannot use it")
    preemption: Preemption | None = Field(None, description="preemption: which running workloads a pending one may evict (kueue-admission); null: Kueue's default, Never for both")
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] | None = Field(None, description="Kueue's queueingStrategy for this queue (kueue-admission): StrictFIFO's head that does not fit blocks the queue; null: the solver's option")
    when_can_borrow: Literal["MayStopSearch", "TryNextFlavor"] | None = Field(None, description="Kueue's flavorFungibility.whenCanBorrow for this queue (kueue-admission): TryNextFlavor looks for a later flavor that fits without borrowing; null: the solver's option")
    when_can_preempt: Literal["MayStopSearch", "TryNextFlavor"] | None = Field(None, description="Kueue's flavorFungibility.whenCanPreempt for this queue (kueue-admission): MayStopSearch takes the first flavor where preemption makes room; TryNextFlavor (Kueue's default) looks on; null: the solver's option")
    fungibility_preference: Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"] | None = Field(None, description="Kueue's flavorFungibility.preference for this queue (kueue-admission): which of borrowing and preemption (without borrowing) a flavor is chosen for first; null: the solver's option")
    fair_sharing_weight: NonNeg | None = Field(None, description="Kueue's fairSharing.weight of this queue: its share value is its dominant share of borrowed resources divided by it (kueue-admission with fair_sharing; 0: any borrowing ranks it last; null: 1, Kueue's default)")


class Cohort(_Strict):
    """Kueue's Cohort object: a node of a cohort tree. Its quotas are a pool on top of its
    members' (``nominal``); ``lending_limit`` and ``borrowing_limit`` bound what its subtree lends
    to and borrows from its parent. A cohort that queues or cohorts name but that is not listed
    is a root without quotas."""

    name: Name = Field(description="cohort name (queues and cohorts name it in cohort / parent)")
    parent: Name | None = Field(None, description="the parent cohort (null: a root)")
    quotas: dict[Name, dict[Name, Quota]] = Field(default_factory=dict, description="flavor -> resource -> quota of the cohort itself: nominal (a pool shared by its subtree), borrowing_limit and lending_limit (toward its parent)")


class Policy(_Strict):
    """Scheduling-policy parameters of the problems that have them."""

    fairness_threshold: NonNeg = Field(0.1, description="Dorm θ1: fairness-loss budget as a share of 2m (eq. 15)")
    adjustment_threshold: NonNeg = Field(0.1, description="Dorm θ2: share of running applications that may be adjusted (eq. 16)")
    horizon_s: Positive = Field(60.0, description="SLAQ scheduling epoch T, seconds")
    restart_s: NonNeg = Field(0.0, description="seconds a running job loses when its counts change, for jobs without their own restart_s (allocation)")
    objective: Literal["total_remaining_time", "jct_weighted_time"] = Field(
        "total_remaining_time", description="the allocation problem's second objective: Optimus's Σ remaining time, or "
                                            "the average-JCT objective (docs/allocation.md)")


#: the source named in errors while :meth:`Instance.model_validate` runs (None outside it)
_SOURCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("schedopt_instance_source", default=None)


class _Invalid(Exception):
    """Cross-field problems found by :meth:`Instance._validate_whole` (internal)."""

    def __init__(self, source: str, problems: list[FieldProblem]):
        super().__init__(source)
        self.source, self.problems = source, problems


class Instance(_Strict):
    """One scheduling problem. Build with :func:`load_instance` or
    :meth:`Instance.from_dict`, which validate; treat as immutable."""

    schema_: Literal["schedopt/instance@1"] = Field(INSTANCE_SCHEMA, alias="schema", description="format tag; defaults when absent")
    name: Name = Field(description="instance name (copied into plans)")
    resources: list[Name] = Field(min_length=1, description="resource types, e.g. [cpu, gpu, mem_gb]; every capacity and demand names one")
    servers: list[Server] = Field(default_factory=list, description="the cluster's servers")
    jobs: list[Job] = Field(max_length=MAX_JOBS, description="the jobs (applications) to schedule")
    policy: Policy | None = Field(None, description="policy parameters (Dorm θ1/θ2, SLAQ epoch)")
    previous: dict[JobId, dict[str, dict[str, Count]]] | None = Field(None, description="running placement: job -> server -> role -> tasks (Dorm's adjustments, restarts)")
    allocation: dict[JobId, dict[str, Count]] | None = Field(None, description="given counts: job -> role -> tasks (the placement and ps-assignment problems)")
    allocation_accelerators: dict[JobId, Name | None] | None = Field(None, description="given types with the given counts, on clusters whose servers name accelerator types: job -> the type its tasks run on (null: servers without one); an allocation plan's accelerators (placement)")
    queues: list[Queue] | None = Field(None, description="tenants' queues with quotas per flavor and resource, in cohorts (Kueue's ClusterQueues; allocation)")
    shared_flavors: list[Name] | None = Field(None, description="flavors that are no accelerator type: each holds the quotas of resources a queue draws on whatever type a job runs on (Kueue: a ClusterQueue's further resource group with one flavor, e.g. default-flavor for cpu and memory beside GPU flavors)")
    cohorts: list[Cohort] | None = Field(None, description="cohorts with a parent or quotas of their own (Kueue's Cohort objects, hierarchical cohorts); a cohort only named by queues needs no entry")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    _source: str = PrivateAttr(default="<instance>")
    _fits: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    _spread_speeds: dict[tuple[str, str | None], Any] = PrivateAttr(default_factory=dict)
    #: derived arrays of the jobs (objective weights), keyed by name, with the jobs list they came from
    _derived: dict[str, tuple[list[Any], Any]] = PrivateAttr(default_factory=dict)

    @property
    def source(self) -> str:
        """Where the instance came from (a file path), for error messages."""
        return self._source

    # ---- construction -------------------------------------------------------------
    @model_validator(mode="after")
    def _validate_whole(self) -> "Instance":
        """One path for files and code: the cross-field checks, then the fits of
        observations, whichever way the instance is made (``Instance(...)``,
        :meth:`from_dict`, :func:`load_instance`). Every problem's field is named."""
        source = _SOURCE.get() or "<Instance>"
        problems = self._cross_check()
        if not problems:
            problems = self._fit_observations()
        if problems:
            raise _Invalid(source, problems)  # not a ValueError: pydantic lets it through unwrapped
        self._source = source
        return self

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> "Instance":
        """Validate ``data`` (as parsed from a file; ``schema`` defaults to
        ``schedopt/instance@1`` when absent); raises :class:`InputError`."""
        if not isinstance(data, dict):
            raise InputError(source, f"expected a mapping at the top level, got {type(data).__name__}")
        return cls.model_validate(data, context={"source": source})

    @classmethod
    def model_validate(cls, obj: Any, *, strict: bool | None = None, from_attributes: bool | None = None,
                       context: dict[str, Any] | None = None, **kwargs: Any) -> "Instance":
        """pydantic's ``model_validate``, raising :class:`InputError` (with every field problem)."""
        source = (context or {}).get("source", "<Instance>")
        token = _SOURCE.set(source)
        try:
            return super().model_validate(obj, strict=strict, from_attributes=from_attributes, context=context, **kwargs)
        except ValidationError as exc:
            raise InputError(source, problems_from_validation(exc, skip=frozenset(SPEED_FORMS), model=cls)) from None
        except _Invalid as exc:
            raise InputError(exc.source, exc.problems) from None
        finally:
            _SOURCE.reset(token)

    def __init__(self, /, **data: Any) -> None:
        """Build from keyword fields (the file's fields; nested parts as dicts or
        :class:`Job`/:class:`Server`/... objects); validated like a file, raises
        :class:`InputError`."""
        if _SOURCE.get() is not None:  # inside model_validate, which reports the problems
            super().__init__(**data)
            return
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InputError("<Instance>", problems_from_validation(exc, skip=frozenset(SPEED_FORMS), model=Instance)) from None
        except _Invalid as exc:
            raise InputError(exc.source, exc.problems) from None

    def with_allocation(self, allocation: dict[str, dict[str, int]],
                        accelerators: dict[str, str | None] | None = None) -> "Instance":
        """A copy whose ``allocation`` (the counts a placement problem takes as given) is ``allocation``,
        and on a cluster with accelerator types each job's type (an allocation plan's ``accelerators``)."""
        update: dict[str, Any] = {"allocation": {j: dict(c) for j, c in allocation.items()}}
        if accelerators is not None:
            update["allocation_accelerators"] = {j: a for j, a in accelerators.items() if j in allocation}
        copy = self.model_copy(update=update)
        copy._source = self._source
        return copy

    def with_objective(self, name: str) -> "Instance":
        """A copy whose allocation objective (``policy.objective``) is ``name``; ``self`` when it is already."""
        if self.objective == name:
            return self
        policy = (self.policy or Policy()).model_copy(update={"objective": name})
        copy = self.model_copy(update={"policy": policy})
        copy._source, copy._derived = self._source, {}
        return copy

    @property
    def objective(self) -> str:
        """The allocation problem's second objective (``policy.objective``)."""
        return (self.policy or Policy()).objective

    def derived(self, key: str, make: Any) -> Any:
        """``make(self)`` computed once per jobs list (a copy with other jobs recomputes it)."""
        got = self._derived.get(key)
        if got is None or got[0] is not self.jobs:
            got = (self.jobs, make(self))
            self._derived[key] = got
        return got[1]

    @property
    def fits(self) -> dict[str, dict[str, Any]]:
        """Diagnostics of the fits made on load, by job id (empty if none)."""
        return self._fits

    @property
    def horizon_s(self) -> float:
        """SLAQ's scheduling epoch T in seconds (``policy.horizon_s``)."""
        return (self.policy or Policy()).horizon_s

    def _fit_observations(self) -> list[FieldProblem]:
        """Close the loop (Optimus §3, SLAQ §2): fit ``speed_samples`` into ``speed``
        and ``loss_history`` into ``loss_curve``/``remaining_steps`` where those are absent."""
        out: list[FieldProblem] = []
        for i, job in enumerate(self.jobs):
            path = f"jobs[{i}]"
            diag: dict[str, Any] = {}
            samples = job.speed_samples
            if samples is not None and job.speed is None:
                n_roles = 1 if samples.form == "amdahl" else 2
                if n_roles != len(job.roles):
                    out.append(FieldProblem(f"{path}.speed_samples.form", f'form "{samples.form}" needs {"one role" if n_roles == 1 else "two roles (ps and worker)"}; the job has {len(job.roles)}'))
                    continue
                try:
                    sf = fit_speed(samples.points, samples.form, batch=samples.batch)
                except FitError as exc:
                    out.append(FieldProblem(f"{path}.speed_samples", f"cannot fit: {exc}"))
                    continue
                job.speed = sf.speed
                diag["speed"] = {"form": samples.form, "samples": sf.samples, "mean_rel_error": sf.mean_rel_error,
                                 "max_rel_error": sf.max_rel_error, "underdetermined": sf.underdetermined}
            hist = job.loss_history
            if hist is not None and (job.loss_curve is None or job.remaining_steps is None):
                if len(hist.steps) != len(hist.loss):
                    out.append(FieldProblem(f"{path}.loss_history", f"steps ({len(hist.steps)}) and loss ({len(hist.loss)}) differ in length"))
                    continue
                try:
                    hf = fit_history(hist.steps, hist.loss, family=hist.family, decay=hist.decay, threshold=hist.threshold)
                except CurveFitError as exc:
                    out.append(FieldProblem(f"{path}.loss_history", f"cannot fit: {exc}"))
                    continue
                if job.remaining_steps is None and hist.family == "optimus":
                    if hf.flags or hf.total_steps is None or not np.isfinite(hf.total_steps):
                        why = "; ".join(hf.flags) or "no downward trend"
                        out.append(FieldProblem(f"{path}.loss_history", f"the fitted curve never reaches the threshold ({why}); give remaining_steps"))
                        continue
                    job.remaining_steps = max(0.0, hf.total_steps - hf.curve.step)
                if job.loss_curve is None:
                    job.loss_curve = hf.curve
                diag["loss"] = {"family": hist.family, "rmse": hf.rmse, "flags": hf.flags,
                                "remaining_steps": job.remaining_steps}
            if diag:
                self._fits[job.id] = diag
        return out

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=False)

    def _cross_check(self) -> list[FieldProblem]:
        out: list[FieldProblem] = []
        known = set(self.resources)
        if len(known) != len(self.resources):
            out.append(FieldProblem("resources", "resource names must be unique"))
        listing = ", ".join(self.resources)

        def unknown_keys(mapping: dict[str, float], path: str) -> None:
            for key in mapping:
                if key not in known:
                    out.append(FieldProblem(f"{path}.{key}", f'unknown resource "{key}"; the instance declares: {listing}'))

        total_servers = sum(srv.count for srv in self.servers)
        if total_servers > MAX_SERVERS:
            out.append(FieldProblem("servers", f"{total_servers:,} servers after expanding count; the limit is {MAX_SERVERS:,} (MAX_SERVERS)"))
            return out
        seen_servers: dict[str, str] = {}
        for i, srv in enumerate(self.servers):
            unknown_keys(srv.capacity, f"servers[{i}].capacity")
            for name in _expand_names(srv):
                if name in seen_servers:
                    out.append(FieldProblem(f"servers[{i}].name", f'server name "{name}" is used twice (also {seen_servers[name]})'))
                seen_servers.setdefault(name, f"servers[{i}]")

        cluster_flavors = {DEFAULT_FLAVOR if a is None else a for a in {srv.accelerator for srv in self.servers}}
        seen_jobs: dict[str, int] = {}
        for i, job in enumerate(self.jobs):
            path = f"jobs[{i}]"
            if job.id in seen_jobs:
                out.append(FieldProblem(f"{path}.id", f'duplicate job id "{job.id}" (also jobs[{seen_jobs[job.id]}])'))
            seen_jobs.setdefault(job.id, i)
            for rname, role in job.roles.items():
                unknown_keys(role.demand, f"{path}.roles.{rname}.demand")
                if role.max is not None and role.max < role.min:
                    out.append(FieldProblem(f"{path}.roles.{rname}.max", f"max ({role.max}) is below min ({role.min})"))
            if len(job.roles) > 2:
                out.append(FieldProblem(f"{path}.roles", "a job has one role or two (ps and worker)"))
            elif len(job.roles) == 2 and set(job.roles) != set(TWO_ROLES):
                out.append(FieldProblem(f"{path}.roles", f"a two-role job has roles ps and worker, got {sorted(job.roles)}"))
            if job.speed is not None and len(job.roles) <= 2 and job.speed.n_roles != len(job.roles):
                need = "two roles (ps and worker)" if job.speed.n_roles == 2 else "one role"
                out.append(FieldProblem(f"{path}.speed.form", f'speed form "{job.speed.form}" needs {need}; the job has {len(job.roles)}'))
            types = {srv.accelerator for srv in self.servers if srv.accelerator is not None}
            for kind in sorted(set(job.received_s or {}) - types):
                out.append(FieldProblem(f"{path}.received_s.{kind}", f'"{kind}" is not an accelerator type of the servers '
                                                                      f"({', '.join(sorted(types)) or 'none'})"))
            for k, flavor in enumerate(job.allowed_flavors or []):
                if flavor not in cluster_flavors:
                    out.append(FieldProblem(f"{path}.allowed_flavors[{k}]", f'unknown flavor "{flavor}"; the cluster has '
                                                                            f"{sorted(cluster_flavors)}"))
            spread_speeds = (job.spread.speed_by_accelerator or {}) if job.spread is not None else {}
            for field, per_type in (("speed_by_accelerator", job.speed_by_accelerator or {}),
                                    ("spread.speed_by_accelerator", spread_speeds)):
                for kind, speed in per_type.items():
                    if len(job.roles) <= 2 and speed.n_roles != len(job.roles):
                        need = "two roles (ps and worker)" if speed.n_roles == 2 else "one role"
                        out.append(FieldProblem(f"{path}.{field}.{kind}.form",
                                                f'speed form "{speed.form}" needs {need}; the job has {len(job.roles)}'))
            for kind in sorted(set(spread_speeds) - types):
                out.append(FieldProblem(f"{path}.spread.speed_by_accelerator.{kind}",
                                        f'"{kind}" is not an accelerator type of the servers ({", ".join(sorted(types)) or "none"})'))

        queue_names = [q.name for q in self.queues or []]
        for i, q in enumerate(self.queues or []):
            if queue_names.count(q.name) > 1:
                out.append(FieldProblem(f"queues[{i}].name", f'queue "{q.name}" is listed twice'))
            flavors = {DEFAULT_FLAVOR if a is None else a for a in {srv.accelerator for srv in self.servers}}
            shared = set(self.shared_flavors or [])
            for flavor, per in q.quotas.items():
                if flavor not in flavors and flavor not in shared:
                    out.append(FieldProblem(f"queues[{i}].quotas.{flavor}", f'unknown flavor "{flavor}"; the cluster has {sorted(flavors)}'
                                                                           + (f" and shares {sorted(shared)}" if shared else "")))
                unknown_keys(per, f"queues[{i}].quotas.{flavor}")
                for r, quota in per.items():
                    if quota.lending_limit is not None and quota.lending_limit > quota.nominal:
                        out.append(FieldProblem(f"queues[{i}].quotas.{flavor}.{r}.lending_limit",
                                                f"{quota.lending_limit:g} exceeds the nominal quota {quota.nominal:g}"))
            for r in sorted({r for f in shared & set(q.quotas) for r in q.quotas[f]}):
                holders = [f for f in q.quotas if r in q.quotas[f]]
                if len(holders) > 1:
                    out.append(FieldProblem(f"queues[{i}].quotas.{holders[1]}.{r}", f"{r} has a quota under a shared flavor and "
                                            f"under {holders[1]}: a resource is in one resource group, with one shared flavor"))
        for k, flavor in enumerate(self.shared_flavors or []):
            if flavor in cluster_flavors:
                out.append(FieldProblem(f"shared_flavors[{k}]", f'"{flavor}" is an accelerator type of the servers: a shared '
                                                                 "flavor is none"))
        cohort_names = [c.name for c in self.cohorts or []]
        parent = {c.name: c.parent for c in self.cohorts or []}
        for i, c in enumerate(self.cohorts or []):
            path = f"cohorts[{i}]"
            if cohort_names.count(c.name) > 1:
                out.append(FieldProblem(f"{path}.name", f'cohort "{c.name}" is listed twice'))
            seen, node = {c.name}, c.parent
            while node is not None:
                if node in seen:
                    out.append(FieldProblem(f"{path}.parent", f'cohort "{c.name}" is its own ancestor (a cycle through "{node}")'))
                    break
                seen.add(node)
                node = parent.get(node)
            for flavor, per in c.quotas.items():
                if flavor not in cluster_flavors and flavor not in (self.shared_flavors or []):
                    out.append(FieldProblem(f"{path}.quotas.{flavor}", f'unknown flavor "{flavor}"; the cluster has {sorted(cluster_flavors)}'))
                unknown_keys(per, f"{path}.quotas.{flavor}")
                for r, quota in per.items():
                    for field in ("borrowing_limit", "lending_limit"):
                        if c.parent is None and getattr(quota, field) is not None:
                            out.append(FieldProblem(f"{path}.quotas.{flavor}.{r}.{field}", "a root cohort has no parent to "
                                                                                          "borrow from or lend to"))
        lenders: dict[tuple[str, str, str], int] = {}
        nodes = [(q.cohort, q.quotas, True) for q in self.queues or [] if q.cohort is not None] + \
                [(c.parent, c.quotas, False) for c in self.cohorts or [] if c.parent is not None]
        for above, quotas, queue in nodes:  # a node lending with a lending limit doubles its tree's rows
            for flavor, per in quotas.items():
                for r, quota in per.items():
                    if quota.lending_limit is not None and (not queue or quota.lending_limit < quota.nominal):
                        key = (self.cohort_chain(above)[-1], flavor, r)
                        lenders[key] = lenders.get(key, 0) + 1
        for (cohort, flavor, r), n in sorted(lenders.items()):
            if n > MAX_LENDING_MEMBERS:
                out.append(FieldProblem("queues", f"cohort {cohort}: {n} queues or cohorts lend {r}@{flavor} with a lending "
                                                  f"limit; at most {MAX_LENDING_MEMBERS} (MAX_LENDING_MEMBERS: each doubles the "
                                                  "cohort tree's quota rows)"))
        for i, job in enumerate(self.jobs):
            if job.queue is not None and job.queue not in queue_names:
                out.append(FieldProblem(f"jobs[{i}].queue", f'unknown queue "{job.queue}"; queues: {", ".join(queue_names) or "none"}'))

        roles_of = {job.id: set(job.roles) for job in self.jobs}
        for key, placement in (self.previous or {}).items():
            self._check_ref(out, f"previous.{key}", key, roles_of)
            for server, counts in placement.items():
                if server not in seen_servers:
                    out.append(FieldProblem(f"previous.{key}.{server}", f'unknown server "{server}"'))
                self._check_roles(out, f"previous.{key}.{server}", key, counts, roles_of)
        for key, counts in (self.allocation or {}).items():
            self._check_ref(out, f"allocation.{key}", key, roles_of)
            self._check_roles(out, f"allocation.{key}", key, counts, roles_of)
        kinds = {srv.accelerator for srv in self.servers}
        for key, kind in (self.allocation_accelerators or {}).items():
            if key not in (self.allocation or {}):
                out.append(FieldProblem(f"allocation_accelerators.{key}", f'job "{key}" has no given counts (allocation)'))
            elif kind not in kinds:
                names = ", ".join(sorted(str(k) if k is not None else "null" for k in kinds))
                out.append(FieldProblem(f"allocation_accelerators.{key}", f'no server has type {kind!r} (types: {names})'))
        if self.allocation is not None and any(k is not None for k in kinds):
            for key in self.allocation:
                if key not in (self.allocation_accelerators or {}):
                    out.append(FieldProblem(f"allocation_accelerators.{key}", "the servers name accelerator types: give "
                                                                              "the type each job's counts run on"))
        for i, job in enumerate(self.jobs):
            if job.running is not None:
                self._check_roles(out, f"jobs[{i}].running", job.id, job.running, roles_of)
        return out

    @staticmethod
    def _check_ref(out: list[FieldProblem], path: str, job_id: str, roles_of: dict[str, set[str]]) -> None:
        if job_id not in roles_of:
            out.append(FieldProblem(path, f'unknown job "{job_id}"'))

    @staticmethod
    def _check_roles(out: list[FieldProblem], path: str, job_id: str, counts: dict[str, int], roles_of: dict[str, set[str]]) -> None:
        for role in counts:
            if job_id in roles_of and role not in roles_of[job_id]:
                out.append(FieldProblem(f"{path}.{role}", f'job "{job_id}" has no role "{role}"'))

    # ---- derived views (numpy) ---------------------------------------------------------
    @cached_property
    def server_names(self) -> list[str]:
        """Server names with ``count`` expanded (``gpu-0 .. gpu-5``)."""
        return [n for srv in self.servers for n in _expand_names(srv)]

    @cached_property
    def server_capacity(self) -> np.ndarray:
        """Capacity per expanded server, shape (servers, resources)."""
        rows = [self.vector(srv.capacity) for srv in self.servers for _ in range(srv.count)]
        return np.array(rows, dtype=float).reshape(len(rows), len(self.resources))

    @cached_property
    def capacity_total(self) -> np.ndarray:
        """Cluster capacity C_r summed over servers, shape (resources,)."""
        return np.array(
            [sum(srv.capacity.get(r, 0.0) * srv.count for srv in self.servers) for r in self.resources],
            dtype=float,
        )

    @cached_property
    def accelerators(self) -> list[str | None]:
        """The accelerator types of the servers, in order of first appearance (None:
        servers that name none). ``[None]`` for a cluster without types."""
        seen: dict[str | None, None] = {}
        for srv in self.servers:
            seen.setdefault(srv.accelerator, None)
        return list(seen) or [None]

    @property
    def flavors(self) -> list[str]:
        """The flavor of each accelerator type, in :attr:`accelerators` order (``default-flavor`` for none)."""
        return [DEFAULT_FLAVOR if a is None else a for a in self.accelerators]

    @cached_property
    def has_types(self) -> bool:
        """Whether some server names an accelerator type (plans then say each job's type)."""
        return any(a is not None for a in self.accelerators)

    @property
    def typed(self) -> bool:
        """Whether the allocation takes the typed model: some server names an accelerator
        type (a type per job), some job's speed depends on the servers it spans, or some
        job may run on some flavors only."""
        return (self.has_types or bool(self.queues)
                or any(job.spread is not None or job.allowed_flavors is not None for job in self.jobs))

    @cached_property
    def accelerator_capacity(self) -> np.ndarray:
        """Capacity per accelerator type summed over its servers, shape (types, resources),
        rows in :attr:`accelerators` order."""
        rows = {kind: np.zeros(len(self.resources)) for kind in self.accelerators}
        for srv in self.servers:
            rows[srv.accelerator] = rows[srv.accelerator] + self.vector(srv.capacity) * srv.count
        return np.array([rows[k] for k in self.accelerators], dtype=float).reshape(len(rows), len(self.resources))

    def speed_on(self, job: Job, accelerator: str | None) -> SpeedForm | None:
        """The job's speed on servers of type ``accelerator``: its ``speed_by_accelerator``
        entry, else its ``speed`` (None: it cannot run there); with ``spread``, a table
        of every count its roles allow, each at its measured spread speed on that type where the
        count spans more than one server (``spread.speed_by_accelerator``), else at
        factor^(servers spanned - 1) of that speed.
        None also where the type's flavor is not among the job's ``allowed_flavors``."""
        if job.allowed_flavors is not None and (DEFAULT_FLAVOR if accelerator is None else accelerator) not in job.allowed_flavors:
            return None
        if job.speed_by_accelerator and accelerator is not None and accelerator in job.speed_by_accelerator:
            speed = job.speed_by_accelerator[accelerator]
        else:
            speed = job.speed
        if speed is None or job.spread is None:
            return speed
        key = (job.id, accelerator)
        if key not in self._spread_speeds:
            self._spread_speeds[key] = self._spread_table(job, speed, accelerator)
        return self._spread_speeds[key]

    def _spread_table(self, job: Job, speed: Any, accelerator: str | None) -> Any:
        """``speed`` with the spread factor, as a table over the counts the roles allow."""
        from schedopt.speed import TableSpeed

        names = job.role_names
        grids = [np.arange(job.roles[r].min, job.roles[r].max_count + 1) for r in names]
        counts = np.stack([g.ravel() for g in np.meshgrid(*grids, indexing="ij")], axis=1)
        c0 = counts[:, 0]
        c1 = counts[:, 1] if len(names) == 2 else np.zeros_like(c0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = np.asarray(speed.step_time_s(c0, c1), dtype=float).reshape(-1)
        demand = self.role_demand(job)
        use = c0[:, None] * demand[0] + (c1[:, None] * demand[1] if len(names) == 2 else 0.0)
        largest = np.array([self.vector(srv.capacity) for srv in self.servers if srv.accelerator == accelerator]
                           ).reshape(-1, len(self.resources)).max(axis=0, initial=0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            need = np.where(use > 0, np.ceil(use / np.where(largest > 0, largest, np.nan) - FIT_TOL), 1.0)
        servers = np.nan_to_num(need, nan=np.inf).max(axis=1) if len(self.resources) else np.ones(len(c0))
        rate = np.where(np.isfinite(step) & (step > 0) & np.isfinite(servers),
                        job.spread.factor_per_server ** np.maximum(servers - 1, 0) / np.where(step > 0, step, 1.0), 0.0)
        measured = (job.spread.speed_by_accelerator or {}).get(accelerator) if accelerator is not None else None
        if measured is not None:  # spread over several servers: the measured speed there
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                apart = np.asarray(measured.step_time_s(c0, c1), dtype=float).reshape(-1)
            apart_rate = np.where(np.isfinite(apart) & (apart > 0), 1.0 / np.where(apart > 0, apart, 1.0), 0.0)
            rate = np.where(np.isfinite(servers) & (servers > 1), apart_rate, rate)
        rows = [[*map(int, c), float(r)] for c, r in zip(counts[:, :len(names)], rate)]
        return TableSpeed(points=rows)

    def cohort_chain(self, cohort: str | None) -> list[str]:
        """``cohort`` and its ancestors up to its tree's root (``[]`` for None)."""
        parent = {c.name: c.parent for c in self.cohorts or []}
        chain: list[str] = []
        while cohort is not None and cohort not in chain:
            chain.append(cohort)
            cohort = parent.get(cohort)
        return chain

    def moves_type(self, job: Job, accelerator: str | None) -> bool:
        """Whether running ``job`` on type ``accelerator`` moves it off the type it runs on
        now (a restart whatever its counts). The one test: only on a cluster whose servers
        name types, for a job that runs now and says on which type."""
        return (self.has_types and job.running_accelerator is not None and accelerator != job.running_accelerator
                and self.running_counts(job) is not None)

    def job_on(self, job: Job, accelerator: str | None) -> Job:
        """``job`` as it runs on type ``accelerator``: its speed there (:meth:`speed_on`)
        and, when it moves off the type it runs on now (:meth:`moves_type`), running counts
        no configuration has (MAX_TASKS + 1), so every configuration there pays its restart."""
        update: dict[str, Any] = {"speed": self.speed_on(job, accelerator)}
        if self.moves_type(job, accelerator):
            update["running"] = {r: MAX_TASKS + 1 for r in job.roles}
            update["restart_s"] = self.restart_cost_s(job)
        # what model_copy(update=...) does for a model without extra fields, at a third of its cost
        # (a typed model copies each job once per type: 430 copies a call at 144 jobs)
        copied = copy.copy(job)
        copied.__dict__.update(update)
        copied.__pydantic_fields_set__.update(update)
        return copied

    @cached_property
    def job_index(self) -> dict[str, int]:
        return {job.id: i for i, job in enumerate(self.jobs)}

    def running_counts(self, job: Job) -> dict[str, int] | None:
        """The counts ``job`` runs with now: ``job.running``, else its tasks summed
        over ``previous``; None for a job not running (or running no task)."""
        if job.running is not None:
            counts = {r: int(job.running.get(r, 0)) for r in job.roles}
        elif self.previous and job.id in self.previous:
            counts = {r: 0 for r in job.roles}
            for per_role in self.previous[job.id].values():
                for r, n in per_role.items():
                    counts[r] = counts.get(r, 0) + int(n)
        else:
            return None
        return counts if any(counts.values()) else None

    def restart_cost_s(self, job: Job) -> float:
        """Seconds ``job`` loses when its counts change: its own ``restart_s``,
        else ``policy.restart_s``, else 0."""
        if job.restart_s is not None:
            return float(job.restart_s)
        return float(self.policy.restart_s) if self.policy is not None else 0.0

    def vector(self, amounts: dict[str, float]) -> np.ndarray:
        """A resource map as a vector in ``self.resources`` order (missing = 0)."""
        return np.array([amounts.get(r, 0.0) for r in self.resources], dtype=float)

    def role_demands(self) -> np.ndarray:
        """Per-task demand of every job's first two roles in canonical order, shape (J, 2, R) (a
        one-role job's second slot is 0). Computed once per jobs list (:meth:`derived`)."""
        return self.derived("role_demands", _role_demands)

    def role_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Each job's allowed task counts of its first two roles in canonical order: the least
        (J, 2) and the most (J, 2) (a one-role job's second slot 0 and 0). Computed once per jobs
        list (:meth:`derived`), read-only."""
        return self.derived("role_bounds", _role_bounds)

    def role_demand(self, job: Job) -> np.ndarray:
        """Per-task demand of each role in canonical order, shape (roles, resources)."""
        return np.array([self.vector(job.roles[r].demand) for r in job.role_names]).reshape(
            len(job.role_names), len(self.resources)
        )


def _role_demands(instance: Instance) -> np.ndarray:
    resources = instance.resources
    zero = [0.0] * len(resources)
    rows = []  # built as Python lists and converted once: per-element numpy writes cost more
    for job in instance.jobs:
        names = job.role_names
        per_role = [[float(job.roles[n].demand.get(r, 0.0)) for r in resources] for n in names[:2]]
        rows.append(per_role + [zero] * (2 - len(per_role)))
    out = np.array(rows, dtype=float).reshape(len(instance.jobs), 2, len(resources))
    out.flags.writeable = False
    return out


def _role_bounds(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    bounds: list[list[int]] = []  # per job [lo0, lo1, hi0, hi1], as lists converted once
    for job in instance.jobs:
        names = job.role_names
        first = job.roles[names[0]]
        if len(names) == 2:
            second = job.roles[names[1]]
            bounds.append([first.min, second.min, first.max_count, second.max_count])
        else:
            bounds.append([first.min, 0, first.max_count, 0])
    lohi = np.array(bounds, dtype=np.int64).reshape(len(instance.jobs), 4)
    lo, hi = lohi[:, :2].copy(), lohi[:, 2:].copy()
    lo.flags.writeable = hi.flags.writeable = False
    return lo, hi


def _expand_names(srv: Server) -> list[str]:
    if "count" in srv.model_fields_set:
        return [f"{srv.name}-{k}" for k in range(srv.count)]
    return [srv.name]


with_field_docs(Role, Bandwidth, LossHistory, SpeedSamples, Spread, Job, Server, Quota, Preemption, Queue, Policy, Instance)


def load_instance(path: str | os.PathLike[str]) -> Instance:
    """Read and validate an instance file (JSON or YAML). Raises :class:`InputError`."""
    return Instance.from_dict(read_document(path), source=str(path))


def save_instance(instance: Instance, path: str | os.PathLike[str]) -> None:
    write_document(path, instance.to_dict())


def as_instance(value: Any) -> Instance:
    """``value`` as an :class:`Instance` (an Instance, a path, or a mapping; :func:`schedopt.io.as_document`)."""
    return as_document(value, Instance, load_instance, "instance")
