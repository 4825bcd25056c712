"""Placement benchmark (issue 5, partial): ``optimus-placement`` at 100,000 tasks
on 16,000 servers. Prints markdown for docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_placement.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import schedopt
from schedopt.instance import Instance
from schedopt.placement.optimus import optimus_place
from schedopt.placement.problem import compile_placement


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


def main(runs: int = 3) -> None:
    inst = instance()
    data = compile_placement(inst)
    core = []
    for _ in range(runs):
        t0 = time.perf_counter()
        where = optimus_place(data, 0)
        core.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    plan = schedopt.solve(inst, "optimus-placement")
    whole = time.perf_counter() - t0
    print(f"### `optimus-placement`, {sum(int(c.sum()) for c in data.counts):,} tasks of {data.J:,} jobs on 16,000 servers. Target: under 1 s.\n")
    print("| what | seconds | note |\n|---|---|---|")
    print(f"| placement core (`optimus_place`), median of {runs} | {statistics.median(core):.2f} | "
          f"{sum(w is not None for w in where):,} jobs placed |")
    print(f"| whole solve (compile, place, metrics, Plan) | {whole:.2f} | {plan.metrics['servers_used']:,} servers used, "
          f"{plan.metrics['cross_node_pairs']:,} cross-node pairs |\n")


if __name__ == "__main__":
    main()
