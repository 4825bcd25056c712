"""The Optimus allocation problem (Optimus eq. 5-8): how many parameter
servers and workers each job gets under the cluster's capacity.

Solvers: ``optimus-greedy`` (eq. 9 heuristic), ``optimus-milp`` (Pyomo + HiGHS),
``optimus-cpsat`` (OR-Tools CP-SAT). Importing this package registers them.
"""

from schedopt.allocation import cpsat, greedy, milp  # noqa: F401  (registration)
from schedopt.allocation.bruteforce import solve_bruteforce
from schedopt.allocation.problem import AllocationData, ChoiceSet, compile_allocation, enumerate_choices

__all__ = ["AllocationData", "ChoiceSet", "compile_allocation", "enumerate_choices", "solve_bruteforce"]
