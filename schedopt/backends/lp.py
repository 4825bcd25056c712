"""Linear programs straight to HiGHS (highspy), for the LP bounds the heuristics
report: no Pyomo and no scipy.optimize on the hot path (``import highspy`` takes
about 60 ms, ``scipy.optimize`` about 290 ms)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class LpResult:
    """``optimal``; the primal ``x`` (n,) and the row duals (m,) when optimal.
    Row duals follow HiGHS's sign: for a minimisation, a binding ``<=`` row has a
    dual <= 0 (the objective's change per unit of its right-hand side)."""

    optimal: bool
    status: str
    x: np.ndarray
    row_dual: np.ndarray
    objective: float


def solve_lp_colwise(cost: np.ndarray, start: np.ndarray, index: np.ndarray, value: np.ndarray, *,
                     row_lower: np.ndarray, row_upper: np.ndarray, col_lower: np.ndarray,
                     col_upper: np.ndarray) -> LpResult:
    """min cost·x  s.t.  row_lower <= A x <= row_upper,  col_lower <= x <= col_upper,
    with A given column-wise (CSC: ``start`` (n+1,), ``index``/``value`` (nnz,)).
    Infinite bounds are ±inf. Single-threaded and deterministic."""
    import highspy

    n, m = len(cost), len(row_lower)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = np.asarray(col_lower, dtype=float)
    lp.col_upper_ = np.asarray(col_upper, dtype=float)
    lp.row_lower_ = np.asarray(row_lower, dtype=float)
    lp.row_upper_ = np.asarray(row_upper, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
    lp.a_matrix_.start_ = np.asarray(start, dtype=np.int32)
    lp.a_matrix_.index_ = np.asarray(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray(value, dtype=float)
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    optimal = status == highspy.HighsModelStatus.kOptimal
    sol = h.getSolution()
    x = np.asarray(sol.col_value, dtype=float) if optimal else np.zeros(n)
    duals = np.asarray(sol.row_dual, dtype=float) if optimal else np.zeros(m)
    return LpResult(optimal, h.modelStatusToString(status), x, duals, float(h.getInfo().objective_function_value))
