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
import scipy.optimize
import scipy.sparse as sp

from schedopt.allocation.problem import FIT_TOL, AllocationData, ChoiceSet


@dataclass
class LagrangeResult:
    """``bound`` = L(λ); ``lam`` (R,) capacity prices; ``rc`` (K,) reduced costs;
    ``x`` (K,) the master LP's primal (0 for columns never generated)."""

    bound: float
    lam: np.ndarray
    rc: np.ndarray
    x: np.ndarray
    rounds: int
    columns: int


def _segment_min(values: np.ndarray, cs: ChoiceSet) -> np.ndarray:
    return np.minimum.reduceat(values, cs.start[:-1])


def lagrangian_bound(cs: ChoiceSet, cap: np.ndarray, lam: np.ndarray) -> tuple[float, np.ndarray]:
    """(L(λ), rc) for prices ``lam`` (clipped at 0). Every job must own a configuration."""
    lam = np.maximum(lam, 0.0)
    priced = cs.cost + cs.use @ lam
    best = _segment_min(priced, cs)
    rc = priced - best[cs.job]
    return float(best.sum() - lam @ cap), rc


def solve_lp(data: AllocationData, cs: ChoiceSet, max_rounds: int = 500) -> LagrangeResult:
    """LP relaxation with every job admitted (each owns >= 1 configuration and
    all fit at their minimum), by column generation."""
    J, K = data.J, cs.K
    dominant = (cs.use / np.where(data.cap > 0, data.cap, np.inf)).max(axis=1) if data.R else np.zeros(K)
    # initial columns: each job's cheapest and its smallest (feasible together: all fit at minimum)
    first = cs.start[:-1]
    cheapest = first + np.array([np.argmin(cs.cost[cs.of(j)]) for j in range(J)], dtype=np.int64)
    smallest = first + np.array([np.argmin(dominant[cs.of(j)]) for j in range(J)], dtype=np.int64)
    active = np.zeros(K, dtype=bool)
    active[cheapest] = True
    active[smallest] = True
    scale = max(1.0, float(np.abs(cs.cost).max()))
    lam = np.zeros(data.R)
    x_full = np.zeros(K)
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        cols = np.nonzero(active)[0]
        pick = sp.csr_matrix((np.ones(len(cols)), (cs.job[cols], np.arange(len(cols)))), shape=(J, len(cols)))
        res = scipy.optimize.linprog(
            cs.cost[cols] / scale, A_ub=sp.csr_matrix(cs.use[cols].T), b_ub=data.cap * (1 + FIT_TOL),
            A_eq=pick, b_eq=np.ones(J), bounds=(0, 1), method="highs",
        )
        if res.status != 0:
            raise RuntimeError(f"master LP failed: {res.message}")
        lam = np.maximum(-np.asarray(res.ineqlin.marginals) * scale, 0.0)
        mu = np.asarray(res.eqlin.marginals) * scale
        x_full[:] = 0.0
        x_full[cols] = res.x
        priced = cs.cost + cs.use @ lam - mu[cs.job]
        best = _segment_min(priced, cs)
        # each improving job's most negative configuration enters (if not already in)
        improving = np.nonzero(best < -1e-9 * scale)[0]
        hits = (priced == best[cs.job]) & ~active
        added = 0
        for j in improving:
            s = cs.of(j)
            new = np.nonzero(hits[s])[0]
            if len(new):
                active[s.start + int(new[0])] = True
                added += 1
        if added == 0:
            break  # optimal up to the LP's tolerances; L(λ) below is a valid bound regardless
    bound, rc = lagrangian_bound(cs, data.cap, lam)
    return LagrangeResult(bound=bound, lam=lam, rc=rc, x=x_full, rounds=rounds, columns=int(active.sum()))


def round_lp(data: AllocationData, cs: ChoiceSet, x: np.ndarray) -> list[int] | None:
    """An integer plan from the LP primal: integral jobs keep their configuration;
    fractional jobs (at most about R of them) first reserve their smallest
    configuration, then each takes its cheapest one that fits. None if the
    reservation itself does not fit."""
    chosen: dict[int, int] = {}
    fractional = []
    used = np.zeros(data.R)
    for j in range(data.J):
        s = cs.of(j)
        k = s.start + int(np.argmax(x[s]))
        if x[k] >= 1 - 1e-6:
            chosen[j] = k
            used += cs.use[k]
        else:
            fractional.append(j)
    limit = data.cap + FIT_TOL * np.maximum(1.0, data.cap)
    # reserve each fractional job's smallest configuration, then upgrade them one by one
    dominant = (cs.use / np.where(data.cap > 0, data.cap, np.inf)).max(axis=1) if data.R else np.zeros(cs.K)
    smallest = {j: cs.of(j).start + int(np.argmin(dominant[cs.of(j)])) for j in fractional}
    for j in fractional:
        used += cs.use[smallest[j]]
    if np.any(used > limit):
        return None
    for j in fractional:
        used -= cs.use[smallest[j]]
        s = cs.of(j)
        ks = np.arange(s.start, s.stop)
        ok = ks[np.all(used + cs.use[ks] <= limit, axis=1)]
        k = int(ok[np.argmin(cs.cost[ok])]) if len(ok) else smallest[j]
        chosen[j] = k
        used += cs.use[k]
    return [chosen[j] for j in range(data.J)]


def fix_by_reduced_cost(cs: ChoiceSet, lag: LagrangeResult, incumbent_value: float) -> np.ndarray:
    """Mask of configurations that can still be in a plan no worse than the incumbent."""
    tol = 1e-9 * max(1.0, abs(incumbent_value))
    return lag.bound + lag.rc <= incumbent_value + tol
