"""Linear programs straight to HiGHS (highspy), for the LP bounds the heuristics
report: no Pyomo and no scipy.optimize on the hot path (``import highspy`` takes
about 60 ms, ``scipy.optimize`` about 290 ms)."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

_BANNER_LOCK = threading.Lock()
_BANNER = {"shown": False}


@contextlib.contextmanager
def _stdout_silenced() -> Iterator[None]:
    """File descriptor 1 to /dev/null for the duration (C code's prints included)."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def highspy_module(who: str = "HiGHS") -> Any:
    """``highspy``, imported on first use (a load failure is one
    :class:`~schedopt.backends.deps.MissingDependencyError` line). Recent highspy
    prints its banner on stdout when the process's first ``Highs`` is built,
    before any option can be set: that first one is built here with stdout
    silenced, so a host's stdout (or ``--format json``) stays clean."""
    from schedopt.backends.deps import load

    highspy = load("highspy", "highspy", who)
    if not _BANNER["shown"]:
        with _BANNER_LOCK:
            if not _BANNER["shown"]:
                with _stdout_silenced():
                    highspy.Highs()
                _BANNER["shown"] = True
    return highspy


#: HiGHS's basis status codes (``highspy.HighsBasisStatus``): nonbasic at the lower bound, basic, at the upper
BASIS_LOWER, BASIS_BASIC, BASIS_UPPER = 0, 1, 2


@dataclass
class LpResult:
    """``optimal``; the primal ``x`` (n,) and the row duals (m,) when optimal.
    Row duals follow HiGHS's sign: for a minimisation, a binding ``<=`` row has a
    dual <= 0 (the objective's change per unit of its right-hand side). ``basis``, when
    asked for and optimal: the optimal basis as (columns' (n,), rows' (m,)) status codes
    (BASIS_LOWER, BASIS_BASIC, BASIS_UPPER), to start a related LP from."""

    optimal: bool
    status: str
    x: np.ndarray
    row_dual: np.ndarray
    objective: float
    basis: tuple[np.ndarray, np.ndarray] | None = None
    iterations: int = 0  # the simplex's


_THREAD = threading.local()


def _thread_highs(highspy: Any) -> Any:
    """This thread's HiGHS for :func:`solve_lp_colwise`, its last model and solver state cleared
    (``clearModel``: the next solve starts as on a new instance, the options kept). Building a
    ``Highs`` costs about 0.2 ms, more than the simplex of the small LPs a heuristic's call solves."""
    h = getattr(_THREAD, "highs", None)
    if h is None:
        h = _THREAD.highs = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
    else:
        h.clearModel()
    return h


def run_highs(h: Any, highspy: Any) -> None:
    """``h.run()``, as a guest in a host's process: HiGHS keeps one thread scheduler per
    process, made by its first run with that run's ``threads``; a later run asking another
    count fails before it starts (model status "Not Set"). Such a run is repeated once with
    ``threads`` 0 (the scheduler as it is), which ``h`` keeps. An LP's simplex runs on one thread
    either way; a MIP may then use the host's threads."""
    if h.run() == highspy.HighsStatus.kError and h.getModelStatus() == highspy.HighsModelStatus.kNotset:
        ok, threads = h.getOptionValue("threads")
        if ok == highspy.HighsStatus.kOk and threads != 0:
            h.setOptionValue("threads", 0)
            h.run()


_THREADS_USABLE: dict[int, bool] = {}


def usable_threads(threads: int) -> int:
    """``threads`` if HiGHS can run with that many in this process, else 0 (the thread scheduler
    a host's earlier run made; see :func:`run_highs`), for solvers that hand HiGHS its options
    through another layer (Pyomo). Tried once per count on a one-column LP (a run with a count
    makes the scheduler when there is none, as the solve itself would)."""
    threads = int(threads)
    if threads == 0:
        return 0
    usable = _THREADS_USABLE.get(threads)
    if usable is None:
        highspy = highspy_module()
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", threads)
        _pass_colwise(h, highspy, np.ones(1), np.zeros(1), np.ones(1), np.zeros(0), np.zeros(0),
                      np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        h.run()
        usable = _THREADS_USABLE[threads] = h.getModelStatus() != highspy.HighsModelStatus.kNotset
    return threads if usable else 0


def _pass_colwise(h: Any, highspy: Any, cost: np.ndarray, col_lower: np.ndarray, col_upper: np.ndarray,
                  row_lower: np.ndarray, row_upper: np.ndarray, start: np.ndarray, index: np.ndarray,
                  value: np.ndarray) -> Any:
    """``h.passModel`` of min cost·x over a column-wise A (``start`` (n,) int32, ``index`` int32,
    ``value``), the arrays straight in (a HighsLp's fields cost about 0.5 ms to set at a few hundred
    columns); every column continuous (an empty integrality array is read past its end). HiGHS's status."""
    n = len(cost)
    return h.passModel(n, len(row_lower), len(index), int(highspy.MatrixFormat.kColwise),
                       int(highspy.ObjSense.kMinimize), 0.0, cost, col_lower, col_upper, row_lower, row_upper,
                       start, index, value, np.zeros(n, dtype=np.int32))


def solve_lp_colwise(cost: np.ndarray, start: np.ndarray, index: np.ndarray, value: np.ndarray, *,
                     row_lower: np.ndarray, row_upper: np.ndarray, col_lower: np.ndarray,
                     col_upper: np.ndarray, presolve: bool = True, time_limit: float | None = None,
                     basis: tuple[np.ndarray, np.ndarray] | None = None, keep_basis: bool = False) -> LpResult:
    """min cost·x  s.t.  row_lower <= A x <= row_upper,  col_lower <= x <= col_upper,
    with A given column-wise (CSC: ``start`` (n+1,), ``index``/``value`` (nnz,)).
    Infinite bounds are ±inf. Single-threaded and deterministic. ``presolve=False``
    for LPs of a few rows and many columns, where HiGHS's presolve can cost 100× the
    simplex (the admission LP with its count row: 0.5 s against 5 ms at 4,000 columns).
    ``time_limit`` (s): HiGHS's own (its status then "Time limit reached"); HiGHS compares its
    option with the run time its instance has accumulated over every run, so the thread's
    instance is given that run time plus the limit. ``basis``: a starting basis, status codes
    (columns' (n,), rows' (m,)) as :class:`LpResult` gives them (with ``presolve=False``; one HiGHS does not
    accept is left out: the run then starts as without); ``keep_basis``: the result carries the optimal one."""
    highspy = highspy_module()

    n, m = len(cost), len(row_lower)
    h = _thread_highs(highspy)
    h.setOptionValue("presolve", "choose" if presolve else "off")
    h.setOptionValue("time_limit", INF if time_limit is None else h.getRunTime() + max(1e-3, float(time_limit)))
    index = np.asarray(index, dtype=np.int32)
    numbers = [np.asarray(a, dtype=float) for a in (cost, col_lower, col_upper, row_lower, row_upper, value)]
    if any(np.isnan(a).any() for a in numbers):  # HiGHS would call such an LP optimal, its value NaN
        return LpResult(False, "Model error", np.zeros(n), np.zeros(m), math.nan)
    cost, col_lower, col_upper, row_lower, row_upper, value = numbers
    passed = _pass_colwise(h, highspy, cost, col_lower, col_upper, row_lower, row_upper,
                           np.asarray(start, dtype=np.int32)[:n], index, value)
    if passed == highspy.HighsStatus.kError:  # an index out of range, say: not solved, as HiGHS's own model error
        return LpResult(False, "Model error", np.zeros(n), np.zeros(m), math.nan)
    if basis is not None and len(basis[0]) == n and len(basis[1]) == m:
        _set_basis(h, highspy, basis)
    run_highs(h, highspy)
    status = h.getModelStatus()
    optimal = status == highspy.HighsModelStatus.kOptimal
    sol = h.getSolution()
    x = np.asarray(sol.col_value, dtype=float) if optimal else np.zeros(n)
    duals = np.asarray(sol.row_dual, dtype=float) if optimal else np.zeros(m)
    kept = None
    if keep_basis and optimal:
        got = h.getBasis()
        kept = (np.array([int(v) for v in got.col_status], dtype=np.int8),
                np.array([int(v) for v in got.row_status], dtype=np.int8))
    info = h.getInfo()
    return LpResult(optimal, h.modelStatusToString(status), x, duals, float(info.objective_function_value),
                    kept, int(info.simplex_iteration_count))


def _set_basis(h: Any, highspy: Any, basis: tuple[np.ndarray, np.ndarray]) -> None:
    """``h.setBasis`` from status codes (columns', rows'); where HiGHS refuses it, ``h`` is left as it was
    (its run starts as without one)."""
    codes = [highspy.HighsBasisStatus(v) for v in range(5)]
    start = highspy.HighsBasis()
    start.col_status = [codes[v] for v in np.asarray(basis[0]).tolist()]
    start.row_status = [codes[v] for v in np.asarray(basis[1]).tolist()]
    start.alien = False
    h.setBasis(start)


#: +infinity for LP bounds (HiGHS's own infinity; numpy's inf is taken as it)
INF = float("inf")


class IncrementalLp:
    """An LP built and re-solved in steps on one HiGHS instance (column generation,
    cutting planes): rows and columns are added, :meth:`solve` runs from the last
    basis. The only other ``highspy`` user beside :func:`solve_lp_colwise`.
    Minimisation; row duals follow HiGHS's sign (<= 0 on a binding ``<=`` row)."""

    def __init__(self, *, seed: int = 0, threads: int | None = 1):
        highspy = highspy_module()

        self._highspy = highspy
        self._h = highspy.Highs()
        self._h.setOptionValue("output_flag", False)
        if threads is not None:
            self._h.setOptionValue("threads", int(threads))
        self._h.setOptionValue("random_seed", int(seed))

    def add_rows(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Empty rows ``lower <= · <= upper`` (columns added later fill them)."""
        n = len(lower)
        self._h.addRows(n, np.asarray(lower, dtype=float), np.asarray(upper, dtype=float), 0,
                        np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))

    def add_cols(self, cost: np.ndarray, lower: np.ndarray, upper: np.ndarray, start: np.ndarray, index: np.ndarray,
                 value: np.ndarray) -> None:
        """Columns in CSC form (``start`` (n,), ``index``/``value`` (nnz,))."""
        self._h.addCols(len(cost), np.asarray(cost, dtype=float), np.asarray(lower, dtype=float),
                        np.asarray(upper, dtype=float), len(index), np.asarray(start, dtype=np.int32),
                        np.asarray(index, dtype=np.int32), np.asarray(value, dtype=float))

    def add_col(self, cost: float, lower: float, upper: float, index: np.ndarray, value: np.ndarray) -> None:
        self._h.addCol(float(cost), float(lower), float(upper), len(index), np.asarray(index, dtype=np.int32),
                       np.asarray(value, dtype=float))

    def add_row(self, lower: float, upper: float, index: np.ndarray, value: np.ndarray) -> None:
        """One row ``lower <= value·x[index] <= upper``; the next :meth:`solve` starts from the last basis."""
        self._h.addRow(float(lower), float(upper), len(index), np.asarray(index, dtype=np.int32),
                       np.asarray(value, dtype=float))

    def set_col_bounds(self, index: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        """New bounds on the columns ``index``."""
        self._h.changeColsBounds(len(index), np.asarray(index, dtype=np.int32), np.asarray(lower, dtype=float),
                                 np.asarray(upper, dtype=float))

    def set_row_bounds(self, index: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        """New bounds on the rows ``index``; the next :meth:`solve` starts from the last basis."""
        self._h.changeRowsBounds(len(index), np.asarray(index, dtype=np.int32), np.asarray(lower, dtype=float),
                                 np.asarray(upper, dtype=float))

    def set_costs(self, index: np.ndarray, cost: np.ndarray) -> None:
        """New objective coefficients on the columns ``index``."""
        self._h.changeColsCost(len(index), np.asarray(index, dtype=np.int32), np.asarray(cost, dtype=float))

    def set_time_limit(self, seconds: float | None) -> None:
        """The next solve stops after ``seconds`` (None: no limit); :meth:`solve`'s status says so.
        HiGHS compares its limit with the instance's run time summed over every solve so far."""
        limit = INF if seconds is None or not math.isfinite(seconds) else self._h.getRunTime() + max(1e-3, float(seconds))
        self._h.setOptionValue("time_limit", limit)

    def pass_dense(self, cost: np.ndarray, rows: np.ndarray, row_upper: np.ndarray, col_lower: np.ndarray,
                   col_upper: np.ndarray) -> None:
        """Replace the model by min cost·x s.t. rows·x <= row_upper (dense, (m, n)), bounds on x."""
        hs = self._highspy
        m, n = rows.shape
        lp = hs.HighsLp()
        lp.num_col_, lp.num_row_ = n, m
        lp.col_cost_ = np.asarray(cost, dtype=float)
        lp.col_lower_ = np.asarray(col_lower, dtype=float)
        lp.col_upper_ = np.asarray(col_upper, dtype=float)
        lp.row_lower_ = np.full(m, -INF)
        lp.row_upper_ = np.asarray(row_upper, dtype=float)
        lp.a_matrix_.format_ = hs.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = np.arange(0, m * n + 1, n)
        lp.a_matrix_.index_ = np.tile(np.arange(n), m)
        lp.a_matrix_.value_ = np.asarray(rows, dtype=float).ravel()
        self._h.passModel(lp)

    def solve_primal(self) -> np.ndarray:
        """Run HiGHS; the primal values only (the cutting planes' master: no duals, no status text)."""
        run_highs(self._h, self._highspy)
        return np.asarray(self._h.getSolution().col_value, dtype=float)

    def solve(self) -> LpResult:
        """Run HiGHS; the primal and duals when optimal."""
        h = self._h
        run_highs(h, self._highspy)
        status = h.getModelStatus()
        optimal = status == self._highspy.HighsModelStatus.kOptimal
        sol = h.getSolution()
        x = np.asarray(sol.col_value, dtype=float)
        duals = np.asarray(sol.row_dual, dtype=float)
        return LpResult(optimal, h.modelStatusToString(status), x, duals, float(h.getInfo().objective_function_value))


@dataclass
class MilpResult:
    """``x`` the best integer solution found (None if none); ``dual_bound`` HiGHS's
    proven bound on the minimum (None if it has none); ``optimal``."""

    optimal: bool
    x: np.ndarray | None
    dual_bound: float | None


def solve_milp_dense(cost: np.ndarray, rows: np.ndarray, row_upper: np.ndarray, col_lower: np.ndarray,
                     col_upper: np.ndarray, *, time_limit: float | None = None, seed: int | None = None) -> MilpResult:
    """min cost·x s.t. rows·x <= row_upper (dense (m, n)), bounds, x integer; on HiGHS."""
    import math

    lp = IncrementalLp(seed=int(seed or 0))
    lp.pass_dense(cost, rows, row_upper, col_lower, col_upper)
    h, hs = lp._h, lp._highspy
    h.changeColsIntegrality(len(cost), np.arange(len(cost), dtype=np.int32),
                            np.array([hs.HighsVarType.kInteger] * len(cost)))
    if time_limit is not None:
        h.setOptionValue("time_limit", max(1e-3, float(time_limit)))
    run_highs(h, hs)
    status = h.getModelStatus()
    info = h.getInfo()
    has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value, dtype=float) if has_x else None
    bound = float(info.mip_dual_bound)
    return MilpResult(status == hs.HighsModelStatus.kOptimal, x, bound if math.isfinite(bound) else None)
