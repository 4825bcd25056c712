"""The LP relaxation of the multiple-choice model by column generation, its
Lagrangian bound, LP rounding, and reduced-cost fixing.

For any prices λ >= 0 on the capacities (Optimus eq. 7),

    L(λ) = Σ_j min_k (t_k + λ·u_k) - λ·C                    (Lagrangian bound)

is a lower bound on Σ t_j of every plan that admits every job; at the LP's
optimal duals it equals the LP bound. A configuration k of job j has reduced
cost rc_k = t_k + λ·u_k - min_{k' of j}(t_k' + λ·u_k') >= 0, and every plan
using k costs at least L(λ) + rc_k. So with an incumbent of value UB, every
k with L(λ) + rc_k > UB can be removed without losing an optimal plan
(reduced-cost fixing); the exact models then solve what is left. Only λ >= 0
is needed for these statements, so they hold whatever the LP's accuracy.

Column generation keeps the master LP small: start from each job's cheapest
and smallest configurations, price every configuration in numpy, add each
job's most negative one, repeat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedopt.backends.lp import BASIS_BASIC, BASIS_LOWER, BASIS_UPPER, solve_lp_colwise
from schedopt.allocation.problem import AllocationData, ChoiceSet
from schedopt.tolerances import IMPROVE_TOL, LP_ZERO, capacity_limit, with_ties

#: up to this many configurations the master LP starts with all of them (one HiGHS run, no pricing rounds)
ALL_COLUMNS_UP_TO = 2000
#: ... and so it does with at most this many a job: the master has a row per job, and each pricing round's
#: LP cost about as much as one over every column (typed `gavel`, 3 a job: 16,000 jobs 3.5 -> 1.1 s, 4,000
#: 0.43 -> 0.14 s, the same bound; `optimus` jobs in queues at 1,000 jobs: 3.9 a job 0.039 -> 0.013 s, 8.5
#: 0.058 -> 0.024 s, 14.6 0.071 -> 0.045 s, but 30.7 a job 0.081 -> 0.092 s and 491 0.12 -> 0.92 s)
ALL_COLUMNS_PER_JOB = 10


@dataclass
class LagrangeResult:
    """``bound`` = L(λ, ν); ``lam`` (R,) capacity prices; ``nu`` the price of the
    admission row (0 when every job is admitted); ``rc`` (K,) reduced costs;
    ``x`` (K,) the master LP's primal (0 for columns never generated)."""

    bound: float
    lam: np.ndarray
    nu: float
    rc: np.ndarray
    x: np.ndarray
    rounds: int
    columns: int
    basis: "LpBasis | None" = None


@dataclass(frozen=True)
class LpBasis:
    """The master LP's optimal basis, by what each status belongs to, for an LP over the same
    configurations with rows added (the size classes' LP starts from it): HiGHS's status codes
    (backends.lp.BASIS_*) of each configuration ``col`` (K,) (one never generated: at its lower
    bound, 0), the capacity rows ``cap`` (R,), each job's row ``job`` (J,) (basic where the job has no
    configuration), and the admission row's ``admit_row``, the row written as Σ x ≥ admit (basic where
    there is none)."""

    col: np.ndarray
    cap: np.ndarray
    job: np.ndarray
    admit_row: int


def segment_min(values: np.ndarray, cs: ChoiceSet) -> np.ndarray:
    """Per-job minimum of ``values`` (K,), shape (J,); +inf for jobs with no configuration."""
    n_jobs = len(cs.start) - 1
    out = np.full(n_jobs, np.inf)
    nonempty = np.diff(cs.start) > 0
    if nonempty.any():
        out[nonempty] = np.minimum.reduceat(values, cs.start[:-1][nonempty])
    return out


def lagrangian_bound(cs: ChoiceSet, cap: np.ndarray, lam: np.ndarray, nu: float = 0.0,
                     admit: int | None = None) -> tuple[float, np.ndarray]:
    """(L, rc) for prices ``lam`` >= 0 (and ``nu`` >= 0 on "admit at least ``admit``").

    Every job admitted (``admit`` None): L = Σ_j min_k (t_k + λ·u_k) - λ·C.
    Admission row: L = Σ_j min(0, min_k (t_k + λ·u_k - ν)) + ν·admit - λ·C,
    where a job may also be paused (the 0)."""
    lam = np.maximum(lam, 0.0)
    nu = max(nu, 0.0) if admit is not None else 0.0
    priced = cs.cost + cs.use @ lam - nu
    best = segment_min(priced, cs)
    owned = np.isfinite(best)
    if admit is None:
        bound = float(best[owned].sum() - lam @ cap)
    else:
        best = np.minimum(best, 0.0)
        bound = float(best[owned].sum() + nu * admit - lam @ cap)
    rc = priced - best[cs.job]
    return bound, rc


