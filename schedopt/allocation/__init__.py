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

from schedopt.lazy import lazy_attributes
from schedopt.allocation.problem import AllocationData, ChoiceSet, compile_allocation, enumerate_choices

#: solver-side names, loaded on first use (the checker side imports this package without them)
_LAZY = {"solve_bruteforce": "schedopt.allocation.bruteforce", "allocation_plan": "schedopt.allocation.plans"}


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = ["AllocationData", "allocation_plan", "ChoiceSet", "compile_allocation", "enumerate_choices", "solve_bruteforce"]
