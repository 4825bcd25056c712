"""Shared helpers: tiny random instances and a plan assertion that always runs check()."""

from __future__ import annotations

from pathlib import Path

import os

import pytest
from hypothesis import HealthCheck, settings

# Property tests explore locally; in CI (CI=true) they are derandomized so a run
# cannot fail by chance, and a failure prints the blob that reproduces it.
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

import schedopt
from schedopt.instance import Instance

# an outside package's own tests: run by tests/test_testing.py with the package on the path
collect_ignore = ["plugin_demo"]

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = ROOT / "instances"
SHARED_DATA = ROOT.parent / "shared" / "data"

ALLOCATION_SOLVERS = [s.name for s in schedopt.solvers("allocation")]
EXACT_SOLVERS = [s.name for s in schedopt.solvers("allocation") if s.exact]


def assert_checked(instance: Instance, plan: schedopt.Plan) -> schedopt.Plan:
    """Every plan every test makes goes through the independent checker."""
    violations = schedopt.check(instance, plan)
    assert not violations, "\n".join(map(str, violations))
    return plan


# the public testing kit's builders (no second copy here)
from schedopt.testing.instances import make_instance, random_tiny_instance, two_role_job  # noqa: E402,F401


@pytest.fixture
def testbed() -> Instance:
    return schedopt.load_instance(INSTANCES / "optimus-testbed.yaml")


@pytest.fixture(scope="module")
def greedy_100() -> tuple[Instance, schedopt.Plan]:
    """``instances/optimus-100.yaml`` and optimus-greedy's plan of it (the forgeries' base)."""
    inst = schedopt.load_instance(INSTANCES / "optimus-100.yaml")
    return inst, schedopt.get_solver("optimus-greedy").solve(inst, seed=0)