def solve_lp(data: AllocationData, cs: ChoiceSet, admit: int | None = None,
             seed_columns: list[int] | None = None, max_rounds: int = 500, keep_basis: bool = False) -> LagrangeResult:
    """LP relaxation of the multiple-choice model by column generation.

    ``admit`` None: every job takes one configuration (all must fit at their
    minimum). Else at most one per job and at least ``admit`` jobs in total;
    ``seed_columns`` (a known feasible plan) keep the first master feasible. ``keep_basis``: the result
    carries the last master's optimal basis (:class:`LpBasis`, for the size classes' LP to start from)."""
    J, K = data.J, cs.K
    owners = np.nonzero(np.diff(cs.start) > 0)[0]
    dominant = (cs.use / np.where(data.cap > 0, data.cap, np.inf)).max(axis=1) if data.R else np.zeros(K)
    # initial columns: every one when there are few; else each job's cheapest and its smallest, and the seed plan
    every = K <= ALL_COLUMNS_UP_TO or K <= ALL_COLUMNS_PER_JOB * len(owners)
    active = np.full(K, every)
    if not active.all():
        for j in owners:
            s = cs.of(j)
            active[s.start + int(np.argmin(cs.cost[s]))] = True
            active[s.start + int(np.argmin(dominant[s]))] = True
        if seed_columns:
            active[np.asarray(seed_columns, dtype=np.int64)] = True
    scale = max(1.0, float(np.abs(cs.cost).max())) if K else 1.0
    lam, nu = np.zeros(data.R), 0.0
    x_full = np.zeros(K)
    owner_row = np.full(J, -1, dtype=np.int64)
    owner_row[owners] = np.arange(len(owners))
    rounds = 0
    res = None  # the last master LP's result
    for rounds in range(1, max_rounds + 1):
        cols = np.nonzero(active)[0]
        # the master LP, column-wise: each column has its capacity entries, its job's row
        # (= 1 when every job is admitted, <= 1 otherwise) and, with admission, -1 in the last row
        use = cs.use[cols]
        nnz = (use != 0).sum(axis=1)
        start = np.concatenate([[0], np.cumsum(nnz + 1 + (admit is not None))])
        c_idx, r_idx = np.nonzero(use)  # row-major: by column, then by capacity row
        index = np.empty(start[-1], dtype=np.int64)
        value = np.empty(start[-1])
        cap_pos = start[c_idx] + (np.arange(len(c_idx)) - np.concatenate([[0], np.cumsum(nnz)])[c_idx])
        index[cap_pos], value[cap_pos] = r_idx, use[c_idx, r_idx]
        job_pos = start[:-1] + nnz
        index[job_pos], value[job_pos] = data.R + owner_row[cs.job[cols]], 1.0
        if admit is not None:
            index[job_pos + 1], value[job_pos + 1] = data.R + len(owners), -1.0
        cap_hi = capacity_limit(data.cap)
        if admit is None:
            lo = np.concatenate([np.full(data.R, -np.inf), np.ones(len(owners))])
            hi = np.concatenate([cap_hi, np.ones(len(owners))])
        else:
            lo = np.full(data.R + len(owners) + 1, -np.inf)
            hi = np.concatenate([cap_hi, np.ones(len(owners)), [-float(admit)]])
        res = solve_lp_colwise(cs.cost[cols] / scale, start, index, value, row_lower=lo, row_upper=hi,
                               col_lower=np.zeros(len(cols)), col_upper=np.ones(len(cols)),
                               presolve=not every,  # every column at once: presolve costs more than it saves
                               keep_basis=keep_basis)
        if not res.optimal:
            raise RuntimeError(f"master LP failed: {res.status}")
        marg = res.row_dual * scale
        lam = np.maximum(-marg[: data.R], 0.0)
        job_dual = np.zeros(J)
        job_dual[owners] = marg[data.R: data.R + len(owners)]
        if admit is not None:
            nu = max(-float(marg[-1]), 0.0)
        x_full[:] = 0.0
        x_full[cols] = res.x
        priced = cs.cost + cs.use @ lam - nu - job_dual[cs.job]
        best = segment_min(priced, cs)
        # each improving job's most negative configuration enters (if not already in)
        improving = best < -IMPROVE_TOL * scale  # (J,)
        enter = np.flatnonzero((priced == best[cs.job]) & ~active & improving[cs.job])  # by job, then position
        _, first = np.unique(cs.job[enter], return_index=True)  # each job's first
        active[enter[first]] = True
        added = len(first)
        if added == 0:
            break  # optimal up to the LP's tolerances; L below is a valid bound regardless
    bound, rc = lagrangian_bound(cs, data.cap, lam, nu, admit)
    basis = None
    if res is not None and res.basis is not None:
        col_status, row_status = res.basis
        col = np.full(K, BASIS_LOWER, dtype=np.int8)
        col[cols] = col_status
        job = np.full(J, BASIS_BASIC, dtype=np.int8)
        job[owners] = row_status[data.R:data.R + len(owners)]
        # the master's admission row is -Σ x ≤ -admit: its upper bound is Σ x ≥ admit's lower
        admit_status = BASIS_BASIC if admit is None else \
            {BASIS_UPPER: BASIS_LOWER, BASIS_LOWER: BASIS_UPPER}.get(int(row_status[-1]), int(row_status[-1]))
        basis = LpBasis(col, row_status[:data.R].copy(), job, admit_status)
    return LagrangeResult(bound=bound, lam=lam, nu=nu, rc=rc, x=x_full, rounds=rounds, columns=int(active.sum()),
                          basis=basis)


