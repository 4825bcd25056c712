"""schedopt: deep-learning cluster scheduling as optimization models.

    import schedopt
    inst = schedopt.load_instance("instances/optimus-testbed.yaml")
    plan = schedopt.solve(inst, "optimus-milp", time_limit=10)
    assert not schedopt.check(inst, plan)
"""

from schedopt.api import Comparison, compare, solve, warm_up
from schedopt.errors import InputError
from schedopt.instance import Instance, Job, Role, Server, load_instance, save_instance
from schedopt.checking import Violation, check
from schedopt.plan import Plan, Status, Termination, load_plan, save_plan
from schedopt.problems import Problem, get_problem, infer_problem, problems
from schedopt.registry import SolverInfo, get_solver, register, solver_info, solvers
from schedopt.sweeps import sweep

__all__ = [
    "warm_up",
    "Comparison", "InputError", "Instance", "Job", "Plan", "Problem", "Role", "Server", "SolverInfo", "Status",
    "Termination", "Violation", "check", "compare", "get_problem", "get_solver", "infer_problem", "load_instance",
    "load_plan", "problems", "register", "save_instance", "save_plan", "solve", "solver_info", "solvers", "sweep",
]
__version__ = "0.1.0"
