"""A discrete-time cluster simulator (Optimus §6.1), deterministic and in process.

Time runs in scheduling intervals of ``interval_s`` seconds on the grid
0, Δ, 2Δ, ... A job that arrives inside an interval waits for the next tick.
At every tick the scheduler (any allocation solver, optionally followed by a
placement solver: ``optimus-greedy+optimus-placement``) sees the jobs that
have arrived and not finished, with *estimated* remaining steps and speeds,
and returns a Plan. The simulator then runs each allocated job for the
interval at its *true* speed f(p, w):

- a job whose configuration changed (including its first start and a restart
  after a pause) first loses ``restart_overhead_s`` to checkpoint and restart
  (Optimus §5.4); with a placement solver, a job any of whose tasks moves to
  another server restarts too; a job whose configuration is unchanged loses nothing;
- a job that finishes inside the interval completes at the interpolated time
  t + overhead + remaining / f;
- jobs the plan leaves out are paused for the interval.

With ``restart_aware`` (default) the scheduler sees what a restart costs: each
running job's counts (``running``) and ``policy.restart_s`` =
``restart_overhead_s``, so the allocation's reconfiguration cost lets a
solver keep a job's counts when changing them does not pay. Without it, the
scheduler plans as Optimus eq. 5-6 does, blind to restarts.

Communication (``communication_aware``, default on): with a placement solver, a
PS job whose speed form has a transfer term runs at the step time of
:mod:`schedopt.sim.communication`: the fitted transfer term scaled by how much
of the all-remote traffic its placement leaves across servers and, with
``ps_assignment`` (``paa`` or ``mxnet-default``) for jobs with
``param_blocks``, by the PS load imbalance. Without a placement solver a job
runs at its profile speed.

Estimation errors (Optimus Fig. 15): with ``error_steps`` = e, the scheduler
sees remaining steps × (1 + s·e·(remaining / total)), s = ±1 drawn per job from
the seed: the error shrinks as the job progresses. ``error_speed`` does the
same to the speed (every speed coefficient scaled). The simulator always
uses the truth.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from schedopt.errors import FieldProblem, InputError
from schedopt.instance import Instance, Job, Policy
from schedopt.allocation.metrics import allocation_usage
from schedopt.checking import check
from schedopt.registry import get_solver, solver_info
from schedopt.sim import communication
from schedopt.sim.estimation import ESTIMATION_MODES, OnlineEstimate, online_estimates
from schedopt.sim.result import SimulationResult, summarize
from schedopt.sim.truth import Interference, Truth, describe
from schedopt.tolerances import SIM_ZERO


def scaled_speed(speed: Any, factor: float) -> Any:
    """The same speed form with every speed multiplied by ``factor`` (> 0): the form's own ``scaled``."""
    return speed.scaled(factor)


@dataclass
class _JobState:
    job: Job
    total_steps: float
    remaining: float
    sign_steps: float
    sign_speed: float
    config: tuple[tuple[tuple[str, int], ...], str | None] | None = None  # (role counts, accelerator type)
    completion_s: float | None = None
    started: bool = False
    restarts: int = 0
    placement: dict[str, dict[str, int]] | None = None  # server -> role -> tasks, when a placement solver runs
    estimate: OnlineEstimate | None = None  # with estimation="online": the job's observations and fits
    #: seconds run on each accelerator type since the set of active jobs last changed (Gavel's history)
    received: dict[str, float] = field(default_factory=dict)


@dataclass
class Timeline:
    time_s: list[float] = field(default_factory=list)
    running_jobs: list[int] = field(default_factory=list)
    running_tasks: list[int] = field(default_factory=list)
    queued_jobs: list[int] = field(default_factory=list)
    utilization: dict[str, list[float]] = field(default_factory=dict)
    queue_share: dict[str, list[float]] = field(default_factory=dict)  # per interval the queue has demand


def _queue_entitlements(workload: Instance) -> tuple[dict[str, int], np.ndarray]:
    """Each queue's row and its nominal quota per resource summed over flavors (queues, R)."""
    queues = workload.queues or []
    nominal = np.zeros((len(queues), len(workload.resources)))
    for k, q in enumerate(queues):
        for per in q.quotas.values():
            for r, res in enumerate(workload.resources):
                if res in per:
                    nominal[k, r] += per[res].nominal
    return {q.name: k for k, q in enumerate(queues)}, nominal


