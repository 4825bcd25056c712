"""Count allocation: how many tasks of each role every job gets under the
cluster's capacity.

Problem ``allocation`` (Optimus eq. 5-8): ``optimus-greedy`` (eq. 9 heuristic),
``optimus-milp`` (Pyomo + HiGHS), ``optimus-cpsat`` (OR-Tools CP-SAT); the
baselines ``drf``, ``tetris``, ``fifo``, ``srtf`` (Optimus §6, DL2 §6).
Problem ``quality`` (SLAQ §2): ``slaq-greedy``, ``slaq-milp``, ``slaq-cpsat``.
Importing this package registers them.
"""

from schedopt.allocation import baselines, cpsat, greedy, milp, slaq  # noqa: F401  (registration)
from schedopt.allocation.bruteforce import solve_bruteforce
from schedopt.allocation.problem import AllocationData, ChoiceSet, compile_allocation, enumerate_choices

__all__ = ["AllocationData", "ChoiceSet", "compile_allocation", "enumerate_choices", "solve_bruteforce"]
