"""Solver backends shared by every problem's exact models.

:mod:`schedopt.backends.highs` runs a Pyomo model on HiGHS (through
Pyomo's standard-form compiler and ``highspy``) and maps its termination; :mod:`schedopt.backends.cpsat`
sets up OR-Tools CP-SAT and scales data to integers. Each problem package builds
its own model and calls these; nothing here knows a problem.
"""
