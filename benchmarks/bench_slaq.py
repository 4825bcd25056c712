"""SLAQ quality-allocation benchmarks (issue 3). Stores benchmarks/results/slaq-*.json and prints them.

    .venv/bin/python benchmarks/bench_slaq.py

Medians of several runs in one process; the machines are shared and noisy, so
compare ratios measured in the same run rather than absolute seconds.
"""

from __future__ import annotations


import numpy as np

import schedopt
import tables  # benchmarks/tables.py, next to this file (run as a script)
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
    rows = [[f"greedy core (`slaq_greedy`, vectorised), median of {runs}", f"{core:.3f}", f"{plan.metrics['units_added']:,} units added"],
            ["heap reference (`slaq_greedy_heap`), same plan", f"{heap:.3f}", f"ratio {heap / core:.1f}x"],
            [f"whole `slaq-greedy` solve without bound, median of {runs}", f"{solve:.3f}", "compile, admit, greedy, plan"],
            ["whole solve with the LP bound", f"{bounded:.3f}", f"certified gap {100 * (bplan.objective.gap or 0):.2g}%"],
            ["`slaq-milp`, proven optimal", f"{exact:.3f}", f"status {eplan.status.value}, Σ reduction {eplan.objective.value:.6g} "
             f"(greedy {plan.objective.value:.6g})"]]
    tables.save("slaq-scale", columns=["what", "seconds", "note"], rows=rows, command="benchmarks/bench_slaq.py", seeds=[0],
                notes=[f"`generate slaq --jobs {jobs} --servers {nodes} --seed 0 --max-tasks {max_cores}` ({cores:,} cores); "
                       "one process, warmed up"])
    print(tables.render("slaq-scale"))

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
    rows = [["true gap to `slaq-milp`", f"{100 * np.median(gaps):.2f}%", f"{100 * np.mean(gaps):.2f}%", f"{100 * np.max(gaps):.2f}%"],
            ["gap certified by the LP bound", f"{100 * np.median(certified):.2f}%", f"{100 * np.mean(certified):.2f}%",
             f"{100 * np.max(certified):.2f}%"]]
    tables.save("slaq-non-concave", columns=["", "median", "mean", "worst"], rows=rows, command="benchmarks/bench_slaq.py",
                seeds=list(range(instances)),
                notes=[f"{instances} instances of {jobs} `slaq` jobs whose speeds are random measured tables with superlinear "
                       "jumps (R_j not concave); the optimum from `slaq-milp`"])
    print(tables.render("slaq-non-concave"))

if __name__ == "__main__":
    scale()
    non_concave_gap()  # or one of them: python -c "import bench_slaq; bench_slaq.non_concave_gap()" (from benchmarks/)
