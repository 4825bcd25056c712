"""Placement benchmarks (issue 5). Prints markdown for docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_placement.py [--quick]

1. ``optimus-placement`` and ``kube-default`` (and ``dltap``) at 100,000 tasks
   on 16,000 servers; cross-node pairs of ``dltap`` vs ``kube-default``.
2. Exact placement: growing ``generate placement`` instances, 60 s each.
3. The heuristics against the optimum on small generated instances.
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


def exact_scale(limit_s: float, sizes: list[tuple[int, int]]) -> None:
    print(f"### Exact placement on `generate placement` (max tasks 4 per role), {limit_s:.0f} s limit each\n")
    print("| jobs | servers | solver | status | placed | Σ T_j | bound | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for jobs, servers in sizes:
        inst = generate_instance("placement", jobs=jobs, servers=servers, seed=1, max_tasks=4)
        for name in ("placement-cpsat", "placement-milp"):
            t0 = time.perf_counter()
            plan = schedopt.solve(inst, name, time_limit=limit_s, seed=0)
            sec = time.perf_counter() - t0
            b = plan.objective.bound
            print(f"| {jobs} | {servers} | `{name}` | {plan.status.value} | {plan.objective.admitted} | "
                  f"{plan.objective.value:.4g} | {'-' if b is None else f'{b:.4g}'} | {sec:.1f} |")
    print()


def heuristic_gaps(n: int) -> None:
    print(f"### The heuristics against the optimum ({n} `generate placement` instances: 8 jobs, 5 servers, 1-4 PS and workers)\n")
    rows: dict[str, dict[str, list[float]]] = {h: {"fewer": [], "gap": [], "pairs": []} for h in HEURISTICS}
    for seed in range(n):
        inst = generate_instance("placement", jobs=8, servers=5, seed=seed, max_tasks=4)
        best = schedopt.solve(inst, "placement-cpsat", time_limit=60, seed=0)
        pairs = schedopt.solve(inst, "placement-cpsat", objective="cross_pairs", time_limit=60, seed=0)
        for h in HEURISTICS:
            plan = schedopt.solve(inst, h, seed=seed)
            rows[h]["fewer"].append(best.objective.admitted - plan.objective.admitted)
            if plan.objective.admitted == best.objective.admitted:
                v, o = plan.objective.value, best.objective.value
                rows[h]["gap"].append((v - o) / v if v > 0 else 0.0)
                rows[h]["pairs"].append(plan.metrics["cross_node_pairs"] - pairs.objective.value)
    print("| heuristic | instances placing fewer jobs than the optimum | mean jobs fewer | Σ T_j gap, mean (worst), where as many placed | "
          "cross-node pairs above the minimum, mean |")
    print("|---|---|---|---|---|")
    for h, r in rows.items():
        gaps = r["gap"] or [float("nan")]
        print(f"| `{h}` | {sum(x > 0 for x in r['fewer'])} of {n} | {statistics.mean(r['fewer']):.2f} | "
              f"{statistics.mean(gaps):.1%} ({max(gaps):.1%}) | {statistics.mean(r['pairs'] or [float('nan')]):.1f} |")
    print()


def main() -> None:
    quick = "--quick" in sys.argv
    scale(runs=1 if quick else 3)
    exact_scale(10 if quick else 60, [(4, 3), (8, 5)] if quick else [(4, 3), (8, 5), (16, 10), (24, 16), (32, 24), (48, 32)])
    heuristic_gaps(3 if quick else 20)


if __name__ == "__main__":
    main()
