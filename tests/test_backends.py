"""ortools 9.15 bundles HiGHS 1.12; highspy must match, or either import order
crashes. Import both in one process and solve a model with each."""

from __future__ import annotations

import pytest


def test_ortools_and_highspy_in_one_process() -> None:
    import highspy
    from ortools.sat.python import cp_model

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    x = h.addVariable(lb=0, ub=4)
    y = h.addVariable(lb=0, ub=4)
    h.addConstr(x + y <= 5)
    h.maximize(2 * x + y)
    assert abs(h.getInfo().objective_function_value - 9.0) < 1e-9

    m = cp_model.CpModel()
    a = m.new_int_var(0, 4, "a")
    b = m.new_int_var(0, 4, "b")
    m.add(a + b <= 5)
    m.maximize(2 * a + b)
    s = cp_model.CpSolver()
    assert s.solve(m) == cp_model.OPTIMAL and s.objective_value == 9


def _run(model, **kw):
    from schedopt.backends.highs import solve_highs

    return solve_highs(model, **{"time_limit": None, "rel_gap": 0.0, "threads": 1, "seed": 0, **kw})


def test_solve_highs_compiles_every_row_kind_and_loads_the_values_back() -> None:
    """A Pyomo model through Pyomo's standard-form compiler and one highspy.passModel: a maximised
    objective with a constant, a ranged row, a >= row, an == row, a fixed variable (moved to the
    right-hand sides) and an integer column; worked by hand: x = 3, y = 1.5, w = 0.5."""
    import pyomo.environ as pyo

    from schedopt.plan import Termination

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 4))
    m.w = pyo.Var(bounds=(0, None))
    m.z = pyo.Var(initialize=1.0)
    m.z.fix()
    m.ranged = pyo.Constraint(expr=pyo.inequality(2, m.x + m.y + m.z, 5.5))  # x + y <= 4.5
    m.floor = pyo.Constraint(expr=m.y - m.w >= 1)
    m.tie = pyo.Constraint(expr=m.x - 6 * m.w == 0)
    m.obj = pyo.Objective(expr=2 * m.x + m.y - m.w + 3, sense=pyo.maximize)
    res = _run(m)
    assert res.termination == Termination.OPTIMAL and res.has_solution
    assert (pyo.value(m.x), pyo.value(m.y), pyo.value(m.w)) == pytest.approx((3.0, 1.5, 0.5))
    assert res.incumbent == pytest.approx(2 * 3 + 1.5 - 0.5 + 3) and res.bound == pytest.approx(res.incumbent)
    assert pyo.value(m.z) == 1.0  # a fixed variable keeps its value


def test_solve_highs_limits_come_back_as_terminations() -> None:
    """Infeasible (by HiGHS, and a constant row the compiler rejects), unbounded and a spent time
    limit are statuses, never exceptions."""
    import pyomo.environ as pyo

    from schedopt.plan import Termination

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.o = pyo.Objective(expr=m.x)
    assert _run(m).termination == Termination.INFEASIBLE
    assert _run(m, time_limit=0.0).termination == Termination.TIME_LIMIT
    constant = pyo.ConcreteModel()
    constant.x = pyo.Var(initialize=1.0)
    constant.x.fix()
    constant.c = pyo.Constraint(expr=constant.x >= 2)
    constant.o = pyo.Objective(expr=constant.x)
    res = _run(constant)
    assert res.termination == Termination.INFEASIBLE and not res.has_solution
    open_ended = pyo.ConcreteModel()
    open_ended.x = pyo.Var(domain=pyo.NonNegativeReals)
    open_ended.c = pyo.Constraint(expr=open_ended.x >= 1)
    open_ended.o = pyo.Objective(expr=open_ended.x, sense=pyo.maximize)
    res = _run(open_ended)
    assert res.termination == Termination.UNBOUNDED and res.bound is None


