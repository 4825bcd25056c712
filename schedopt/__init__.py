"""schedopt: deep-learning cluster scheduling as optimization models.

    import schedopt
    inst = schedopt.load_instance("instances/optimus-testbed.yaml")
    plan = schedopt.solve(inst, "optimus-milp", time_limit=10)
    assert not schedopt.check(inst, plan)

The model, plans and the checker load at once; the solvers (``solve``, ``compare``,
the registry, ``sweep``) on first use, so ``import schedopt.checking`` loads no solver.
"""

from schedopt.errors import InputError
from schedopt.lazy import lazy_attributes
from schedopt.instance import Instance, Job, Role, Server, load_instance, save_instance
from schedopt.checking import Violation, check
from schedopt.plan import Plan, Status, Termination, load_plan, save_plan
from schedopt.problems import Problem, get_problem, infer_problem, problems

#: names loaded on first use -> the module that defines them
_LAZY = {
    **dict.fromkeys(("Comparison", "compare", "solve", "warm_up"), "schedopt.api"),
    **dict.fromkeys(("SolverInfo", "get_solver", "register", "solver_info", "solvers"), "schedopt.registry"),
    "sweep": "schedopt.sweeps",
    "quota_what_if": "schedopt.whatif",
}


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = [
    "warm_up",
    "Comparison", "InputError", "Instance", "Job", "Plan", "Problem", "Role", "Server", "SolverInfo", "Status",
    "Termination", "Violation", "check", "compare", "get_problem", "get_solver", "infer_problem", "load_instance",
    "load_plan", "problems", "quota_what_if", "register", "save_instance", "save_plan", "solve", "solver_info", "solvers", "sweep",
]
__version__ = "0.1.0"
