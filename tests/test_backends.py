"""ortools 9.15 bundles HiGHS 1.12; highspy must match, or either import order
crashes. Import both in one process and solve a model with each."""

from __future__ import annotations


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


def test_pyomo_highs_available() -> None:
    import pyomo.environ  # noqa: F401  (registers the solver plugins)
    from pyomo.contrib.solver.common.factory import SolverFactory

    assert SolverFactory("highs").available()


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