def test_solve_highs_streams_its_log_to_the_callers_logger_only_when_asked(caplog) -> None:
    import pyomo.environ as pyo

    from schedopt.logs import solver_logging

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    with caplog.at_level("INFO", logger="schedopt"):
        _run(m)
        assert not caplog.records
        with solver_logging(True):
            _run(m)
    assert any(r.name == "schedopt.highs" for r in caplog.records)


def test_import_and_a_greedy_solve_load_no_heavy_backend() -> None:
    """Issue 15 §5: Pyomo, OR-Tools and scipy.optimize load only when a model needs them."""
    import subprocess
    import sys

    code = ("import sys, schedopt; "
            "i = schedopt.load_instance(sys.argv[1]); schedopt.solve(i, 'optimus-greedy'); "
            "heavy = [m for m in ('pyomo.environ', 'ortools.sat.python.cp_model', 'scipy.optimize', 'pandas') "
            "if m in sys.modules]; print(','.join(heavy))")
    from tests.conftest import INSTANCES

    r = subprocess.run([sys.executable, "-c", code, str(INSTANCES / "optimus-testbed.yaml")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "", f"loaded on import + greedy solve: {r.stdout.strip()}"


def _small_lp(scale: float = 1.0) -> dict:
    """min -x1 - x2  s.t.  x1 + 2 x2 <= 4·scale,  3 x1 + x2 <= 6·scale,  0 <= x <= 10 (CSC)."""
    import numpy as np

    return dict(cost=np.array([-1.0, -1.0]), start=np.array([0, 2, 4]), index=np.array([0, 1, 0, 1]),
                value=np.array([1.0, 3.0, 2.0, 1.0]), row_lower=np.full(2, -np.inf),
                row_upper=np.array([4.0, 6.0]) * scale, col_lower=np.zeros(2), col_upper=np.full(2, 10.0))


def test_solve_lp_colwise_solution_and_duals_by_hand() -> None:
    """The vertex x = (1.6, 1.2) (value -2.8) and its duals y = (-0.4, -0.2) (A^T y = c on the basis);
    a different LP solved in between on the thread's reused HiGHS changes nothing."""
    import numpy as np
    from schedopt.backends.lp import solve_lp_colwise

    first = solve_lp_colwise(**_small_lp())
    other = solve_lp_colwise(**_small_lp(scale=2.0))
    again = solve_lp_colwise(**_small_lp(), presolve=False)
    for res in (first, again):
        assert res.optimal and res.status == "Optimal"
        assert np.allclose(res.x, [1.6, 1.2]) and np.isclose(res.objective, -2.8)
        assert np.allclose(res.row_dual, [-0.4, -0.2])
    assert other.optimal and np.isclose(other.objective, -5.6)
    assert first.x.tolist() == again.x.tolist()


def test_solve_lp_colwise_infeasible_and_nan_come_back_as_status() -> None:
    import numpy as np
    from schedopt.backends.lp import solve_lp_colwise

    infeasible = _small_lp()
    infeasible["row_lower"] = np.array([5.0, -np.inf])  # x1 + 2 x2 >= 5 and <= 4
    res = solve_lp_colwise(**infeasible)
    assert not res.optimal and res.x.shape == (2,) and res.row_dual.shape == (2,)
    bad = _small_lp()
    bad["cost"] = np.array([np.nan, -1.0])
    res = solve_lp_colwise(**bad)
    assert not res.optimal and res.x.shape == (2,)
    assert solve_lp_colwise(**_small_lp()).optimal  # the thread's HiGHS still solves after both


def test_solve_lp_colwise_in_threads() -> None:
    """Each thread solves on its own HiGHS: concurrent solves give the serial answers."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    from schedopt.backends.lp import solve_lp_colwise

    scales = [1.0 + k % 5 for k in range(40)]
    with ThreadPoolExecutor(4) as pool:
        values = list(pool.map(lambda s: solve_lp_colwise(**_small_lp(s)).objective, scales))
    assert np.allclose(values, [-2.8 * s for s in scales])
