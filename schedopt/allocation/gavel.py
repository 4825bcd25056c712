"""Gavel's heterogeneity-aware policies (Narayanan et al., OSDI'20) as allocation solvers.

Written from the paper's formulation (``../shared/papers/gavel-notes.md``), not
from Gavel's code. Each policy is an LP over ``X[m][τ]`` in [0, 1], the share of
wall time job m should spend on accelerator type τ (:class:`SharesLp`, arrays straight
to HiGHS: a policy runs every round):

    Σ_τ X[m][τ] <= 1                              each job, one type at a time
    Σ_m X[m][τ] · s_m · d_m,r <= C_τ,r             each type τ and resource r
    thr(m, X) = Σ_τ T[m][τ] · X[m][τ]              effective steps/s

with s_m the job's scale factor (the workers it asks for: the role's ``min``; Gavel's
jobs are rigid, min = max, as the ``gavel`` family makes them), d_m its per-worker
demand and ``T[m][τ]`` its whole-job steps/s at s_m workers on τ (``Instance.speed_on``;
0 where it cannot run). A PS/worker job (not Gavel's) runs at its roles' minimum
counts: s_m·d_m is then both roles' use. Policies:

- ``gavel-max-sum-throughput``: max Σ_m thr(m, X) / T_m^norm, with T_m^norm = 1
  (raw steps/s, as Gavel's simulator sums them; ``normalize=fastest`` divides by
  the job's speed on its fastest type instead);
- ``gavel-las``: max min_m s_m·thr(m, X) / (w_m·thr(m, X_eq)), ``X_eq`` the job's isolated
  share as Gavel computes it (:func:`equal_share_throughput`: each type's workers split over the
  jobs, so a type's share is proportional to its GPUs; w_m the job's ``weight``);
- ``gavel-finish-time-fairness`` (Themis): min max_m ρ_m,
  ρ_m = (e_m + Q_m / thr(m, X)) / (e_m + Q_m / thr(m, X_eq)), e_m the time since the
  job arrived (the instance's clock is its latest arrival); solved by bisection on
  the ratio, each step an LP feasibility (ρ_m <= c is linear in X for fixed c).

Gavel's round-based mechanism then turns X into one round's whole-GPU counts:
pairs (m, τ) by priority, a job placed on τ with its s_m workers when they fit and
it is not placed yet. Gavel's priority divides ``X[m][τ]`` by the share of recent time
m ran on τ (``mechanism=history``, the default: the history is ``jobs[].received_s``,
which ``schedopt simulate`` keeps since the job set last changed, as Gavel resets
it; pairs a job has not run on come first). ``mechanism=stateless`` orders by X
alone; an instance without ``received_s`` gets the same round either way.

The plan is an allocation plan like every other (its Σ Q_j/f_j checked); the
policy's LP optimum is reported in ``metrics.policy_objective`` (it bounds the
policy's own objective, not Σ Q_j/f_j), and each job's shares in
``metrics.time_shares``. On a cluster without types the policies still run
(one type: Gavel's heterogeneity-agnostic case).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from schedopt.deadline import Deadline
from schedopt.allocation.model import AllocationModel, cannot_run, compile_typed
from schedopt.allocation.plans import build_plan, plan_bounds
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan, Status, Termination
from schedopt.registry import register
from schedopt.tolerances import LP_ZERO, capacity_limit

#: bisection steps of finish-time fairness: the ratio to 2^-12 of its bracket (each step one LP)
FTF_BISECTION_STEPS = 12


@dataclass
class GavelData:
    """Per job m and type τ: T (M, types) steps/s at s_m workers (0: cannot run),
    ``s`` (M,) scale factors (the first role's minimum), ``use`` (M, types, R) resources of s_m workers, ``cap``
    (types, R); ``row`` (M, types) the typed row of (m, τ) (-1: none)."""

    typed: AllocationModel
    T: np.ndarray
    s: np.ndarray
    use: np.ndarray
    cap: np.ndarray
    row: np.ndarray
    counts: np.ndarray  # (M, 2) the counts each job runs with (roles' minima; slot 1 = 0 for one role)
    #: (M, types) seconds each job ran on each type since the job set last changed (``jobs[].received_s``)
    received: np.ndarray | None = None

    @property
    def M(self) -> int:
        return len(self.s)


def compile_gavel(instance: Instance) -> GavelData:
    """The policy's data: each job at its roles' minimum counts (its scale factor) on every type it can run on."""
    typed = compile_typed(instance)
    kinds = instance.accelerators
    M, K, R = typed.J, len(kinds), len(instance.resources)
    counts = np.array(instance.role_bounds()[0], dtype=np.int64).reshape(M, 2)  # each role's minimum (one role: slot 1 = 0)
    m_of, t_of = typed.job, typed.kind  # (V,) each typed row's job and type
    row = np.full((M, K), -1, dtype=np.int64)
    row[m_of, t_of] = np.arange(len(m_of))
    # each row's step time at its job's counts, read from the typed rows' speeds (Instance.speed_on) at once
    with np.errstate(divide="ignore"):
        step = typed.rows.step_table().at(np.arange(len(m_of)), counts[m_of, 0], counts[m_of, 1])
    T = np.zeros((M, K))
    T[m_of, t_of] = np.where(np.isfinite(step) & (step > 0), 1.0 / np.where(step > 0, step, 1.0), 0.0)
    demands = instance.role_demands()  # (J, 2, R) per task, a one-role job's second slot 0
    use = np.zeros((M, K, R))
    use[m_of, t_of] = counts[m_of, 0, None] * demands[m_of, 0] + counts[m_of, 1, None] * demands[m_of, 1]
    received = np.array([[float((job.received_s or {}).get(str(kind), 0.0)) if kind is not None else 0.0 for kind in kinds]
                         for job in instance.jobs]).reshape(M, K)
    return GavelData(typed=typed, T=T, s=counts[:, 0] if M else np.zeros(0, dtype=np.int64), use=use,
                     cap=instance.accelerator_capacity, row=row, counts=counts, received=received)


def _runnable_pairs(g: GavelData) -> np.ndarray:
    """(M, types): job m can run on τ (a speed there, and its s_m workers fit the type alone)."""
    return np.all(g.use <= capacity_limit(g.cap)[None, :, :], axis=2) & (g.T > 0)


class SharesLp:
    """The LP every policy shares, built as arrays and handed to HiGHS directly
    (:func:`~schedopt.backends.lp.solve_lp_colwise`: a policy runs every round, and a Pyomo
    model of 144 jobs cost 20 ms to build and write against HiGHS's 2-7 ms). Columns: the
    shares X[m, τ] of the pairs a job can run on (``m``, ``t`` (n,), by job, then type), then
    the policy's own (:meth:`add_column`); rows: a block at a time (:meth:`add_rows`). Maximises."""

    def __init__(self, g: GavelData) -> None:
        # -- data: only the pairs a job can run on
        self.g = g
        self.m, self.t = np.nonzero(_runnable_pairs(g))  # row-major: by job, then type
        n = len(self.m)
        # -- variables: X[m, τ] in [0, 1], the share of wall time job m spends on type τ
        self.gain, self.col_lo, self.col_hi = [np.zeros(n)], [np.zeros(n)], [np.ones(n)]
        self.n_cols = n
        self._row: list[np.ndarray] = []
        self._col: list[np.ndarray] = []
        self._val: list[np.ndarray] = []
        self.row_lo: list[np.ndarray] = []
        self.row_hi: list[np.ndarray] = []
        self.n_rows = 0
        # -- constraints
        self.jobs, job_row = np.unique(self.m, return_inverse=True)  # the jobs with a pair, ascending
        # Gavel §3.1: a job's time shares sum to at most 1 (one type at a time)
        self.add_rows(job_row, np.arange(n), np.ones(n), np.full(len(self.jobs), -math.inf), np.ones(len(self.jobs)))
        # Gavel §3.1: each type's capacity, per resource: Σ_m X[m][τ]·s_m·d_m,r <= C_τ,r
        use = g.use[self.m, self.t]  # (n, R)
        R = use.shape[1]
        pair, r = np.nonzero(use > 0)
        rows, row = np.unique(self.t[pair] * R + r, return_inverse=True)  # (τ, r) with some use, in that order
        self.add_rows(row, pair, use[pair, r], np.full(len(rows), -math.inf), g.cap.reshape(-1)[rows].astype(float))

    def throughput(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """thr(m, X) = Σ_τ ``T[m][τ]``·``X[m][τ]`` (steps/s) of each job in :attr:`jobs`, as triplets
        (its place in :attr:`jobs`, the X column, T[m][τ])."""
        return np.searchsorted(self.jobs, self.m), np.arange(len(self.m)), self.g.T[self.m, self.t]

    def add_column(self, gain: float, lo: float, hi: float) -> int:
        """A variable with objective coefficient ``gain`` (maximised) within [lo, hi]; its index."""
        self.gain.append(np.array([float(gain)]))
        self.col_lo.append(np.array([float(lo)]))
        self.col_hi.append(np.array([float(hi)]))
        self.n_cols += 1
        return self.n_cols - 1

    def add_rows(self, row: np.ndarray, col: np.ndarray, val: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        """Rows lo <= A x <= hi, A's entries as triplets (``row`` counted from 0 within the block)."""
        self._row.append(self.n_rows + np.asarray(row, dtype=np.int64))
        self._col.append(np.asarray(col, dtype=np.int64))
        self._val.append(np.asarray(val, dtype=float))
        self.row_lo.append(np.asarray(lo, dtype=float))
        self.row_hi.append(np.asarray(hi, dtype=float))
        self.n_rows += len(lo)

    def solve(self, time_limit: float | None) -> tuple[np.ndarray | None, float | None, str]:
        """HiGHS on the LP: (X (M, types), the objective's optimum, why) or (None, None, why)."""
        from schedopt.backends.lp import solve_lp_colwise

        row, col, val = (np.concatenate(a) for a in (self._row, self._col, self._val))
        order = np.lexsort((row, col))
        row, col, val = row[order], col[order], val[order]
        start = np.searchsorted(col, np.arange(self.n_cols + 1))
        gain = np.concatenate(self.gain)
        res = solve_lp_colwise(-gain, start, row, val, row_lower=np.concatenate(self.row_lo),
                               row_upper=np.concatenate(self.row_hi), col_lower=np.concatenate(self.col_lo),
                               col_upper=np.concatenate(self.col_hi), time_limit=time_limit)
        if not res.optimal:
            why = f"time limit reached ({res.status})" if res.status == "Time limit reached" else res.status
            return None, None, why
        X = np.zeros_like(self.g.T)
        X[self.m, self.t] = np.clip(res.x[:len(self.m)], 0.0, 1.0)  # HiGHS's feasibility tolerance, clipped
        return X, float(gain @ res.x), "optimal"


def equal_share_throughput(g: GavelData) -> np.ndarray:
    """thr(m, X_eq) (M,): the steps/s of job m's isolated share, as Gavel's isolated policy computes
    it (its ``_get_allocation``): the cluster split over the M jobs, type τ's C_τ workers each,
    ``X_eq[m][τ]`` = C_τ / (M·s_m), each row then scaled down to a total time share of at most 1; so under
    contention a job's share of each type is proportional to the type's worker count (C_τ / Σ C),
    not 1/M per type. C_τ: the type's GPUs (its capacity of ``gpu``; 1 per type on a cluster without
    GPUs). A job that can run only where C_τ = 0 (CPU work on a type without GPUs), whose isolated share
    Gavel would divide by, gets 1/M of every type instead."""
    if g.M == 0:
        return np.zeros(0)
    resources = g.typed.instance.resources
    gpus = g.cap[:, resources.index("gpu")] if "gpu" in resources else np.zeros(g.cap.shape[0])
    workers = gpus if gpus.sum() > 0 else np.ones(g.cap.shape[0])
    x = workers[None, :] / (g.M * np.maximum(g.s, 1)[:, None])  # (M, types)
    x = x / np.maximum(1.0, x.sum(axis=1))[:, None]
    eq = (g.T * x).sum(axis=1)
    return np.where(eq > 0, eq, g.T.sum(axis=1) / g.M)


# ---- the policies: each returns X (M, types) and the LP's optimum of its objective ----------

def max_sum_throughput(g: GavelData, *, normalize: str, time_limit: float | None, seed: int | None
                       ) -> tuple[np.ndarray | None, float | None, str]:
    lp = SharesLp(g)
    fastest = g.T.max(axis=1)
    norm = np.where(fastest > 0, fastest, 1.0) if normalize == "fastest" else np.ones(g.M)
    # Gavel §4.1 max-sum-throughput: Σ_m thr(m, X) (raw steps/s, or per job's fastest speed)
    lp.gain[0] = g.T[lp.m, lp.t] / norm[lp.m]
    return lp.solve(time_limit)


def las(g: GavelData, *, time_limit: float | None, seed: int | None) -> tuple[np.ndarray | None, float | None, str]:
    lp = SharesLp(g)
    weight = np.array([job.weight for job in g.typed.instance.jobs], dtype=float)
    eq = equal_share_throughput(g)
    t = lp.add_column(1.0, 0.0, math.inf)  # the objective: max t
    # Gavel §4.1 heterogeneity-aware LAS: w_m·thr(m, X_eq)·t - s_m·thr(m, X) <= 0 for every job that can run
    place, x, T = lp.throughput()
    jobs = lp.jobs
    lp.add_rows(np.concatenate([np.arange(len(jobs)), place]), np.concatenate([np.full(len(jobs), t), x]),
                np.concatenate([weight[jobs] * eq[jobs], -g.s[lp.m] * T]), np.full(len(jobs), -math.inf),
                np.zeros(len(jobs)))
    return lp.solve(time_limit)


def finish_time_fairness(g: GavelData, *, time_limit: float | None, seed: int | None
                         ) -> tuple[np.ndarray | None, float | None, str]:
    """Bisection on c: is there X with ρ_m <= c for all m? ρ_m <= c is
    thr(m, X)·(c·D_m - e_m) >= Q_m with D_m = e_m + Q_m / thr(m, X_eq) (linear in X)."""
    jobs = g.typed.instance.jobs
    now = max((job.arrival for job in jobs), default=0.0)
    e = np.array([max(0.0, now - job.arrival) for job in jobs])
    Q = np.array([float(job.remaining_steps or 0.0) for job in jobs])
    eq = equal_share_throughput(g)
    D = np.where(eq > 0, e + Q / np.where(eq > 0, eq, 1.0), np.inf)
    clock = Deadline(time_limit)

    def feasible(c: float) -> np.ndarray | None:
        lp = SharesLp(g)  # no objective: any X within the rows
        place, x, T = lp.throughput()
        need = lp.jobs
        # Themis's finish-time fairness, ρ_m <= c: thr(m, X)·(c·D_m - e_m) >= Q_m
        lp.add_rows(place, x, (c * D[lp.m] - e[lp.m]) * T, Q[need], np.full(len(need), math.inf))
        X, _, _ = lp.solve(clock.left())
        return X

    if not _runnable_pairs(g).any():
        return np.zeros_like(g.T), 0.0, "no job can run"
    lo, hi = 0.0, 1.0
    best = feasible(hi)
    while best is None and hi < 1e9:  # ρ_m = 1 at X_eq, which may not fit the capacities when s_m are large
        hi *= 4.0
        best = feasible(hi)
    if best is None:
        return None, None, "no finite finish-time ratio is feasible"
    for _ in range(FTF_BISECTION_STEPS):
        if clock.expired():
            break
        mid = 0.5 * (lo + hi)
        x = feasible(mid)
        if x is None:
            lo = mid
        else:
            hi, best = mid, x
    return best, hi, "bisection"


# ---- Gavel's round-based mechanism ------------------------------------------------------------

MECHANISMS = ("history", "stateless")


def one_round(g: GavelData, X: np.ndarray, mechanism: str = "history") -> dict[int, tuple[int, int]]:
    """One round's placement of X (module docstring): {typed row: (s_m, 0)}. A job is
    placed only where it fits every capacity row of the model: its type's resources and,
    on a cluster with queues, its queue's and cohort's quota rows (Gavel has no quotas;
    the round must still be a feasible plan).

    ``history`` (Gavel's): pairs (m, τ) by priority ``X[m][τ]`` / (the share of time m ran on τ
    since the job set last changed, ``jobs[].received_s``): pairs m has not run on first, by
    X, then the others by X / received (the common elapsed time divides every share alike,
    so it does not change the order). ``stateless``: by X alone. Ties: job, then type order.
    Without ``received_s`` the two agree."""
    rows = g.typed.rows
    free = capacity_limit(rows.cap).astype(float)
    placed: set[int] = set()
    config: dict[int, tuple[int, int]] = {}
    m_idx, t_idx = np.nonzero(X > LP_ZERO)
    x = X[m_idx, t_idx]
    if mechanism == "history" and g.received is not None:
        got = g.received[m_idx, t_idx]
        ran = got > 0
        score = np.where(ran, x / np.where(ran, got, 1.0), x)
        order = np.lexsort((t_idx, m_idx, -score, ran))
    else:
        order = np.lexsort((t_idx, m_idx, -x))
    for m, t in zip(m_idx[order].tolist(), t_idx[order].tolist()):
        v = int(g.row[m, t])
        if m in placed or v < 0:
            continue
        use = g.counts[m, 0] * rows.demand[v, 0] + g.counts[m, 1] * rows.demand[v, 1]  # every row: type, quotas
        if np.any(use > free):
            continue
        free -= use
        placed.add(m)
        config[int(g.row[m, t])] = (int(g.counts[m, 0]), int(g.counts[m, 1]))
    return config


Policy = Callable[..., tuple[np.ndarray | None, float | None, str]]


def check_mechanism(solver: str, mechanism: str) -> str:
    if mechanism not in MECHANISMS:
        raise InputError(solver, f"mechanism: expected one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    return mechanism


def solve_policy(instance: Instance, *, solver: str, policy: Policy, objective: str, started: float,
                 time_limit: float | None, seed: int | None, options: dict[str, Any], bound: bool = False,
                 mechanism: str = "history", **kw: Any) -> Plan:
    """Run ``policy``'s LP, then one round of Gavel's mechanism. ``bound`` (not Gavel's: an
    option of ours) adds the certified bounds every optimus heuristic carries (the typed
    admission LP and the LP bound on Σ t, docs/certificates.md)."""
    g = compile_gavel(instance)
    if g.M == 0:
        return build_plan(g.typed, solver=solver, config={}, status=Status.HEURISTIC, termination=Termination.COMPLETED,
                          started=started, admitted_bound=0, seed=seed, options=options)
    # "infeasible" is a claim about every plan: only when no job can run alone at any configuration
    nothing_runs = len(cannot_run(g.typed)) == g.M
    if not _runnable_pairs(g).any():
        status = Status.INFEASIBLE if nothing_runs else Status.HEURISTIC
        return build_plan(g.typed, solver=solver, config={}, status=status,
                          termination=Termination.INFEASIBLE if nothing_runs else Termination.COMPLETED,
                          started=started, seed=seed, options=options,
                          message="no job can run at its scale factor: none fits any type's capacity with a speed there")
    X, value, why = policy(g, time_limit=time_limit, seed=seed, **kw)
    if X is None:
        term = Termination.TIME_LIMIT if why.startswith("time limit") else Termination.ERROR
        return build_plan(g.typed, solver=solver, config={}, status=Status.TIME_LIMIT if term == Termination.TIME_LIMIT else Status.INFEASIBLE,
                          termination=term, started=started, seed=seed, options=options,
                          message=f"the {objective} LP gave no allocation: {why}")
    config = one_round(g, X, mechanism)
    thr = (g.T * X).sum(axis=1)
    metrics = {"policy_objective_name": objective, "policy_objective": value,
               "time_shares": {instance.jobs[m].id: {str(instance.accelerators[t]): float(X[m, t])
                                                      for t in range(X.shape[1]) if X[m, t] > LP_ZERO}
                               for m in range(g.M) if thr[m] > 0}}
    status = Status.HEURISTIC if config or not nothing_runs else Status.INFEASIBLE
    lp_bound = proof = admitted_bound = admitted_proof = None
    if bound and config:
        lp_bound, proof, admitted_bound, admitted_proof, more, _ = plan_bounds(g.typed, config)  # no tree: the same plan
        metrics.update(more)
    return build_plan(g.typed, solver=solver, config=config, status=status,
                      termination=Termination.COMPLETED if status == Status.HEURISTIC else Termination.INFEASIBLE,
                      started=started, seed=seed, options=options, metrics=metrics, bound=lp_bound, admitted_bound=admitted_bound,
                      proof=proof, admitted_proof=admitted_proof)


@register("gavel-max-sum-throughput", problem="allocation", exact=False, backend="highs",
          supports_time_limit=True, accelerator_types=True, quotas=True)
class GavelMaxSumThroughput:
    """Gavel's max-sum-throughput policy (LP over time shares per type), then one round of its mechanism."""

    def __init__(self, *, normalize: str = "none", bound: bool = False, mechanism: str = "history"):
        self.mechanism = check_mechanism("gavel-max-sum-throughput", mechanism)
        if normalize not in ("none", "fastest"):
            raise InputError(self.name, f'normalize: expected "none" (raw steps/s, Gavel\'s simulator) or "fastest", got {normalize!r}')
        self.normalize = normalize
        self.bound = bound

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        return solve_policy(instance, solver=self.name, policy=max_sum_throughput, objective="sum of throughputs",
                            started=time.perf_counter(), time_limit=time_limit, seed=seed,
                            options={"normalize": self.normalize, "bound": self.bound, "mechanism": self.mechanism},
                            normalize=self.normalize, bound=self.bound, mechanism=self.mechanism)


@register("gavel-las", problem="allocation", exact=False, backend="highs", supports_time_limit=True,
          accelerator_types=True, quotas=True)
class GavelLas:
    """Gavel's heterogeneity-aware max-min fairness (LAS), then one round of its mechanism."""

    def __init__(self, *, bound: bool = False, mechanism: str = "history"):
        self.bound = bound  # ours, not Gavel's: the certified bounds (solve_policy)
        self.mechanism = check_mechanism(self.name, mechanism)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        return solve_policy(instance, solver=self.name, policy=las, objective="min normalised throughput",
                            started=time.perf_counter(), time_limit=time_limit, seed=seed,
                            options={"bound": self.bound, "mechanism": self.mechanism}, bound=self.bound,
                            mechanism=self.mechanism)


@register("gavel-finish-time-fairness", problem="allocation", exact=False, backend="highs",
          supports_time_limit=True, accelerator_types=True, quotas=True)
class GavelFinishTimeFairness:
    """Gavel's finish-time fairness (Themis's ρ), bisection over LPs, then one round of its mechanism."""

    def __init__(self, *, bound: bool = False, mechanism: str = "history"):
        self.bound = bound  # ours, not Gavel's: the certified bounds (solve_policy)
        self.mechanism = check_mechanism(self.name, mechanism)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        return solve_policy(instance, solver=self.name, policy=finish_time_fairness, objective="max finish-time ratio",
                            started=time.perf_counter(), time_limit=time_limit, seed=seed,
                            options={"bound": self.bound, "mechanism": self.mechanism}, bound=self.bound,
                            mechanism=self.mechanism)
