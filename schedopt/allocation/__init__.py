"""Count allocation (Optimus eq. 5-8): how many tasks of each role every job
gets under the cluster's capacity.

Everything about it lives here: ``contract`` (the problem's declaration),
``problem`` (data, choices, bounds), ``admission`` (the heuristics' admission rules),
``metrics`` and ``checker``,
``families`` (``generate optimus``, ``optimus-testbed``), the solvers
``greedy`` (``optimus-greedy``), ``milp``, ``cpsat``, ``baselines`` (``drf``,
``tetris``, ``fifo``, ``srtf``), the lexicographic ``exact`` driver,
``lagrange`` (LP bound, rounding, fixing) and ``bruteforce``.
"""

from schedopt.allocation.bruteforce import solve_bruteforce
from schedopt.allocation.plans import allocation_plan
from schedopt.allocation.problem import AllocationData, ChoiceSet, compile_allocation, enumerate_choices

__all__ = ["AllocationData", "allocation_plan", "ChoiceSet", "compile_allocation", "enumerate_choices", "solve_bruteforce"]
