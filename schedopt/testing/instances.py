"""Small instances for testing solvers: builders, seeded random tiny instances
sized for exact solving in milliseconds, and the edge cases every solver of a
problem must handle (empty, over-subscribed, bounds that cannot be met).

Each problem has a :class:`ProblemKit`; :func:`kit` finds it by problem name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from schedopt.instance import Instance

SYNC = {"form": "optimus-sync", "theta": [1.02, 2.78, 4.92, 0.0, 0.02], "batch": 32}


def make_instance(jobs: list[dict[str, Any]], capacity: dict[str, float], *, name: str = "t",
                  resources: list[str] | None = None, servers: int = 1, **extra: Any) -> Instance:
    """An instance of ``servers`` identical servers sharing ``capacity`` (totals)
    evenly; ``extra`` adds top-level fields (``allocation``, ``policy``, ...)."""
    per_server = {r: v / servers for r, v in capacity.items()}
    return Instance.from_dict({
        "schema": "schedopt/instance@1", "name": name, "resources": resources or list(capacity),
        "servers": [{"name": "s", "count": servers, "capacity": per_server}], "jobs": jobs, **extra,
    })


def two_role_job(job_id: str, speed: dict[str, Any], steps: float, *, wmax: int = 3, pmax: int = 3,
                 worker: dict[str, float] | None = None, ps: dict[str, float] | None = None, **extra: Any) -> dict[str, Any]:
    """A PS/worker job (1..``pmax`` PS, 1..``wmax`` workers) as a plain document."""
    return {
        "id": job_id,
        "roles": {
            "worker": {"demand": worker or {"cpu": 2, "gpu": 1}, "min": 1, "max": wmax},
            "ps": {"demand": ps or {"cpu": 2, "gpu": 0}, "min": 1, "max": pmax},
        },
        "speed": speed, "remaining_steps": steps, **extra,
    }


def random_speed(rng: np.random.Generator, form: str) -> dict[str, Any]:
    """A random speed model of ``form`` (optimus-sync, optimus-async, table, amdahl), roles up to 3."""
    if form == "optimus-sync":
        return {"form": form, "theta": [round(float(v), 2) for v in rng.uniform(0, 3, 5)], "batch": 32}
    if form == "optimus-async":
        return {"form": form, "theta": [round(float(v), 2) for v in rng.uniform(0.1, 3, 4)]}
    if form == "table":
        pts = {(int(rng.integers(1, 4)), int(rng.integers(1, 4))) for _ in range(5)}
        return {"form": form, "points": [[p, w, round(float(rng.uniform(0.1, 5)), 3)] for p, w in sorted(pts)]}
    return {"form": "amdahl", "serial": round(float(rng.uniform(0, 1)), 3), "parallel": round(float(rng.uniform(0.5, 5)), 3)}


def random_typed_instance(seed: int, n_jobs: int | None = None, *, types: tuple[str, ...] = ("v100", "k80"),
                          max_tasks: int = 3) -> Instance:
    """Allocation on a cluster with accelerator types: one server group per type
    (0-8 GPUs each), 2-4 one- or two-role jobs with a random speed per type (some
    jobs list only some types; some give one plain speed for every type)."""
    rng = np.random.default_rng(seed)
    n = int(n_jobs or rng.integers(2, 5))
    servers = [{"name": kind, "accelerator": kind, "count": 1,
                "capacity": {"cpu": float(rng.integers(2, 13)), "gpu": float(rng.integers(0, 9))}} for kind in types]
    jobs = []
    for i in range(n):
        two = bool(rng.integers(0, 2))
        form = str(rng.choice(["optimus-sync", "optimus-async", "table"])) if two else "amdahl"
        roles = {"worker": {"demand": {"cpu": 1.0, "gpu": 1.0}, "min": 1, "max": int(rng.integers(1, max_tasks + 1))}}
        if two:
            roles["ps"] = {"demand": {"cpu": 1.0, "gpu": 0.0}, "min": 1, "max": int(rng.integers(1, max_tasks + 1))}
        job: dict[str, Any] = {"id": f"j{i}", "roles": roles, "remaining_steps": float(rng.integers(100, 5000)),
                               "arrival": float(i)}
        if rng.random() < 0.2:
            job["speed"] = random_speed(rng, form)
        else:
            listed = [kind for kind in types if rng.random() < 0.8] or [types[0]]
            job["speed_by_accelerator"] = {kind: random_speed(rng, form) for kind in listed}
        jobs.append(job)
    return Instance.from_dict({"name": f"typed-{seed}", "resources": ["cpu", "gpu"], "servers": servers, "jobs": jobs})


def random_rigid_typed_instance(seed: int, n_jobs: int | None = None) -> Instance:
    """Gavel's shape without its data: three GPU types of 4-12 GPUs each, 6-14 rigid jobs of
    1, 2, 4 or 8 GPUs (Gavel's scale factors, weighted towards 1), each at a random whole-job
    speed per type (the fastest type differs by job; some jobs skip a type). The multiple-knapsack
    structure where one-job moves get stuck (an 8-GPU job needs several others moved)."""
    rng = np.random.default_rng(seed)
    types = ("v100", "p100", "k80")
    n = int(n_jobs or rng.integers(6, 15))
    servers = [{"name": kind, "accelerator": kind, "count": int(rng.integers(1, 4)), "capacity": {"gpu": 4.0}}
               for kind in types]
    jobs = []
    for i in range(n):
        gpus = int(rng.choice([1, 1, 1, 1, 2, 4, 8]))
        base = float(rng.uniform(0.5, 3.0))
        speeds = {kind: {"form": "table", "points": [[gpus, round(base * float(rng.uniform(0.2, 1.5)), 4)]]}
                  for kind in types if rng.random() < 0.9}
        if not speeds:
            speeds = {"v100": {"form": "table", "points": [[gpus, round(base, 4)]]}}
        jobs.append({"id": f"j{i}", "roles": {"worker": {"demand": {"gpu": 1.0}, "min": gpus, "max": gpus}},
                     "speed_by_accelerator": speeds, "remaining_steps": float(rng.integers(1000, 200_000)),
                     "arrival": float(i)})
    return Instance.from_dict({"name": f"rigid-typed-{seed}", "resources": ["gpu"], "servers": servers, "jobs": jobs})


def random_tiny_instance(seed: int, n_jobs: int | None = None) -> Instance:
    """Allocation: 2-4 jobs of mixed speed forms, bounds <= 3, capacity from ample to scarce."""
    rng = np.random.default_rng(seed)
    n = int(n_jobs or rng.integers(2, 5))
    jobs = []
    for i in range(n):
        form = ["optimus-sync", "optimus-async", "table", "amdahl"][int(rng.integers(4))]
        steps = float(rng.integers(1, 1000))
        worker = {"cpu": float(rng.integers(1, 4)), "gpu": float(rng.integers(0, 2))}
        ps = {"cpu": float(rng.integers(1, 4)), "gpu": 0.0}
        speed = random_speed(rng, form)
        if form == "amdahl":
            jobs.append({"id": f"j{i}", "roles": {"worker": {"demand": worker, "min": 1, "max": int(rng.integers(1, 4))}},
                         "speed": speed, "remaining_steps": steps})
            continue
        jobs.append(two_role_job(f"j{i}", speed, steps, wmax=int(rng.integers(1, 4)), pmax=int(rng.integers(1, 4)),
                                 worker=worker, ps=ps))
    capacity = {"cpu": float(rng.integers(2, 6 * n)), "gpu": float(rng.integers(0, 2 * n))}
    return make_instance(jobs, capacity, name=f"tiny-{seed}")


def random_quota_instance(seed: int) -> Instance:
    """Allocation with tenants' queues (Kueue's ClusterQueues) on a typed cluster: the jobs of
    :func:`random_typed_instance` spread over three queues with nominal GPU quotas per flavor
    (0-4), some lending and borrowing limits, two or three of the queues in one cohort."""
    rng = np.random.default_rng(1000 + seed)
    doc = random_typed_instance(seed).to_dict()
    flavors = sorted({s["accelerator"] for s in doc["servers"]})
    queues = []
    for k, name in enumerate(["q0", "q1", "q2"]):
        quotas: dict[str, Any] = {}
        for f in flavors:
            if rng.random() < 0.85:
                gpu: dict[str, float] = {"nominal": float(rng.integers(0, 5))}
                if rng.random() < 0.4:
                    gpu["lending_limit"] = float(rng.integers(0, int(gpu["nominal"]) + 1))
                if rng.random() < 0.3:
                    gpu["borrowing_limit"] = float(rng.integers(0, 3))
                quotas[f] = {"gpu": gpu, "cpu": {"nominal": 12.0}}
        queues.append({"name": name, "cohort": "all" if k < 2 or rng.random() < 0.5 else None, "quotas": quotas})
    doc["queues"] = queues
    for i, job in enumerate(doc["jobs"]):
        job["queue"] = f"q{i % 3}"
    doc["name"] = f"quota-{seed}"
    return Instance.from_dict(doc)


def random_cohort_tree_instance(seed: int) -> Instance:
    """Allocation with hierarchical cohorts (Kueue's Cohort objects): :func:`random_typed_instance`'s
    jobs over four queues in a two-level tree (root ``org`` over cohorts ``team-x`` with q0 and q1,
    ``team-y`` with q2, and q3 directly), GPU quotas per flavor 0-4, some lending and borrowing
    limits on queues and on the two team cohorts, and pools of the cohorts' own (0-3 GPUs)."""
    rng = np.random.default_rng(3000 + seed)
    doc = random_typed_instance(seed).to_dict()
    flavors = sorted({s["accelerator"] for s in doc["servers"]})

    def quotas(pool: bool, limits: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in flavors:
            if not pool and rng.random() >= 0.85:
                continue
            gpu: dict[str, float] = {"nominal": float(rng.integers(0, 4 if pool else 5))}
            if limits and rng.random() < 0.4:
                gpu["lending_limit"] = float(rng.integers(0, int(gpu["nominal"]) + 3))
            if limits and rng.random() < 0.4:
                gpu["borrowing_limit"] = float(rng.integers(0, 3))
            out[f] = {"gpu": gpu} if pool else {"gpu": gpu, "cpu": {"nominal": 12.0}}
        return out

    homes = {"q0": "team-x", "q1": "team-x", "q2": "team-y", "q3": "org"}
    doc["queues"] = [{"name": q, "cohort": c, "quotas": quotas(False, True)} for q, c in homes.items()]
    for queue in doc["queues"]:  # a queue's lending limit is at most its nominal quota (Kueue's validation)
        for per in queue["quotas"].values():
            if "lending_limit" in per["gpu"]:
                per["gpu"]["lending_limit"] = min(per["gpu"]["lending_limit"], per["gpu"]["nominal"])
    doc["cohorts"] = [{"name": "org", "quotas": quotas(True, False)},
                      {"name": "team-x", "parent": "org", "quotas": quotas(True, True)},
                      {"name": "team-y", "parent": "org", "quotas": quotas(True, True)}]
    for i, job in enumerate(doc["jobs"]):
        job["queue"] = f"q{i % 4}"
    doc["name"] = f"cohort-tree-{seed}"
    return Instance.from_dict(doc)


def random_restart_instance(seed: int) -> Instance:
    """Allocation with running jobs: :func:`random_tiny_instance`'s jobs, about two in three
    running now at counts within their bounds, each losing 0-400 s when its counts change."""
    rng = np.random.default_rng(2000 + seed)
    doc = random_tiny_instance(seed).to_dict()
    for job in doc["jobs"]:
        if rng.random() < 0.67:
            job["running"] = {name: int(rng.integers(role["min"], role["max"] + 1)) for name, role in job["roles"].items()}
            job["restart_s"] = float(rng.integers(0, 401))
    doc["name"] = f"restart-{seed}"
    return Instance.from_dict(doc)


def random_objective_instance(seed: int) -> Instance:
    """Allocation under the average-JCT objective (``policy.objective: jct_weighted_time``),
    by seed in turn on :func:`random_tiny_instance`, :func:`random_typed_instance` and
    :func:`random_restart_instance`."""
    build = (random_tiny_instance, random_typed_instance, random_restart_instance)[seed % 3]
    doc = build(seed).to_dict()
    doc["policy"] = {**(doc.get("policy") or {}), "objective": "jct_weighted_time"}
    doc["name"] = f"jct-{seed}"
    return Instance.from_dict(doc)


def random_packing_instance(seed: int, n_jobs: int = 150, servers: int = 18, resources: int = 3) -> Instance:
    """Allocation where admission is a hard packing: ``n_jobs`` PS/worker jobs (Optimus'
    sync speed) with independent random demands of ``resources`` (2-4) of cpu, gpu,
    mem_gb and net_gbps, on ``servers`` servers of 32 cpu, 8 gpu, 128 GB, 40 Gbps.
    Which jobs fit together then depends on the mix, not on one dominant share:
    DESIGN.md's smallest-first rule admits about 88 % of the optimum's count here."""
    rng = np.random.default_rng(seed)
    names = ["cpu", "gpu", "mem_gb", "net_gbps"][:resources]
    jobs = []
    for i in range(n_jobs):
        worker = {"cpu": rng.integers(1, 9), "gpu": rng.integers(0, 5), "mem_gb": rng.integers(1, 33), "net_gbps": rng.integers(0, 10)}
        ps = {"cpu": rng.integers(1, 5), "gpu": 0, "mem_gb": rng.integers(1, 17), "net_gbps": rng.integers(0, 10)}
        jobs.append(two_role_job(f"j{i}", SYNC, float(rng.integers(100, 100_000)),
                                 worker={r: float(worker[r]) for r in names}, ps={r: float(ps[r]) for r in names}))
    per_server = {"cpu": 32.0, "gpu": 8.0, "mem_gb": 128.0, "net_gbps": 40.0}
    return make_instance(jobs, {r: per_server[r] * servers for r in names}, name=f"packing-{seed}", servers=servers)


def _family(name: str, jobs: int, servers: int, max_tasks: int) -> Callable[[int], Instance]:
    def build(seed: int) -> Instance:
        from schedopt.generate import generate_instance

        return generate_instance(name, jobs=jobs, servers=servers, seed=seed, max_tasks=max_tasks, name=f"{name}-{seed}")
    return build


def _without_jobs(instance: Instance) -> Instance:
    data = instance.to_dict()
    data.update(name=f"{instance.name}-empty", jobs=[])
    if "allocation" in data and data["allocation"] is not None:
        data["allocation"] = {}
    data.pop("previous", None)
    return Instance.from_dict(data)


@dataclass(frozen=True)
class ProblemKit:
    """Instances for checking the solvers of one problem.

    ``tiny(seed)``: solved exactly in milliseconds; ``larger(seed)``: big enough
    that a time limit matters; ``empty()``; ``oversubscribed()``: (instance, the
    most jobs any plan can admit); ``unmeetable()``: no job can be served.
    ``reference``: the exact solver used for gaps. Absent cases are None."""

    problem: str
    tiny: Callable[[int], Instance]
    larger: Callable[[int], Instance]
    reference: str | None
    empty: Callable[[], Instance] | None = None
    oversubscribed: Callable[[], tuple[Instance, int]] | None = None
    unmeetable: Callable[[], Instance] | None = None
    #: tiny instances (by seed) stating what only some solvers model, for the checks their tags select:
    #: accelerator types, tenants' queues and quotas, running jobs with restart costs
    typed: Callable[[int], Instance] | None = None
    quotas: Callable[[int], Instance] | None = None
    restarts: Callable[[int], Instance] | None = None
    #: tiny instances under the problem's other objective (allocation: the average-JCT one)
    objectives: Callable[[int], Instance] | None = None


def _allocation_oversubscribed() -> tuple[Instance, int]:
    jobs = [two_role_job(f"j{i}", SYNC, 100, worker={"cpu": 1, "gpu": 1}, ps={"cpu": 1, "gpu": 0}) for i in range(5)]
    return make_instance(jobs, {"cpu": 100, "gpu": 3}, name="oversubscribed"), 3  # 5 jobs need 5 GPUs; 3 exist


def _allocation_unmeetable() -> Instance:
    job = two_role_job("huge", SYNC, 100)
    job["roles"]["worker"].update(min=4, max=4)  # needs 4 GPUs at minimum; the cluster has 2
    return make_instance([job], {"cpu": 100, "gpu": 2}, name="unmeetable")


def _placement_job(i: int, p: int, w: int) -> dict[str, Any]:
    return two_role_job(f"j{i}", SYNC, 100, wmax=max(w, 1), pmax=max(p, 1), worker={"cpu": 1, "gpu": 1},
                        ps={"cpu": 1, "gpu": 0}, model_size=100, bandwidth={"ps": 125, "worker": 125})


def _placement_oversubscribed() -> tuple[Instance, int]:
    jobs = [_placement_job(i, 1, 2) for i in range(4)]  # 2 GPUs each, 3 servers of 2 GPUs: 3 jobs fit
    alloc = {f"j{i}": {"ps": 1, "worker": 2} for i in range(4)}
    return make_instance(jobs, {"cpu": 30, "gpu": 6}, servers=3, name="oversubscribed", allocation=alloc), 3


def _placement_unmeetable() -> Instance:
    job = _placement_job(0, 1, 5)  # 5 workers need 5 GPUs; two servers hold 4
    return make_instance([job], {"cpu": 20, "gpu": 4}, servers=2, name="unmeetable", allocation={"j0": {"ps": 1, "worker": 5}})


def _ps_tiny(seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    jobs, alloc = [], {}
    for i in range(int(rng.integers(1, 4))):
        job = two_role_job(f"j{i}", SYNC, 100, wmax=4, pmax=4)
        job["param_blocks"] = [int(v) for v in rng.integers(1, 2_000_000, int(rng.integers(3, 30)))]
        jobs.append(job)
        alloc[job["id"]] = {"ps": int(rng.integers(1, 5)), "worker": 1}
    return make_instance(jobs, {"cpu": 100, "gpu": 10}, name=f"ps-{seed}", allocation=alloc)


KITS: dict[str, ProblemKit] = {
    "allocation": ProblemKit(
        "allocation", tiny=random_tiny_instance, larger=_family("optimus", 60, 30, 8), reference="optimus-milp",
        empty=lambda: make_instance([], {"cpu": 8, "gpu": 2}, name="empty"),
        oversubscribed=_allocation_oversubscribed, unmeetable=_allocation_unmeetable,
        typed=random_typed_instance, quotas=random_quota_instance, restarts=random_restart_instance,
        objectives=random_objective_instance),
    "placement": ProblemKit(
        "placement", tiny=_family("placement", 3, 2, 2), larger=_family("placement", 60, 40, 4), reference="placement-milp",
        empty=lambda: make_instance([], {"cpu": 16, "gpu": 4}, servers=2, name="empty", allocation={}),
        oversubscribed=_placement_oversubscribed, unmeetable=_placement_unmeetable,
        typed=_family("placement-typed", 3, 3, 2)),
    "quality": ProblemKit(
        "quality", tiny=_family("slaq", 4, 2, 4), larger=_family("slaq", 400, 100, 16), reference="slaq-milp",
        empty=lambda: _without_jobs(_family("slaq", 2, 2, 4)(0))),
    "partition": ProblemKit(
        "partition", tiny=_family("dorm-table2", 4, 3, 4), larger=_family("dorm-table2", 40, 20, 8), reference="dorm-milp"),
    "ps-assignment": ProblemKit("ps-assignment", tiny=_ps_tiny, larger=_ps_tiny, reference=None),
}


def kit(problem: str) -> ProblemKit:
    """The kit of ``problem``; a problem without one gets tiny instances from its first family."""
    if problem in KITS:
        return KITS[problem]
    from schedopt.problems import get_problem

    fams = list(get_problem(problem).families)
    if not fams:
        raise ValueError(f'problem "{problem}" has no instance family to test with; pass instances explicitly')
    return ProblemKit(problem, tiny=_family(fams[0], 3, 2, 3), larger=_family(fams[0], 40, 20, 8), reference=None)
