"""Quality instance families, deterministic in the seed.

``slaq``: SLAQ §3's setting, one resource: servers of 16 cores, jobs with one
role (executors, one core each, 1 to ``max_tasks``), Amdahl speeds, loss
curves drawn from the three families at a random point of training, T = 60 s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.problems import Family


def _slaq_curve(rng: np.random.Generator) -> dict[str, Any]:
    family = ["optimus", "sublinear", "linear"][int(rng.integers(3))]
    if family == "optimus":
        params = [float(rng.uniform(1e-4, 1e-2)), 1.0, float(rng.uniform(0.0, 0.3))]
    elif family == "sublinear":
        params = [float(rng.uniform(0.0, 1e-6)), float(rng.uniform(1e-4, 1e-2)), 1.0, float(rng.uniform(0.0, 0.3))]
    else:
        params = [float(rng.uniform(0.99, 0.9999)), 0.0, float(rng.uniform(0.0, 0.3))]
    return {"family": family, "params": [round(p, 8) for p in params], "step": float(rng.integers(0, 2000))}


def slaq(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    out = []
    for i in range(jobs):
        out.append({
            "id": f"ml-{i}",
            "arrival": round(float(rng.uniform(0, 800)), 1),
            "roles": {"executor": {"demand": {"cpu": 1}, "min": 1, "max": max_tasks}},
            "speed": {"form": "amdahl", "serial": round(float(rng.uniform(0.0, 0.05)), 4),
                      "parallel": round(float(rng.uniform(0.2, 2.0)), 4)},
            "loss_curve": _slaq_curve(rng),
        })
    return {"resources": ["cpu"], "servers": [{"name": "node", "count": servers, "capacity": {"cpu": 16}}],
            "jobs": out, "policy": {"horizon_s": 60.0}}


FAMILIES = {"slaq": Family("slaq", slaq, "SLAQ §3: one-core executors, Amdahl speeds, random loss curves, T = 60 s")}
