"""Placement benchmarks (issue 5). Prints markdown for docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_placement.py [--quick] [--only scale|exact|gaps]

1. ``optimus-placement`` and ``kube-default`` (and ``dltap``) at 100,000 tasks
   on 16,000 servers; cross-node pairs of ``dltap`` vs ``kube-default``.
2. Exact placement: growing ``generate placement`` and ``placement-classes``
   instances, 60 s each (the class model).
3. The heuristics against the optimum: 20 ``placement-classes`` instances of
   100 jobs on 50 servers.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import schedopt
from common import median_seconds
from schedopt.generate import generate_instance
from schedopt.instance import Instance
from schedopt.placement.optimus import optimus_place
from schedopt.placement.problem import compile_placement

HEURISTICS = ["optimus-placement", "kube-default", "dltap"]


def instance(tasks: int = 100_000, servers: int = 16_000, seed: int = 0) -> Instance:
    """Jobs of 1-8 PS (1 core, 2 GB) and 1-16 workers (2 cores, 4 GB) until ``tasks``; servers of 32 cores, 64 GB."""
    rng = np.random.default_rng(seed)
    jobs, alloc, n, i = [], {}, 0, 0
    while n < tasks:
        p, w = int(rng.integers(1, 9)), int(rng.integers(1, 17))
        jobs.append({"id": f"j{i}", "roles": {"ps": {"demand": {"cpu": 1, "mem_gb": 2}, "max": p},
                                              "worker": {"demand": {"cpu": 2, "mem_gb": 4}, "max": w}},
                     "model_size": 100, "bandwidth": {"ps": 125, "worker": 125}})
        alloc[f"j{i}"] = {"ps": p, "worker": w}
        n, i = n + p + w, i + 1
    return Instance.from_dict({"schema": "schedopt/instance@1", "name": f"place-{tasks}", "resources": ["cpu", "mem_gb"],
                               "servers": [{"name": "n", "count": servers, "capacity": {"cpu": 32, "mem_gb": 64}}],
                               "jobs": jobs, "allocation": alloc})


def scale(runs: int) -> None:
    inst = instance()
    data = compile_placement(inst)
    core, where = median_seconds(lambda: optimus_place(data, 0), runs)
    print(f"### 100,000 tasks ({sum(int(c.sum()) for c in data.counts):,} tasks of {data.J:,} jobs) on 16,000 servers. "
          "Targets: `optimus-placement` under 1 s, `kube-default` under 5 s.\n")
    print("| solver | seconds (median of runs) | placed jobs | servers used | cross-node pairs | Σ T_j (s) |")
    print("|---|---|---|---|---|---|")
    print(f"| `optimus-placement` core (`optimus_place`) | {core:.2f} | {sum(w is not None for w in where):,} | | | |")
    pairs = {}
    for name in HEURISTICS:
        sec, plan = median_seconds(lambda: schedopt.solve(inst, name, seed=0), runs)
        m = plan.metrics
        pairs[name] = m["cross_node_pairs"]
        print(f"| `{name}` whole solve | {sec:.2f} | {m['placed']:,} | {m['servers_used']:,} | {m['cross_node_pairs']:,} | "
              f"{m['total_transfer_time_s']:,.0f} |")
    cut = 1 - pairs["dltap"] / pairs["kube-default"]
    print(f"\n`dltap` vs `kube-default` cross-node PS-worker pairs: **{cut:.1%} fewer** (DLTAP reports 12% less traffic).\n")


def exact_scale(limit_s: float, sizes: list[tuple[str, int, int]]) -> None:
    print(f"### Exact placement (max tasks 4 per role), {limit_s:.0f} s limit each\n")
    print("| family | jobs | servers | solver | model | status | placed | Σ T_j | bound | gap | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for family, jobs, servers in sizes:
        inst = generate_instance(family, jobs=jobs, servers=servers, seed=1, max_tasks=4)
        for name in ("placement-cpsat", "placement-milp"):
            t0 = time.perf_counter()
            plan = schedopt.solve(inst, name, time_limit=limit_s, seed=0)
            sec = time.perf_counter() - t0
            b, g = plan.objective.bound, plan.objective.gap
            print(f"| `{family}` | {jobs} | {servers} | `{name}` | {plan.metrics.get('model', '-')} | {plan.status.value} | "
                  f"{plan.objective.admitted} | {plan.objective.value:.4g} | {'-' if b is None else f'{b:.4g}'} | "
                  f"{'-' if g is None else f'{g:.2%}'} | {sec:.1f} |")
    print()


def heuristic_gaps(n: int, family: str = "placement-classes", jobs: int = 100, servers: int = 50) -> None:
    print(f"### The heuristics against the optimum ({n} `generate {family}` instances: {jobs} jobs, {servers} servers, "
          "1-4 PS and workers; optimum by `placement-milp`'s class model)\n")
    variants = [("optimus-placement", {"refine": False}, "`optimus-placement` (paper's scheme, `refine=False`)")] + \
        [(h, {}, f"`{h}`") for h in HEURISTICS]
    rows: dict[str, dict[str, list[float]]] = {label: {"fewer": [], "gap": [], "pairs": [], "sec": []} for _, _, label in variants}
    for seed in range(n):
        inst = generate_instance(family, jobs=jobs, servers=servers, seed=seed, max_tasks=4)
        best = schedopt.solve(inst, "placement-milp", time_limit=60, seed=0)
        pairs = schedopt.solve(inst, "placement-milp", objective="cross_pairs", time_limit=60, seed=0)
        assert best.status == schedopt.Status.OPTIMAL and pairs.status == schedopt.Status.OPTIMAL
        for h, options, label in variants:
            t0 = time.perf_counter()
            plan = schedopt.solve(inst, h, seed=seed, **options)
            rows[label]["sec"].append(time.perf_counter() - t0)
            rows[label]["fewer"].append(best.objective.admitted - plan.objective.admitted)
            if plan.objective.admitted == best.objective.admitted:
                v, o = plan.objective.value, best.objective.value
                rows[label]["gap"].append((v - o) / v if v > 0 else 0.0)
                rows[label]["pairs"].append(plan.metrics["cross_node_pairs"] - pairs.objective.value)
    print("| heuristic | instances placing fewer jobs than the optimum | mean jobs fewer | Σ T_j gap, mean (worst), where as many placed | "
          "cross-node pairs above the minimum, mean | seconds (median) |")
    print("|---|---|---|---|---|---|")
    for label, r in rows.items():
        gaps = r["gap"] or [float("nan")]
        print(f"| {label} | {sum(x > 0 for x in r['fewer'])} of {n} | {statistics.mean(r['fewer']):.2f} | "
              f"{statistics.mean(gaps):.1%} ({max(gaps):.1%}) over {len(r['gap'])} | "
              f"{statistics.mean(r['pairs'] or [float('nan')]):.1f} | {statistics.median(r['sec']):.3f} |")
    print()


def main() -> None:
    quick = "--quick" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    if only in (None, "scale"):
        scale(runs=1 if quick else 3)
    if only in (None, "exact"):
        exact_scale(10 if quick else 60, [("placement", 8, 5), ("placement-classes", 8, 5)] if quick else
                    [("placement", 16, 10), ("placement", 48, 32), ("placement", 100, 50), ("placement-classes", 100, 50),
                     ("placement-classes", 200, 100), ("placement-classes", 400, 200)])
    if only in (None, "gaps"):
        heuristic_gaps(3 if quick else 20, jobs=30 if quick else 100, servers=12 if quick else 50)


if __name__ == "__main__":
    main()
