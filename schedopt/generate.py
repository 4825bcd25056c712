"""Instance families, deterministic in the seed.

``optimus``: the Optimus §6.1 setting at any size: servers split 6:7 between
GPU servers (8 cores, 2 GPUs, 48 GB) and CPU servers (16 cores, 80 GB), jobs
drawn uniformly from the nine Table 1 profiles, synchronous or asynchronous
at random, arrivals uniform in [0, 12000] s, each job between 0% and 80% done.
``optimus-testbed``: the same cluster, jobs cycle through the nine profiles in
Table 1 order, alternately synchronous and asynchronous, none started.
``slaq``: SLAQ §3's setting, one resource: servers of 16 cores, jobs with one
role (executors, one core each, 1 to ``max_tasks``), Amdahl speeds, loss
curves drawn from the three families at a random point of training, T = 60 s.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from schedopt.errors import InputError
from schedopt.instance import INSTANCE_SCHEMA, Instance
from schedopt.profiles import Profile, load_profiles

GPU_SERVER = {"cpu": 8, "gpu": 2, "mem_gb": 48}
CPU_SERVER = {"cpu": 16, "gpu": 0, "mem_gb": 80}
TABLE1_ORDER = ["resnext110", "resnet50", "inception-bn", "kaggle", "cnn-rand", "dssm",
                "rnn-lstm-dropout", "seq2seq", "deepspeech2"]


def _cluster(servers: int) -> list[dict[str, Any]]:
    n_gpu = max(1, round(servers * 6 / 13)) if servers > 1 else 1
    n_cpu = servers - n_gpu
    out = [{"name": "gpu", "count": n_gpu, "capacity": dict(GPU_SERVER)}]
    if n_cpu:
        out.append({"name": "cpu", "count": n_cpu, "capacity": dict(CPU_SERVER)})
    return out


def _job(i: int, prof: Profile, mode: str, remaining_frac: float, arrival: float, max_tasks: int) -> dict[str, Any]:
    form = f"optimus-{mode}"
    speed = {"form": form, **prof.speed[form]}
    return {
        "id": f"{prof.name}-{i}",
        "model": prof.name,
        "arrival": round(arrival, 1),
        "roles": {
            "worker": {"demand": dict(prof.demand["worker"]), "min": 1, "max": max_tasks},
            "ps": {"demand": dict(prof.demand["ps"]), "min": 1, "max": max_tasks},
        },
        "speed": speed,
        "remaining_steps": max(1, int(round(prof.total_steps() * remaining_frac))),
        "model_size": prof.model_size_mb,
        "bandwidth": {"ps": 125, "worker": 125},
        "new": remaining_frac > 0.9,
    }


def _optimus(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int) -> list[dict[str, Any]]:
    profiles = {p.name: p for p in load_profiles()}
    names = sorted(profiles)
    out = []
    for i in range(jobs):
        prof = profiles[names[int(rng.integers(len(names)))]]
        mode = "sync" if rng.random() < 0.5 else "async"
        out.append(_job(i, prof, mode, float(rng.uniform(0.2, 1.0)), float(rng.uniform(0, 12000)), max_tasks))
    return out


def _testbed(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int) -> list[dict[str, Any]]:
    profiles = {p.name: p for p in load_profiles()}
    return [
        _job(i, profiles[TABLE1_ORDER[i % 9]], "sync" if i % 2 == 0 else "async", 1.0, 0.0, max_tasks)
        for i in range(jobs)
    ]


def _slaq_curve(rng: np.random.Generator) -> dict[str, Any]:
    family = ["optimus", "sublinear", "linear"][int(rng.integers(3))]
    if family == "optimus":
        params = [float(rng.uniform(1e-4, 1e-2)), 1.0, float(rng.uniform(0.0, 0.3))]
    elif family == "sublinear":
        params = [float(rng.uniform(0.0, 1e-6)), float(rng.uniform(1e-4, 1e-2)), 1.0, float(rng.uniform(0.0, 0.3))]
    else:
        params = [float(rng.uniform(0.99, 0.9999)), 0.0, float(rng.uniform(0.0, 0.3))]
    return {"family": family, "params": [round(p, 8) for p in params], "step": float(rng.integers(0, 2000))}


def _slaq(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int) -> dict[str, Any]:
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


def _with_optimus_cluster(make: Callable[[int, int, np.random.Generator, int], list[dict[str, Any]]]):
    def family(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int) -> dict[str, Any]:
        return {"resources": ["cpu", "gpu", "mem_gb"], "servers": _cluster(servers),
                "jobs": make(jobs, servers, rng, max_tasks)}
    return family


#: family -> (jobs, servers, rng, max_tasks) -> {resources, servers, jobs[, policy]}
FAMILIES: dict[str, Callable[[int, int, np.random.Generator, int], dict[str, Any]]] = {
    "optimus": _with_optimus_cluster(_optimus),
    "optimus-testbed": _with_optimus_cluster(_testbed),
    "slaq": _slaq,
}


def generate_instance(family: str, *, jobs: int, servers: int, seed: int = 0, max_tasks: int = 32,
                      name: str | None = None) -> Instance:
    """A validated instance of ``family`` with ``jobs`` jobs on ``servers`` servers."""
    if family not in FAMILIES:
        raise InputError("FAMILY", f'unknown family "{family}"; known: {", ".join(sorted(FAMILIES))}')
    if jobs < 0 or servers < 1 or max_tasks < 1:
        raise InputError(family, "expected --jobs >= 0, --servers >= 1, --max-tasks >= 1")
    rng = np.random.default_rng(seed)
    data = {
        "schema": INSTANCE_SCHEMA,
        "name": name or f"{family}-{jobs}j-{servers}s-seed{seed}",
        **FAMILIES[family](jobs, servers, rng, max_tasks),
    }
    return Instance.from_dict(data, source=f"generate {family}")