def queue_shares(workload: Instance, demand: np.ndarray, used: np.ndarray, nominal: np.ndarray) -> list[float | None]:
    """Each queue's share of its entitlement this interval: min over resources of
    min(1, used / min(demand, nominal)), over the resources where that is > 0; None
    for a queue without demand. ``demand``, ``used``, ``nominal``: (queues, R)."""
    entitled = np.minimum(demand, nominal)
    out: list[float | None] = []
    for k in range(entitled.shape[0]):
        on = entitled[k] > SIM_ZERO
        out.append(float(np.min(np.minimum(1.0, used[k, on] / entitled[k, on]))) if on.any() else None)
    return out


def _check_workload(workload: Instance, placement: str | None = None) -> None:
    """Everything the run will need, said before the first interval: each job's
    speed and work, and with ``placement`` each PS/worker job's model size and
    bandwidths (the placement problem's transfer times need them)."""
    problems = []
    for i, job in enumerate(workload.jobs):
        if job.speed is None and not (workload.typed and job.speed_by_accelerator):
            problems.append(FieldProblem(f"jobs[{i}].speed", "the simulator needs each job's true speed"))
        if job.remaining_steps is None or job.remaining_steps <= 0:
            problems.append(FieldProblem(f"jobs[{i}].remaining_steps", "the simulator needs each job's total work (> 0 steps)"))
        if placement is not None and len(job.roles) == 2 and (job.model_size is None or job.bandwidth is None):
            missing = " and ".join(f for f, v in (("model_size", job.model_size), ("bandwidth", job.bandwidth)) if v is None)
            problems.append(FieldProblem(f"jobs[{i}]", f"--placement {placement} needs each PS/worker job's {missing} "
                                                       "(MB per step and MB/s; the Optimus-family workloads carry them)"))
    if problems:
        raise InputError(workload.source, problems)


#: documented limits: the shortest interval, the longest horizon (365 days), the most intervals in one run
MIN_INTERVAL_S = 1.0
MAX_HORIZON_S = 365 * 86400.0
MAX_INTERVALS = 1_000_000