def round_lp(data: AllocationData, cs: ChoiceSet, x: np.ndarray, admit: int | None = None) -> list[int] | None:
    """An integer plan from the LP primal. Integral jobs keep their configuration.
    The other jobs needed (all of them, or enough to admit ``admit``, most-admitted
    first) reserve their smallest configuration, then each takes its cheapest
    configuration that still fits. When only a count ``admit`` is needed and those
    jobs' reservation does not fit beside the integral ones, any other jobs make up
    the count (:func:`_fill_count`). None if no plan is found that way."""
    owners = np.nonzero(np.diff(cs.start) > 0)[0]
    need = len(owners) if admit is None else admit
    chosen: dict[int, int] = {}
    fractional = []
    used = np.zeros(data.R)
    for j in owners:
        s = cs.of(j)
        k = s.start + int(np.argmax(x[s]))
        if x[k] >= 1 - LP_ZERO:
            chosen[j] = k
            used += cs.use[k]
        else:
            fractional.append((-float(x[s].sum()), int(j)))
    fractional = [j for _, j in sorted(fractional)][: max(0, need - len(chosen))]
    limit = capacity_limit(data.cap)
    dominant = (cs.use / np.where(data.cap > 0, data.cap, np.inf)).max(axis=1) if data.R else np.zeros(cs.K)
    smallest = {j: cs.of(j).start + int(np.argmin(dominant[cs.of(j)])) for j in fractional}
    for j in fractional:
        used += cs.use[smallest[j]]
    if np.any(used > limit) or len(chosen) + len(fractional) < need:
        if admit is None:
            return None
        for j in fractional:
            used -= cs.use[smallest[j]]
        return _fill_count(cs, x, chosen, used, limit, need, dominant)
    for j in fractional:
        used -= cs.use[smallest[j]]
        s = cs.of(j)
        ks = np.arange(s.start, s.stop)
        ok = ks[np.all(used + cs.use[ks] <= limit, axis=1)]
        k = int(ok[np.argmin(cs.cost[ok])]) if len(ok) else smallest[j]
        chosen[j] = k
        used += cs.use[k]
    return [chosen[j] for j in sorted(chosen)]


def _fill_count(cs: ChoiceSet, x: np.ndarray, chosen: dict[int, int], used: np.ndarray, limit: np.ndarray,
                need: int, dominant: np.ndarray) -> list[int] | None:
    """``chosen`` (the LP's integral jobs, using ``used``) made up to ``need`` jobs by the others, most
    LP weight first, then smallest least dominant share: each takes its cheapest configuration that
    fits what is left. None when fewer than ``need`` fit."""
    owners = np.nonzero(np.diff(cs.start) > 0)[0]
    rest = owners[~np.isin(owners, np.fromiter(chosen, dtype=np.int64, count=len(chosen)))]
    if not len(rest) or len(chosen) + len(rest) < need:
        return None
    n_jobs = len(cs.start) - 1
    mass = np.bincount(cs.job, weights=x, minlength=n_jobs)[rest]
    least = np.full(n_jobs, np.inf)
    np.minimum.at(least, cs.job, dominant)
    least = least[rest]
    chosen = dict(chosen)
    for j in rest[np.lexsort((rest, least, -mass))].tolist():
        if len(chosen) >= need:
            break
        s = cs.of(j)
        ks = np.arange(s.start, s.stop)
        ok = ks[np.all(used + cs.use[ks] <= limit, axis=1)]
        if len(ok):
            k = int(ok[np.argmin(cs.cost[ok])])
            chosen[j] = k
            used = used + cs.use[k]
    return [chosen[j] for j in sorted(chosen)] if len(chosen) >= need else None


def fix_by_reduced_cost(cs: ChoiceSet, lag: LagrangeResult, incumbent_value: float) -> np.ndarray:
    """Mask of configurations that can still be in a plan no worse than the incumbent."""
    return lag.bound + lag.rc <= with_ties(incumbent_value)
