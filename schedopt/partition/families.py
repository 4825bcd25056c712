"""Partition instance families, deterministic in the seed.

``dorm-table2``: Dorm §V's workload, the seven application types of Table II
(``models/dorm``) in their counts (20, 20, 6, 1, 1, 1, 1 = 50), submitted in a
random order at exponential intervals (mean 20 min), on the paper's testbed
scaled to ``servers``: a quarter of the servers hold one GPU, every server
12 cores and 128 GB (20 servers: 240 cores, 5 GPUs, 2.5 TB). ``--jobs`` keeps
the first N submitted (above 50, Table II's mix is repeated).
``alibaba-dorm``: real node capacities and pod demands (Alibaba GPU trace 2023,
read from ``--data-dir``, never copied): ``servers`` nodes sampled and grouped
into classes of identical capacity, ``jobs`` applications whose container is a
sampled pod (cores, GPUs as num_gpu·gpu_milli/1000, GB), weight 2 for
latency-sensitive pods (QoS LS) else 1, n_max uniform in 1..``max_tasks``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.data import alibaba_nodes, alibaba_pods
from schedopt.problems import Family
from schedopt.profiles import load_dorm_profiles


def dorm_table2(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    mix = [p for p in load_dorm_profiles() for _ in range(p.count)]
    copies = max(1, -(-jobs // len(mix))) if jobs else 1  # more than 50 jobs: repeat Table II's mix
    kinds = mix * copies
    order = rng.permutation(len(kinds))
    arrival = np.cumsum(rng.exponential(1200.0, len(kinds)))
    apps = []
    for rank, k in enumerate(order[: jobs if jobs else len(kinds)]):
        p = kinds[int(k)]
        apps.append({"id": f"{p.name}-{rank}", "model": p.name, "arrival": round(float(arrival[rank]), 1),
                     "weight": p.weight, "roles": {"container": {"demand": dict(p.demand), "min": p.min, "max": p.max}}})
    n_gpu = max(1, round(servers / 4))
    cluster = [{"name": "gpu", "count": n_gpu, "capacity": {"cpu": 12, "gpu": 1, "mem_gb": 128}}]
    if servers > n_gpu:
        cluster.append({"name": "cpu", "count": servers - n_gpu, "capacity": {"cpu": 12, "gpu": 0, "mem_gb": 128}})
    return {"resources": ["cpu", "gpu", "mem_gb"], "servers": cluster, "jobs": apps}


def alibaba_dorm(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    nodes = alibaba_nodes(data_dir)
    pods, qos = alibaba_pods(data_dir)
    picked = nodes[rng.choice(len(nodes), size=servers, replace=servers > len(nodes))]
    shapes, counts = np.unique(picked, axis=0, return_counts=True)
    cluster = [{"name": f"node{c}", "count": int(n), "capacity": {"cpu": float(s[0]), "gpu": float(s[1]), "mem_gb": float(s[2])}}
               for c, (s, n) in enumerate(zip(shapes, counts))]
    apps = []
    for i, k in enumerate(rng.choice(len(pods), size=jobs, replace=jobs > len(pods))):
        cpu, gpu, mem = (round(float(v), 3) for v in pods[int(k)])
        apps.append({"id": f"pod-app-{i}", "weight": 2 if qos[int(k)] == "LS" else 1,
                     "roles": {"container": {"demand": {"cpu": cpu, "gpu": gpu, "mem_gb": mem}, "min": 1,
                                             "max": int(rng.integers(1, max_tasks + 1))}}})
    return {"resources": ["cpu", "gpu", "mem_gb"], "servers": cluster, "jobs": apps}


FAMILIES = {
    "dorm-table2": Family("dorm-table2", dorm_table2, "Dorm §V: Table II's seven application types on its testbed"),
    "alibaba-dorm": Family("alibaba-dorm", alibaba_dorm, "real Alibaba node and pod shapes (reads --data-dir)"),
}
