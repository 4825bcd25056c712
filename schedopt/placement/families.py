"""Placement and parameter-assignment instance families, deterministic in the seed.

``placement``: the placement problem (Optimus §4.2, DLTAP): homogeneous
servers (16 cores, 4 GPUs, 64 GB), jobs drawn from the Table 1 profiles with
their demands, model sizes and bandwidths, and given counts (``allocation``)
of 1..``max_tasks`` PS and 1..``max_tasks`` workers each.
``placement-typed``: the same jobs on servers of three accelerator types (v100,
p100, k80; a third each), each job given a type its tasks must run on.
``placement-classes``: the same jobs on three server classes (half GPU servers
as above, a quarter CPU-only servers of 16 cores and 64 GB, a quarter
double-size GPU servers), the setting of exact placement's class model.
``optimus-paa``: parameter assignment (Optimus §5.3): one job per profile in
``models/`` that names a measured block list (``param_blocks``), cycled, with
the blocks read from ``--data-dir`` and ``max_tasks`` PS each (Table 3: ResNet-50
with 10 PS, ``--jobs 1 --max-tasks 10``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.allocation.families import optimus_cluster, optimus_job, table1_profiles
from schedopt.data import mxnet_param_blocks
from schedopt.problems import Family


def optimus_paa(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    blocks = mxnet_param_blocks(data_dir)
    profiles = [p for p in table1_profiles() if getattr(p, "param_blocks", None) in blocks]
    out, alloc = [], {}
    for i in range(jobs):
        prof = profiles[i % len(profiles)]
        job = optimus_job(i, prof, "sync", 1.0, 0.0, max_tasks)
        job["param_blocks"] = blocks[prof.param_blocks]  # type: ignore[attr-defined]
        out.append(job)
        alloc[job["id"]] = {"ps": max_tasks, "worker": max_tasks}
    return {"resources": ["cpu", "gpu", "mem_gb"], "servers": optimus_cluster(servers), "jobs": out, "allocation": alloc}


PLACEMENT_SERVER = {"cpu": 16, "gpu": 4, "mem_gb": 64}


def placement(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    profiles = table1_profiles()
    out, alloc = [], {}
    for i in range(jobs):
        prof = profiles[int(rng.integers(len(profiles)))]
        job = optimus_job(i, prof, "sync", 1.0, 0.0, max_tasks)
        out.append(job)
        alloc[job["id"]] = {"ps": int(rng.integers(1, max_tasks + 1)), "worker": int(rng.integers(1, max_tasks + 1))}
    return {"resources": ["cpu", "gpu", "mem_gb"], "servers": [{"name": "n", "count": servers, "capacity": dict(PLACEMENT_SERVER)}],
            "jobs": out, "allocation": alloc}


#: ``placement-classes``: three server classes, as shares of the servers: GPU servers as in
#: ``placement``, CPU-only servers (parameter servers only) and double-size GPU servers
PLACEMENT_CLASSES = (("gpu", 0.5, PLACEMENT_SERVER), ("cpu", 0.25, {"cpu": 16, "gpu": 0, "mem_gb": 64}),
                     ("big", 0.25, {"cpu": 32, "gpu": 8, "mem_gb": 128}))


def placement_classes(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    out = placement(jobs, servers, rng, max_tasks, data_dir)
    counts = [int(share * servers) for _, share, _ in PLACEMENT_CLASSES]
    counts[0] += servers - sum(counts)  # the rounding remainder goes to the GPU servers
    out["servers"] = [{"name": name, "count": n, "capacity": dict(cap)}
                      for (name, _, cap), n in zip(PLACEMENT_CLASSES, counts) if n > 0]
    return out


#: ``placement-typed``: the servers' accelerator types (a third each, rounding to the first) and
#: each job's given type drawn uniformly (issue 51 §3: a job's tasks on servers of its type)
PLACEMENT_TYPES = ("v100", "p100", "k80")


def placement_typed(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    out = placement(jobs, servers, rng, max_tasks, data_dir)
    counts = [servers // len(PLACEMENT_TYPES)] * len(PLACEMENT_TYPES)
    counts[0] += servers - sum(counts)
    out["servers"] = [{"name": kind, "count": n, "capacity": dict(PLACEMENT_SERVER), "accelerator": kind}
                      for kind, n in zip(PLACEMENT_TYPES, counts) if n > 0]
    kinds = [kind for kind, n in zip(PLACEMENT_TYPES, counts) if n > 0]
    out["allocation_accelerators"] = {job["id"]: kinds[int(rng.integers(len(kinds)))] for job in out["jobs"]}
    return out


PLACEMENT_FAMILIES = {"placement": Family("placement", placement, "Table 1 jobs with given counts on identical servers"),
                      "placement-typed": Family("placement-typed", placement_typed,
                                                "as placement, servers of three accelerator types, each job given one"),
                      "placement-classes": Family("placement-classes", placement_classes,
                                                  "as placement, on three server classes: GPU, CPU-only, double-size GPU")}
PS_ASSIGNMENT_FAMILIES = {"optimus-paa": Family("optimus-paa", optimus_paa, "Optimus §5.3: measured parameter blocks (reads --data-dir)")}
