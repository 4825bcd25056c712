"""The simulation result (``schema: schedopt/simulation@1``, DESIGN.md) and its metrics."""

from __future__ import annotations

import os
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.io import problems_from_validation, read_document, with_field_docs, write_document
from schedopt.tolerances import SIM_ZERO

SIMULATION_SCHEMA = "schedopt/simulation@1"


class JobOutcome(BaseModel):
    """When a job arrived and finished."""

    model_config = ConfigDict(extra="forbid")

    arrival_s: float = Field(description="arrival time, seconds")
    completion_s: float | None = Field(description="completion time, seconds; null when unfinished at the end of the run")


class SimulationResult(BaseModel):
    """One simulated run. Times in seconds; ``timeline`` has one entry per interval."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["schedopt/simulation@1"] = Field(SIMULATION_SCHEMA, alias="schema", description="format tag")
    workload: str = Field(description="name of the workload (instance) simulated")
    scheduler: str = Field(description="allocation solver run every interval")
    placement: str | None = Field(None, description="placement solver run after each allocation, or null")
    interval_s: float = Field(description="scheduling interval, seconds")
    restart_overhead_s: float = Field(60.0, description="seconds a job loses when its configuration changes")
    restart_aware: bool = Field(True, description="the scheduler saw each running job's counts and the restart cost")
    communication_aware: bool = Field(False, description="placement changed PS jobs' speed (transfer share, PS imbalance)")
    ps_assignment: str | None = Field(None, description="ps-assignment solver setting the PS imbalance of jobs with param_blocks, or null")
    mean_transfer_share: float | None = Field(None, description="mean φ over running intervals of communicating jobs (1 = all pairs across servers)")
    seed: int = Field(0, description="seed of the run")
    error_steps: float = Field(0.0, description="estimation error of remaining steps in [0, 1) (Optimus Fig. 15)")
    error_speed: float = Field(0.0, description="estimation error of speeds in [0, 1) (Optimus Fig. 15)")
    horizon_s: float | None = Field(None, description="the run stopped after this many seconds, or null")
    estimation: Literal["truth", "online"] = Field("truth", description="what the scheduler saw: the truth (with error_steps, error_speed) or online fits of loss curves and speeds")
    estimate_error_steps: float | None = Field(None, description="mean |estimated - true remaining steps| / the job's total steps (the error of the predicted total, Fig. 15's convergence error) over the jobs the scheduler saw, each interval")
    estimate_error_speed: float | None = Field(None, description="online estimation: mean |estimated - true| / true step time at the configurations run; null otherwise")
    interference: dict[str, float] | None = Field(None, description="the truth's interference (sigma_run, sigma_step, busy: schedopt/sim/truth.py, DL2 §2.2); null: none")
    jobs: dict[str, JobOutcome] = Field(description="job id -> arrival and completion")
    avg_jct_s: float | None = Field(description="mean job completion time over finished jobs, seconds")
    makespan_s: float | None = Field(description="first arrival to last completion, seconds (null if a job is unfinished)")
    jct_percentiles_s: dict[str, float] = Field(default_factory=dict, description="p50, p90, p99 of the JCT, seconds")
    finished: int = Field(0, description="jobs finished")
    restarts: int = Field(0, description="configuration changes of jobs that had started (a resume after a pause counts)")
    unfinished: int = Field(0, description="jobs unfinished when the run stopped")
    unfinishable: dict[str, str] = Field(default_factory=dict, description="job id -> why it can never run on this cluster (left out of every round; counted as unfinished)")
    scaling_overhead_share: float = Field(0.0, description="restart seconds / running seconds")
    avg_utilization: dict[str, float] = Field(default_factory=dict, description="resource -> mean share in use over intervals with work")
    queue_share: dict[str, float] = Field(default_factory=dict, description="queue -> mean over intervals it has demand of its share of min(demand, nominal quota) it got (min over resources; 1 = never below its nominal share); instances with queues")
    queue_below_share: dict[str, float] = Field(default_factory=dict, description="queue -> share of the intervals it has demand in which it got less than min(demand, nominal quota)")
    scheduler_seconds: float = Field(0.0, description="wall time inside the scheduler, seconds")
    plans: int = Field(0, description="plans made (one per interval with work)")
    check_violations: int | None = Field(None, description="violations found by check over all plans; null when not checked")
    first_violation: str | None = Field(None, description="the first violation found, for people")
    timeline: dict[str, Any] = Field(default_factory=dict, description="per-interval series: time, running jobs, utilization")

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> "SimulationResult":
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InputError(source, problems_from_validation(exc)) from None


with_field_docs(JobOutcome, SimulationResult)

#: several schedulers' results on one workload (``simulate --compare ... --out FILE``)
RESULTS_SCHEMA = "schedopt/simulations@1"


def save_result(result: SimulationResult, path: str | os.PathLike[str]) -> None:
    write_document(path, result.to_dict(), tidy=True)


def results_document(results: list[SimulationResult]) -> dict[str, Any]:
    """``{schema: schedopt/simulations@1, results: [schedopt/simulation@1, ...]}``."""
    return {"schema": RESULTS_SCHEMA, "results": [r.to_dict() for r in results]}


def load_results(path: str | os.PathLike[str]) -> list[SimulationResult]:
    """The results in a file written by ``simulate`` (one scheduler or several)."""
    doc = read_document(path)
    if isinstance(doc, dict) and doc.get("schema") == RESULTS_SCHEMA:
        items = doc.get("results")
        if not isinstance(items, list):
            raise InputError(str(path), "results: expected a list of simulation results")
        return [SimulationResult.from_dict(item, source=f"{path}: results[{k}]") for k, item in enumerate(items)]
    return [SimulationResult.from_dict(doc, source=str(path))]


def load_result(path: str | os.PathLike[str]) -> SimulationResult:
    return SimulationResult.from_dict(read_document(path), source=str(path))


def summarize(workload: Instance, states: list[Any], tl: Any, *, scheduler: str, placement: str | None, interval_s: float,
              restart_overhead_s: float, restart_aware: bool, seed: int, communication_aware: bool = False,
              ps_assignment: str | None = None, mean_transfer_share: float | None = None, error_steps: float, error_speed: float, overhead_s: float,
              run_s: float, scheduler_s: float, plans: int, violations: int | None, first_violation: str | None,
              horizon_s: float | None, estimation: str = "truth", estimate_error_steps: float | None = None,
              estimate_error_speed: float | None = None, unfinishable: dict[str, str] | None = None,
              interference: dict[str, float] | None = None) -> SimulationResult:
    jobs = {s.job.id: JobOutcome(arrival_s=float(s.job.arrival), completion_s=s.completion_s) for s in states}
    jct = np.array([s.completion_s - s.job.arrival for s in states if s.completion_s is not None])
    finished = len(jct)
    unfinished = len(states) - finished
    makespan = None
    if states and unfinished == 0:
        makespan = max(s.completion_s for s in states) - min(s.job.arrival for s in states)
    busy = np.array(tl.running_jobs) > 0
    util = {r: float(np.mean(np.array(v)[busy])) if busy.any() else 0.0 for r, v in tl.utilization.items()}
    return SimulationResult(
        workload=workload.name, scheduler=scheduler, placement=placement, interval_s=interval_s,
        restart_overhead_s=restart_overhead_s, restart_aware=restart_aware,
        communication_aware=communication_aware, ps_assignment=ps_assignment, mean_transfer_share=mean_transfer_share,
        seed=seed, error_steps=error_steps, error_speed=error_speed,
        horizon_s=horizon_s, estimation=estimation, estimate_error_steps=estimate_error_steps,
        estimate_error_speed=estimate_error_speed, interference=interference, jobs=jobs, avg_jct_s=float(jct.mean()) if finished else None, makespan_s=makespan,
        jct_percentiles_s={f"p{q}": float(np.percentile(jct, q)) for q in (50, 90, 99)} if finished else {},
        finished=finished, unfinished=unfinished, unfinishable=dict(unfinishable or {}), restarts=int(sum(s.restarts for s in states)),
        scaling_overhead_share=overhead_s / run_s if run_s > 0 else 0.0, avg_utilization=util,
        queue_share={q: float(np.mean(v)) for q, v in tl.queue_share.items() if v},
        queue_below_share={q: float(np.mean(np.array(v) < 1.0 - SIM_ZERO)) for q, v in tl.queue_share.items() if v},
        scheduler_seconds=scheduler_s, plans=plans, check_violations=violations,
        first_violation=first_violation,
        timeline={"time_s": tl.time_s, "running_jobs": tl.running_jobs, "running_tasks": tl.running_tasks,
                  "queued_jobs": tl.queued_jobs, "utilization": tl.utilization},
    )