def simulate(workload: Instance, scheduler: Any, *, placement: str | None = None, interval_s: float = 600.0,
             restart_overhead_s: float = 60.0, seed: int = 0, error_steps: float = 0.0, error_speed: float = 0.0,
             horizon_s: float | None = None, check_plans: bool = False, options: dict[str, Any] | None = None,
             restart_aware: bool = True, communication_aware: bool = True, ps_assignment: str | None = None,
             estimation: str = "truth", interference: Interference | None = None,
             progress: Callable[[float, int, int], None] | None = None,
             observer: Callable[[float, Instance, Any, float], None] | None = None) -> SimulationResult:
    """Simulate ``workload`` under ``scheduler`` (a registered allocation or quality
    solver name, or a solver object) and optionally ``placement``. Times in seconds. ``horizon_s``
    stops the run (unfinished jobs have no completion); default: until every job
    is done, at most 365 days. ``check_plans`` runs :func:`schedopt.check` on
    every plan (the count of violations is in the result). ``progress(t, done, n)``
    is called after every interval; ``observer(t, view, plan, reward)`` too, with
    DL2's per-slot reward Σ_i (steps trained in the slot / job i's total steps).
    ``communication_aware``: placement changes a PS job's speed (module docstring);
    ``ps_assignment``: a ``ps-assignment`` solver whose block assignment sets the
    PS imbalance of jobs with ``param_blocks`` (default: even, λ = 1).
    ``estimation``: ``truth`` (with the optional errors) or ``online`` (remaining
    steps and speeds fitted during the run, :mod:`schedopt.sim.estimation`).
    ``interference``: :class:`~schedopt.sim.truth.Interference` (DL2 §2.2's speed
    variation, :mod:`schedopt.sim.truth`), default none."""
    if not (math.isfinite(interval_s) and MIN_INTERVAL_S <= interval_s <= MAX_HORIZON_S):
        raise InputError("--interval", f"must be between {MIN_INTERVAL_S:g} and {MAX_HORIZON_S:g} seconds (MIN_INTERVAL_S, MAX_HORIZON_S), got {interval_s}")
    if not (math.isfinite(restart_overhead_s) and restart_overhead_s >= 0):
        raise InputError("--restart-overhead", f"must be a finite number of seconds >= 0, got {restart_overhead_s}")
    if horizon_s is not None and not (math.isfinite(horizon_s) and 0 < horizon_s <= MAX_HORIZON_S):
        raise InputError("--horizon", f"must be in (0, {MAX_HORIZON_S:g}] seconds (MAX_HORIZON_S), got {horizon_s}")
    if (horizon_s or MAX_HORIZON_S) / interval_s > MAX_INTERVALS:
        raise InputError("--interval", f"{(horizon_s or MAX_HORIZON_S) / interval_s:,.0f} intervals over the horizon; the limit is "
                                       f"{MAX_INTERVALS:,} (MAX_INTERVALS): give a longer --interval or a shorter --horizon")
    for name, e in (("--error-steps", error_steps), ("--error-speed", error_speed)):
        if not 0 <= e < 1:
            raise InputError(name, f"must be in [0, 1), got {e}")
    if estimation not in ESTIMATION_MODES:
        raise InputError("--estimation", f"expected one of {', '.join(ESTIMATION_MODES)}, got {estimation!r}")
    if estimation == "online" and (error_steps or error_speed):
        raise InputError("--error-steps", "the Fig. 15 errors distort the truth; with --estimation online the errors are the fits' own")
    if workload.typed and estimation == "online":
        raise InputError("--estimation", "a cluster with accelerator types (or jobs with spread) is simulated with the "
                                         "truth (online estimation does not model types yet)")
    _check_workload(workload, placement)
    imbalance = _PsImbalance(workload, ps_assignment, seed) if ps_assignment is not None else None
    truth = Truth(workload, communication_aware=communication_aware, imbalance=imbalance, interference=interference,
                  seed=seed)  # every job's true speed: the only source of the steps run and of what estimation samples
    if isinstance(scheduler, str):
        name = scheduler if placement is None else f"{scheduler}+{placement}"
        info = solver_info(name)
        if info.problem not in ("allocation", "quality"):
            raise InputError("--scheduler", f'"{scheduler}" solves problem "{info.problem}"; the simulator needs an allocation solver')
        opts = dict(options or {})
        # certified bounds and the search for a replayable proof cost time and do not change the plan
        quiet = ("bound", "branch_proof")
        for key in quiet:
            if key in solver_info(scheduler).options and key not in opts and placement is None:
                opts[key] = False
        if placement is not None:  # likewise for either part of a joint solver
            opts = {f"{part}.{key}": False for part in (scheduler, placement) for key in quiet
                    if key in solver_info(part).options}
        solver = get_solver(name, **opts)
    else:  # a solver object (e.g. a DL2 policy being trained)
        solver, scheduler = scheduler, scheduler.name
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(len(workload.jobs), 2))
    states = [_JobState(job=j, total_steps=float(j.remaining_steps), remaining=float(j.remaining_steps),
                        sign_steps=float(signs[i, 0]), sign_speed=float(signs[i, 1]))
              for i, j in enumerate(workload.jobs)]
    if estimation == "online":
        for s, est in zip(states, online_estimates(list(workload.jobs), seed)):
            s.estimate = est
    err_steps: list[float] = []
    err_speed: list[float] = []
    from schedopt.allocation.model import cannot_run as model_cannot_run, compile_model

    # reported at once, never scheduled (no round could run them)
    never = model_cannot_run(compile_model(workload))
    order = sorted((i for i in range(len(states)) if states[i].job.id not in never), key=lambda i: states[i].job.arrival)
    limit = horizon_s if horizon_s is not None else MAX_HORIZON_S
    cap = workload.capacity_total
    tl = Timeline(utilization={r: [] for r in workload.resources}, queue_share={q.name: [] for q in workload.queues or []})
    queue_row, nominal = _queue_entitlements(workload)
    overhead_s = run_s = scheduler_s = transfer_sum = 0.0
    transfer_n = 0
    plans = violations = 0
    first_violation: str | None = None
    t = 0.0
    done = 0
    n = len(order)
    nxt = 0  # next arrival (index into order)
    active_ids: frozenset[str] = frozenset()
    while done < n and t < limit:
        while nxt < n and states[order[nxt]].job.arrival <= t:
            nxt += 1
        active = [s for i in order[:nxt] if (s := states[i]).completion_s is None]
        ids = frozenset(s.job.id for s in active)
        if ids != active_ids:  # Gavel recomputes its allocation and restarts its history when jobs come or go
            for s in active:
                s.received = {}
            active_ids = ids
        if not active:
            if nxt >= n:
                break
            t = max(t + interval_s, math.ceil(states[order[nxt]].job.arrival / interval_s) * interval_s)
            continue
        view = _scheduler_view(workload, active, t, error_steps, error_speed,
                               restart_s=restart_overhead_s if restart_aware else None, with_placement=placement is not None)
        for s, vj in zip(active, view.jobs):
            err_steps.append(abs(float(vj.remaining_steps) - s.remaining) / s.total_steps)  # error of the total K
        t0 = time.perf_counter()
        plan = solver.solve(view, seed=seed)
        scheduler_s += time.perf_counter() - t0
        plans += 1
        if check_plans:
            found = check(view, plan)
            violations += len(found)
            if found and first_violation is None:
                first_violation = f"t={t:g}: {found[0]}"
        planned_use = _busiest_use(workload, plan, cap) if interference is not None else 0.0  # eq. 1 of sim/truth.py
        used = np.zeros(len(cap))
        q_demand = np.zeros_like(nominal)  # (queues, R): full requests and use of each queue's active jobs
        q_used = np.zeros_like(nominal)
        running = tasks = 0
        reward = 0.0
        for pos, s in enumerate(active):
            counts = plan.allocation.get(s.job.id) if plan.has_solution else None
            k_queue = queue_row.get(s.job.queue) if s.job.queue is not None else None
            if k_queue is not None:
                q_demand[k_queue] += sum(role.max_count * workload.vector(role.demand) for role in s.job.roles.values())
                if counts:
                    q_used[k_queue] += sum(n_ * workload.vector(s.job.roles[r].demand) for r, n_ in counts.items())
            if not counts:
                s.config = s.placement = None  # paused: the next start is a restart
                continue
            kind = (plan.accelerators or {}).get(s.job.id)  # the type it runs on (typed clusters)
            cfg = (tuple(sorted(counts.items())), kind)  # another type is a restart too
            where = (plan.placement or {}).get(s.job.id) if placement is not None else None
            changed = cfg != s.config or where != s.placement  # new counts, or a task on another server
            lost = restart_overhead_s if changed else 0.0
            s.restarts += s.started and changed
            s.config, s.placement, s.started = cfg, where, True
            running += 1
            tasks += sum(counts.values())
            used += sum(n_ * workload.vector(s.job.roles[r].demand) for r, n_ in counts.items())
            step, phi = truth.step_s(s.job, counts, accelerator=kind, where=where, interval=plans - 1, use=planned_use)
            if phi is not None:
                transfer_sum += phi
                transfer_n += 1
            if estimation == "online" and len(counts) == 2:
                view_job = view.jobs[pos]
                err_speed.append(abs(float(view_job.speed.step_time_s(*_pw(s.job, counts))) / step - 1.0)
                                 if view_job.speed is not None else 0.0)
            work_s = max(0.0, interval_s - lost)
            need_s = s.remaining * step
            if kind is not None:
                s.received[kind] = s.received.get(kind, 0.0) + min(interval_s, lost + need_s)
            done_before = s.total_steps - s.remaining
            overhead_s += min(lost, interval_s)
            reward += min(s.remaining, work_s / step) / s.total_steps
            if need_s <= work_s:
                s.completion_s = t + lost + need_s
                s.remaining = 0.0
                run_s += min(lost, interval_s) + need_s
                done += 1
            else:
                s.remaining -= work_s / step
                run_s += interval_s
            if s.estimate is not None:
                s.estimate.observe(done_before, s.total_steps - s.remaining, counts, step)
        tl.time_s.append(t)
        tl.running_jobs.append(running)
        tl.running_tasks.append(tasks)
        tl.queued_jobs.append(len(active) - running)
        with np.errstate(divide="ignore", invalid="ignore"):
            util = np.where(cap > 0, used / np.where(cap > 0, cap, 1.0), 0.0)
        for r, u in zip(workload.resources, util):
            tl.utilization[r].append(float(u))
        for q, share in zip(tl.queue_share, queue_shares(workload, q_demand, q_used, nominal)):
            if share is not None:
                tl.queue_share[q].append(share)
        if observer is not None:
            observer(t, view, plan, reward)
        t += interval_s
        if progress is not None:
            progress(t, done, n)
    return summarize(workload, states, tl, scheduler=scheduler, placement=placement, interval_s=interval_s,
                     restart_overhead_s=restart_overhead_s, restart_aware=restart_aware,
                     communication_aware=communication_aware and placement is not None, ps_assignment=ps_assignment,
                     mean_transfer_share=transfer_sum / transfer_n if transfer_n else None, seed=seed, error_steps=error_steps, error_speed=error_speed,
                     overhead_s=overhead_s, run_s=run_s, scheduler_s=scheduler_s, plans=plans,
                     violations=violations if check_plans else None,
                     first_violation=first_violation, horizon_s=horizon_s, estimation=estimation,
                     estimate_error_steps=float(np.mean(err_steps)) if err_steps else None,
                     estimate_error_speed=float(np.mean(err_speed)) if err_speed else None, unfinishable=never,
                     interference=describe(interference))


