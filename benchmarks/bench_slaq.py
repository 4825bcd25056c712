"""SLAQ quality-allocation benchmarks (issue 3). Prints markdown for docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_slaq.py

Medians of several runs in one process; the machines are shared and noisy, so
compare ratios measured in the same run rather than absolute seconds.
"""

from __future__ import annotations


import numpy as np

import schedopt
from common import median_seconds
from schedopt.allocation.admission import admit_smallest_first
from schedopt.quality.greedy import slaq_greedy, slaq_greedy_heap
from schedopt.quality.problem import compile_quality
from schedopt.generate import generate_instance
from schedopt.instance import Instance


def scale(jobs: int = 4000, nodes: int = 1000, max_cores: int = 64, runs: int = 5) -> None:
    inst = generate_instance("slaq", jobs=jobs, servers=nodes, seed=0, max_tasks=max_cores)
    data = compile_quality(inst)
    _, start = admit_smallest_first(data)
    schedopt.solve(inst, "slaq-greedy", bound=False)  # warm: imports, first-call costs
    core, _ = median_seconds(lambda: slaq_greedy(data, start), runs)
    heap, _ = median_seconds(lambda: slaq_greedy_heap(data, start), max(1, runs // 2))
    solve, plan = median_seconds(lambda: schedopt.solve(inst, "slaq-greedy", bound=False), runs)
    bounded, bplan = median_seconds(lambda: schedopt.solve(inst, "slaq-greedy"), 1)
    exact, eplan = median_seconds(lambda: schedopt.solve(inst, "slaq-milp"), 1)
    cores = int(inst.capacity_total[0])
    print(f"### `slaq-greedy`, {jobs:,} jobs on {cores:,} cores (1 to {max_cores} each). Target: under 0.5 s.\n")
    print("| what | seconds | note |\n|---|---|---|")
    print(f"| greedy core (`slaq_greedy`, vectorised), median of {runs} | {core:.3f} | {plan.metrics['units_added']:,} units added |")
    print(f"| heap reference (`slaq_greedy_heap`), same plan | {heap:.3f} | ratio {heap / core:.1f}x |")
    print(f"| whole `slaq-greedy` solve without bound, median of {runs} | {solve:.3f} | compile, admit, greedy, plan |")
    print(f"| whole solve with the LP bound | {bounded:.3f} | certified gap {100 * (bplan.objective.gap or 0):.2g}% |")
    print(f"| `slaq-milp`, proven optimal | {exact:.3f} | status {eplan.status.value}, Σ reduction {eplan.objective.value:.6g} "
          f"(greedy {plan.objective.value:.6g}) |\n")


def non_concave_gap(instances: int = 10, jobs: int = 40) -> None:
    """Measured tables (superlinear jumps) make R_j non-concave: the greedy's gap to the optimum."""
    gaps, certified = [], []
    for seed in range(instances):
        rng = np.random.default_rng(seed)
        inst = generate_instance("slaq", jobs=jobs, servers=max(1, jobs // 8), seed=seed, max_tasks=8)
        data = inst.to_dict()
        for job in data["jobs"]:
            pts = sorted({1} | {int(c) for c in rng.integers(1, 9, 3)})
            job["speed"] = {"form": "table", "points": [[c, float(rng.uniform(0.2, 1.0) * c ** rng.uniform(0.5, 2.5))] for c in pts]}
        inst = Instance.from_dict(data, "non-concave")
        g = schedopt.solve(inst, "slaq-greedy")
        e = schedopt.solve(inst, "slaq-milp")
        assert not schedopt.check(inst, g) and not schedopt.check(inst, e)
        gaps.append((e.objective.value - g.objective.value) / e.objective.value)
        certified.append(g.objective.gap or 0.0)
    print(f"### The greedy's gap when R_j is not concave ({instances} instances, {jobs} jobs, measured tables)\n")
    print("| | mean | worst |\n|---|---|---|")
    print(f"| true gap to `slaq-milp` | {100 * np.mean(gaps):.2f}% | {100 * np.max(gaps):.2f}% |")
    print(f"| gap certified by the LP bound | {100 * np.mean(certified):.2f}% | {100 * np.max(certified):.2f}% |\n")


if __name__ == "__main__":
    scale()
    non_concave_gap()
