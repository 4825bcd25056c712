"""Test your own solver against schedopt's contract and exact optima
(``pip install schedopt[testing]``; docs/testing.md).

- :func:`check_solver`: the contract suite for any solver object or registered
  name (feasible, checked plans; integer counts; determinism; instance not
  mutated; no printing; time limit honoured; empty, over-subscribed and
  unmeetable instances; typed, quota and restart instances for the solvers whose
  capability tags declare them, a one-line refusal from those that do not).
  :func:`parametrize_with_checks` turns it into one pytest test per (solver, check).
- :func:`assert_gap`: a plan or solver against the exact optimum, failing with
  a report (values, bound, gap, the jobs decided differently) above ``max_gap``.
- :mod:`schedopt.testing.strategies`: hypothesis strategies for instances of
  each problem, sized for exact solving in milliseconds.
- A pytest plugin (registered as ``schedopt`` in ``pytest11``) prints the gaps
  ``assert_gap`` measured, per solver, in the terminal summary.
"""

from __future__ import annotations

from typing import Any

from schedopt.testing.checks import CHECKS, SolverCheckError, check_solver, parametrize_with_checks
from schedopt.testing.gaps import GapError, GapReport, assert_gap, measure_gap, reference_plan
from schedopt.testing.instances import (KITS, ProblemKit, kit, make_instance, random_packing_instance,
                                        random_cohort_tree_instance, random_objective_instance, random_quota_instance, random_restart_instance,
                                        random_rigid_typed_instance, random_tiny_instance,
                                        random_typed_instance, two_role_job)


def __getattr__(name: str) -> Any:
    if name == "strategies":  # imports hypothesis: only when asked for
        import importlib

        return importlib.import_module("schedopt.testing.strategies")
    raise AttributeError(name)


__all__ = ["CHECKS", "GapError", "GapReport", "KITS", "ProblemKit", "SolverCheckError", "assert_gap", "check_solver",
           "kit", "make_instance", "measure_gap", "parametrize_with_checks", "random_packing_instance",
           "random_cohort_tree_instance", "random_objective_instance", "random_quota_instance", "random_restart_instance", "random_rigid_typed_instance", "random_tiny_instance",
           "random_typed_instance", "reference_plan", "strategies", "two_role_job"]
