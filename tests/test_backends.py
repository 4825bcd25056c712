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
