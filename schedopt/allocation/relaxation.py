"""The allocation problem's relaxation, one facade (issue 33 §6).

The LP relaxation of the multiple-choice model equals the Lagrangian dual of
the capacity rows (Optimus eq. 7, plus an admission row when not every job is
admitted): one bound, two engines.

- ``price space`` (:mod:`schedopt.allocation.dual`): max over prices of L(λ, ν)
  by cutting planes; each job's priced minimum in closed form where the
  problem's cost is Q_j·step_time (``AllocationData.closed_form_cost``),
  enumerated otherwise. No configuration list: what the heuristics and the
  exact driver's price-space path use.
- ``column generation`` (:mod:`schedopt.allocation.lagrange`): the master LP over
  an enumerated :class:`~schedopt.allocation.problem.ChoiceSet`, which also gives
  the primal x that LP rounding and reduced-cost fixing need.

Both return a :class:`Relaxation`: the bound, the prices and the certificate
(:class:`~schedopt.plan.Proof` of kind ``lagrangian``) that ``schedopt check``
replays. Every L(λ, ν) is a valid bound whatever the engine's accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedopt.allocation.problem import AllocationData, ChoiceSet, lagrangian_proof
from schedopt.plan import Proof
from schedopt.tolerances import DUAL_REL_TOL, capacity_limit


@dataclass
class Relaxation:
    """``bound`` L(λ, ν) (a lower bound on Σ cost of every plan admitting at least
    ``admit`` jobs; every job when ``admit`` is None); ``lam`` (R,), ``nu``;
    ``proof`` its certificate; ``result`` the engine's own result
    (:class:`~schedopt.allocation.dual.DualResult` or
    :class:`~schedopt.allocation.lagrange.LagrangeResult`)."""

    bound: float
    lam: np.ndarray
    nu: float
    admit: int | None
    proof: Proof
    result: Any = field(repr=False, default=None)


def relax_in_price_space(data: AllocationData, *, admit: int | None = None, oracle: Any = None,
                         rel_tol: float = DUAL_REL_TOL, max_iter: int = 400, jobs: np.ndarray | None = None) -> Relaxation:
    """The bound by the Lagrangian dual in price space (no configurations listed)."""
    from schedopt.allocation.dual import solve_dual

    dual = solve_dual(data, admit=admit, oracle=oracle, rel_tol=rel_tol, max_iter=max_iter, jobs=jobs)
    return from_dual(data, dual, admit)


def stated(data: AllocationData, bound: float, lam: np.ndarray) -> float:
    """The bound to state: L at the capacities every check accepts (C + FIT_TOL·max(1, C),
    :func:`schedopt.tolerances.capacity_limit`), never more than what the replay
    recomputes, even with large prices on a resource of capacity 0."""
    return float(bound) - float(np.maximum(lam, 0.0) @ (capacity_limit(data.cap) - data.cap))


def from_dual(data: AllocationData, dual: Any, admit: int | None) -> Relaxation:
    """A :class:`Relaxation` from a :class:`~schedopt.allocation.dual.DualResult` already solved."""
    return Relaxation(stated(data, dual.bound, dual.lam), dual.lam, float(dual.nu), admit,
                      lagrangian_proof(data, dual.lam, dual.nu, admit), dual)


def relax_by_columns(data: AllocationData, cs: ChoiceSet, *, admit: int | None = None,
                     seed_columns: list[int] | None = None, names: list[str] | None = None) -> Relaxation:
    """The bound by column generation over the enumerated choices ``cs`` (its
    ``result.x`` is the LP primal, for rounding and fixing). ``names``: the capacity
    rows' names when they are not the instance's resources (a typed cluster's rows)."""
    from schedopt.allocation.lagrange import solve_lp

    lag = solve_lp(data, cs, admit=admit, seed_columns=seed_columns, keep_basis=True)  # the class LP starts there
    return Relaxation(stated(data, lag.bound, lag.lam), lag.lam, float(lag.nu), admit,
                      lagrangian_proof(data, lag.lam, lag.nu, admit, names), lag)
