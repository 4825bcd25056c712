"""Allocation instance families, deterministic in the seed, and the Optimus
§6.1 cluster and job builders that other families reuse.

``optimus``: the Optimus §6.1 setting at any size: servers split 6:7 between
GPU servers (8 cores, 2 GPUs, 48 GB) and CPU servers (16 cores, 80 GB), jobs
drawn uniformly from the nine Table 1 profiles, synchronous or asynchronous
at random, arrivals uniform in [0, 12000] s, each job between 0% and 80% done.
``optimus-testbed``: the same cluster, jobs cycle through the nine profiles in
Table 1 order, alternately synchronous and asynchronous, none started.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.problems import Family
from schedopt.profiles import Profile, load_profiles

GPU_SERVER = {"cpu": 8, "gpu": 2, "mem_gb": 48}
CPU_SERVER = {"cpu": 16, "gpu": 0, "mem_gb": 80}
TABLE1_ORDER = ["resnext110", "resnet50", "inception-bn", "kaggle", "cnn-rand", "dssm",
                "rnn-lstm-dropout", "seq2seq", "deepspeech2"]


def optimus_cluster(servers: int) -> list[dict[str, Any]]:
    """The Optimus testbed's server mix at any size: 6 GPU servers to 7 CPU servers."""
    n_gpu = max(1, round(servers * 6 / 13)) if servers > 1 else 1
    n_cpu = servers - n_gpu
    out = [{"name": "gpu", "count": n_gpu, "capacity": dict(GPU_SERVER)}]
    if n_cpu:
        out.append({"name": "cpu", "count": n_cpu, "capacity": dict(CPU_SERVER)})
    return out


def optimus_job(i: int, prof: Profile, mode: str, remaining_frac: float, arrival: float, max_tasks: int) -> dict[str, Any]:
    """A PS/worker job of profile ``prof`` (``mode`` sync or async), ``remaining_frac``
    of its total steps left, up to ``max_tasks`` tasks of each role."""
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


def table1_profiles() -> list[Profile]:
    """The job profiles in Optimus Table 1's order (others after)."""
    return sorted(load_profiles(), key=lambda p: TABLE1_ORDER.index(p.name) if p.name in TABLE1_ORDER else 99)


def _on_optimus_cluster(jobs: list[dict[str, Any]], servers: int) -> dict[str, Any]:
    return {"resources": ["cpu", "gpu", "mem_gb"], "servers": optimus_cluster(servers), "jobs": jobs}


def optimus(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    profiles = {p.name: p for p in load_profiles()}
    names = sorted(profiles)
    out = []
    for i in range(jobs):
        prof = profiles[names[int(rng.integers(len(names)))]]
        mode = "sync" if rng.random() < 0.5 else "async"
        out.append(optimus_job(i, prof, mode, float(rng.uniform(0.2, 1.0)), float(rng.uniform(0, 12000)), max_tasks))
    return _on_optimus_cluster(out, servers)


def optimus_testbed(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    profiles = {p.name: p for p in load_profiles()}
    out = [optimus_job(i, profiles[TABLE1_ORDER[i % 9]], "sync" if i % 2 == 0 else "async", 1.0, 0.0, max_tasks)
           for i in range(jobs)]
    return _on_optimus_cluster(out, servers)


FAMILIES = {
    "optimus": Family("optimus", optimus, "Optimus §6.1 at any size: random Table 1 jobs, 0-80% done"),
    "optimus-testbed": Family("optimus-testbed", optimus_testbed, "Optimus testbed: Table 1 jobs in order, none started"),
}
