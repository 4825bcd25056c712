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
``dorm-table2``: Dorm §V's workload, the seven application types of Table II
(``models/dorm``) in their counts (20, 20, 6, 1, 1, 1, 1 = 50), submitted in a
random order at exponential intervals (mean 20 min), on the paper's testbed
scaled to ``servers``: a quarter of the servers hold one GPU, every server
12 cores and 128 GB (20 servers: 240 cores, 5 GPUs, 2.5 TB). ``--jobs`` keeps
the first N submitted (above 50, Table II's mix is repeated).
``optimus-paa``: parameter assignment (Optimus §5.3): one job per profile in
``models/`` that names a measured block list (``param_blocks``), cycled, with
the blocks read from ``--data-dir`` and ``max_tasks`` PS each (Table 3: ResNet-50
with 10 PS, ``--jobs 1 --max-tasks 10``).
``placement``: the placement problem (Optimus §4.2, DLTAP): homogeneous
servers (16 cores, 4 GPUs, 64 GB), jobs drawn from the Table 1 profiles with
their demands, model sizes and bandwidths, and given counts (``allocation``)
of 1..``max_tasks`` PS and 1..``max_tasks`` workers each.
Simulation workloads ``optimus-workload``, ``poisson``, ``philly``, ``dl2``, ``dl2-fitted``:
see :mod:`schedopt.sim.workloads`.
``alibaba-dorm``: real node capacities and pod demands (Alibaba GPU trace 2023,
read from ``--data-dir``, never copied): ``servers`` nodes sampled and grouped
into classes of identical capacity, ``jobs`` applications whose container is a
sampled pod (cores, GPUs as num_gpu·gpu_milli/1000, GB), weight 2 for
latency-sensitive pods (QoS LS) else 1, n_max uniform in 1..``max_tasks``.
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


def _slaq(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
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


def _dorm_table2(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    from schedopt.profiles import load_dorm_profiles

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


def _alibaba_dorm(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    from schedopt.data import alibaba_nodes, alibaba_pods

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


def _optimus_paa(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    from schedopt.data import mxnet_param_blocks

    blocks = mxnet_param_blocks(data_dir)
    profiles = [p for p in load_profiles() if getattr(p, "param_blocks", None) in blocks]
    profiles.sort(key=lambda p: TABLE1_ORDER.index(p.name) if p.name in TABLE1_ORDER else 99)
    out, alloc = [], {}
    for i in range(jobs):
        prof = profiles[i % len(profiles)]
        job = _job(i, prof, "sync", 1.0, 0.0, max_tasks)
        job["param_blocks"] = blocks[prof.param_blocks]  # type: ignore[attr-defined]
        out.append(job)
        alloc[job["id"]] = {"ps": max_tasks, "worker": max_tasks}
    return {"resources": ["cpu", "gpu", "mem_gb"], "servers": _cluster(servers), "jobs": out, "allocation": alloc}


PLACEMENT_SERVER = {"cpu": 16, "gpu": 4, "mem_gb": 64}


def _placement(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
    profiles = sorted(load_profiles(), key=lambda p: TABLE1_ORDER.index(p.name) if p.name in TABLE1_ORDER else 99)
    out, alloc = [], {}
    for i in range(jobs):
        prof = profiles[int(rng.integers(len(profiles)))]
        job = _job(i, prof, "sync", 1.0, 0.0, max_tasks)
        out.append(job)
        alloc[job["id"]] = {"ps": int(rng.integers(1, max_tasks + 1)), "worker": int(rng.integers(1, max_tasks + 1))}
    return {"resources": ["cpu", "gpu", "mem_gb"], "servers": [{"name": "n", "count": servers, "capacity": dict(PLACEMENT_SERVER)}],
            "jobs": out, "allocation": alloc}


def _with_optimus_cluster(make: Callable[[int, int, np.random.Generator, int], list[dict[str, Any]]]):
    def family(jobs: int, servers: int, rng: np.random.Generator, max_tasks: int, data_dir: Any = None) -> dict[str, Any]:
        return {"resources": ["cpu", "gpu", "mem_gb"], "servers": _cluster(servers),
                "jobs": make(jobs, servers, rng, max_tasks)}
    return family


def _workload(fn: str, *args: Any, **kw: Any) -> dict[str, Any]:
    """Simulation workloads live in :mod:`schedopt.sim.workloads` (documented there)."""
    from schedopt.sim import workloads

    return getattr(workloads, fn)(*args, **kw)


#: family -> (jobs, servers, rng, max_tasks, data_dir) -> {resources, servers, jobs[, policy]}
FAMILIES: dict[str, Callable[..., dict[str, Any]]] = {
    "optimus": _with_optimus_cluster(_optimus),
    "optimus-testbed": _with_optimus_cluster(_testbed),
    "slaq": _slaq,
    "dorm-table2": _dorm_table2,
    "alibaba-dorm": _alibaba_dorm,
    "optimus-paa": _optimus_paa,
    "placement": _placement,
    "optimus-workload": lambda *a, **k: _workload("optimus_workload", *a, **k),
    "poisson": lambda *a, **k: _workload("poisson_workload", *a, **k),
    "philly": lambda *a, **k: _workload("philly_workload", *a, **k),
    "dl2": lambda *a, **k: _workload("dl2_workload", *a, **k),
    "dl2-fitted": lambda *a, **k: _workload("dl2_workload", *a, fitted=True, **k),
}


def generate_instance(family: str, *, jobs: int, servers: int, seed: int = 0, max_tasks: int = 32,
                      name: str | None = None, data_dir: Any = None) -> Instance:
    """A validated instance of ``family`` with ``jobs`` jobs on ``servers`` servers."""
    if family not in FAMILIES:
        raise InputError("FAMILY", f'unknown family "{family}"; known: {", ".join(sorted(FAMILIES))}')
    if jobs < 0 or servers < 1 or max_tasks < 1:
        raise InputError(family, "expected --jobs >= 0, --servers >= 1, --max-tasks >= 1")
    rng = np.random.default_rng(seed)
    data = {
        "schema": INSTANCE_SCHEMA,
        "name": name or f"{family}-{jobs}j-{servers}s-seed{seed}",
        **FAMILIES[family](jobs, servers, rng, max_tasks, data_dir),
    }
    return Instance.from_dict(data, source=f"generate {family}")