class _PsImbalance:
    """λ of each (job, PS count), from one ``ps-assignment`` solve of the job's blocks, cached."""

    def __init__(self, workload: Instance, solver_name: str, seed: int):
        info = solver_info(solver_name)
        if info.problem != "ps-assignment":
            raise InputError("--ps-assignment", f'"{solver_name}" solves problem "{info.problem}"; expected a ps-assignment solver (paa, mxnet-default)')
        self.solver = get_solver(solver_name)
        self.workload, self.seed = workload, seed
        self.cache: dict[tuple[str, int], float] = {}

    def __call__(self, job: Job, p: int) -> float:
        if not job.param_blocks:
            return 1.0
        key = (job.id, int(p))
        if key not in self.cache:
            one = Instance.model_validate({"schema": "schedopt/instance@1", "name": f"{job.id}-ps{p}",
                                           "resources": self.workload.resources, "servers": self.workload.servers,
                                           "jobs": [job], "allocation": {job.id: {"ps": int(p), "worker": 1}}})
            plan = self.solver.solve(one, seed=self.seed)
            self.cache[key] = communication.ps_imbalance((plan.ps_assignment or {}).get(job.id, []), int(p))
        return self.cache[key]


def _busiest_use(workload: Instance, plan: Any, cap: np.ndarray) -> float:
    """The plan's use of the cluster's busiest resource, in [0, 1]."""
    if not plan.has_solution or not plan.allocation:
        return 0.0
    used = allocation_usage(workload, plan.allocation)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(cap > 0, used / np.where(cap > 0, cap, 1.0), 0.0)
    return float(min(1.0, share.max())) if len(share) else 0.0


