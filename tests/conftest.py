"""Shared helpers: tiny random instances and a plan assertion that always runs check()."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import os

import numpy as np
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


def two_role_job(job_id: str, speed: dict[str, Any], steps: float, *, wmax: int = 3, pmax: int = 3,
                 worker: dict[str, float] | None = None, ps: dict[str, float] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": job_id,
        "roles": {
            "worker": {"demand": worker or {"cpu": 2, "gpu": 1}, "min": 1, "max": wmax},
            "ps": {"demand": ps or {"cpu": 2, "gpu": 0}, "min": 1, "max": pmax},
        },
        "speed": speed,
        "remaining_steps": steps,
        **extra,
    }


def make_instance(jobs: list[dict[str, Any]], capacity: dict[str, float], *, name: str = "t",
                  resources: list[str] | None = None, servers: int = 1) -> Instance:
    per_server = {r: v / servers for r, v in capacity.items()}
    return Instance.from_dict({
        "schema": "schedopt/instance@1",
        "name": name,
        "resources": resources or list(capacity),
        "servers": [{"name": "s", "count": servers, "capacity": per_server}],
        "jobs": jobs,
    })


def random_tiny_instance(seed: int, n_jobs: int | None = None) -> Instance:
    """2-4 jobs of mixed speed forms, bounds <= 3, capacity from ample to scarce."""
    rng = np.random.default_rng(seed)
    n = int(n_jobs or rng.integers(2, 5))
    jobs = []
    for i in range(n):
        form = ["optimus-sync", "optimus-async", "table", "amdahl"][int(rng.integers(4))]
        steps = float(rng.integers(1, 1000))
        worker = {"cpu": float(rng.integers(1, 4)), "gpu": float(rng.integers(0, 2))}
        ps = {"cpu": float(rng.integers(1, 4)), "gpu": 0.0}
        if form == "optimus-sync":
            speed = {"form": form, "theta": [round(float(v), 2) for v in rng.uniform(0, 3, 5)], "batch": 32}
        elif form == "optimus-async":
            speed = {"form": form, "theta": [round(float(v), 2) for v in rng.uniform(0.1, 3, 4)]}
        elif form == "table":
            pts = {(int(rng.integers(1, 4)), int(rng.integers(1, 4))) for _ in range(5)}
            speed = {"form": form, "points": [[p, w, round(float(rng.uniform(0.1, 5)), 3)] for p, w in sorted(pts)]}
        else:
            speed = {"form": "amdahl", "serial": round(float(rng.uniform(0, 1)), 3), "parallel": round(float(rng.uniform(0.5, 5)), 3)}
            jobs.append({"id": f"j{i}", "roles": {"worker": {"demand": worker, "min": 1, "max": int(rng.integers(1, 4))}},
                         "speed": speed, "remaining_steps": steps})
            continue
        jobs.append(two_role_job(f"j{i}", speed, steps, wmax=int(rng.integers(1, 4)), pmax=int(rng.integers(1, 4)),
                                 worker=worker, ps=ps))
    capacity = {"cpu": float(rng.integers(2, 6 * n)), "gpu": float(rng.integers(0, 2 * n))}
    return make_instance(jobs, capacity, name=f"tiny-{seed}")


@pytest.fixture
def testbed() -> Instance:
    return schedopt.load_instance(INSTANCES / "optimus-testbed.yaml")