def _pw(job: Job, counts: dict[str, int]) -> tuple[int, int]:
    names = job.role_names
    return (counts["ps"], counts["worker"]) if len(names) == 2 else (counts[names[0]], 0)


def _scheduler_view(workload: Instance, active: list[_JobState], t: float, error_steps: float,
                    error_speed: float, restart_s: float | None = None, with_placement: bool = False) -> Instance:
    """The instance the scheduler sees at time t: the active jobs with estimated
    remaining steps and speeds (the Fig. 15 error shrinks with progress; or the
    online fits of :mod:`schedopt.sim.estimation`); with
    ``restart_s``, each running job's counts and that restart cost, and with
    ``with_placement`` too, where each runs (``previous``)."""
    jobs = []
    for s in active:
        left = s.remaining / s.total_steps  # 1 at arrival, 0 at the end
        if s.estimate is not None:
            remaining = s.estimate.remaining_steps(s.total_steps - s.remaining, s.remaining)
        else:
            remaining = s.remaining * (1.0 + s.sign_steps * error_steps * left)
        update: dict[str, Any] = {"remaining_steps": max(remaining, SIM_ZERO), "new": not s.started}
        if s.estimate is not None:
            update["speed"] = s.estimate.speed()
        if restart_s is not None and s.config is not None:
            update["running"] = dict(s.config[0])
            if workload.typed:
                update["running_accelerator"] = s.config[1]
        if s.received:
            update["received_s"] = dict(s.received)
        if error_speed:
            factor = 1.0 + s.sign_speed * error_speed * left
            if s.job.speed is not None:
                update["speed"] = scaled_speed(s.job.speed, factor)
            if s.job.speed_by_accelerator:
                update["speed_by_accelerator"] = {k: scaled_speed(v, factor) for k, v in s.job.speed_by_accelerator.items()}
        jobs.append(s.job.model_copy(update=update))
    policy = workload.policy
    if restart_s is not None:
        policy = (policy or Policy()).model_copy(update={"restart_s": restart_s})
    previous = None
    if restart_s is not None and with_placement:
        previous = {s.job.id: s.placement for s in active if s.placement} or None
    view = Instance.model_validate({"schema": "schedopt/instance@1", "name": f"{workload.name}@{t:g}s",
                                    "resources": workload.resources, "servers": workload.servers, "jobs": jobs,
                                    "policy": policy, "previous": previous, "queues": workload.queues,
                                    "cohorts": workload.cohorts})
    view._source = f"{workload.source} at t={t:g}s"
    return view
