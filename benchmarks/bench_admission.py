"""Admission (issue 17 §4): `optimus-greedy` with DESIGN.md's literal admission
(`smallest`) and with `swap`, on the instances of the allocation gap table
(`optimus`, 50 jobs, seeds 1000..1009, four contention levels), against
`optimus-milp`; and the admission's time at 4,000 jobs. Prints markdown.

    .venv/bin/python benchmarks/bench_admission.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import schedopt  # noqa: E402
from schedopt.allocation.problem import admit, compile_allocation  # noqa: E402
from schedopt.generate import generate_instance  # noqa: E402
from schedopt.testing import assert_gap  # noqa: E402

CONTENTION = {"light": 400, "medium": 110, "heavy": 55, "oversubscribed": 40}


def main(seeds: int = 10) -> None:
    print("| contention | servers | admission | mean gap | worst gap | admitting fewer than the optimum |")
    print("|---|---|---|---|---|---|")
    for level, servers in CONTENTION.items():
        insts = [generate_instance("optimus", jobs=50, servers=servers, seed=1000 + s) for s in range(seeds)]
        for rule in ("smallest", "swap"):
            solver = schedopt.get_solver("optimus-greedy", stop_rule="skip", priority_factor=1.0, admission=rule)
            reports = [assert_gap(i, solver, max_gap=float("inf"), reference="optimus-milp") for i in insts]
            fewer = sum(r.admitted < r.optimum_admitted for r in reports)
            finite = [r.gap for r in reports if r.admitted == r.optimum_admitted]
            print(f"| {level} | {servers} | `{rule}` | {100 * statistics.mean(finite):.2f}% | {100 * max(finite):.2f}% | "
                  f"{fewer}/{seeds} |", flush=True)
    print()
    inst = generate_instance("optimus", jobs=4000, servers=1000, seed=3)
    data = compile_allocation(inst)
    print("| admission at 4,000 jobs on 1,000 servers (oversubscribed) | seconds (median of 3) | admitted |")
    print("|---|---|---|")
    for rule in ("smallest", "swap"):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            adm, _ = admit(data, rule)
            times.append(time.perf_counter() - t0)
        print(f"| `{rule}` | {statistics.median(times):.3f} | {len(adm)} |")
    print()
    random_mixed()


def random_mixed(n: int = 12, jobs: int = 150) -> None:
    """Admitted counts on random mixed instances (every speed form, cpu and gpu
    demands of 1-3, capacity from ample to scarce) against optimus-milp's."""
    from schedopt.testing.instances import random_tiny_instance

    print(f"| {jobs} random mixed jobs, seeds 5000..{5000 + n - 1} | instances where not all fit | "
          "`smallest` ÷ optimum (min, mean) | `swap` ÷ optimum | `optimus-lagrange` ÷ optimum |")
    print("|---|---|---|---|---|")
    ratios: dict[str, list[float]] = {"smallest": [], "swap": [], "lagrange": []}
    for seed in range(5000, 5000 + n):
        inst = random_tiny_instance(seed, n_jobs=jobs)
        data = compile_allocation(inst)
        best = schedopt.solve(inst, "optimus-milp", time_limit=60).objective.admitted
        if best in (0, data.J):
            continue
        got = {"smallest": len(admit(data, "smallest")[0]), "swap": len(admit(data, "swap")[0]),
               "lagrange": schedopt.solve(inst, "optimus-lagrange").objective.admitted}
        for k, v in got.items():
            ratios[k].append(v / best)
    cells = " | ".join(f"{min(v):.3f}, {statistics.mean(v):.3f}" for v in ratios.values())
    print(f"| | {len(ratios['swap'])} | {cells} |")


if __name__ == "__main__":
    if sys.argv[1:] == ["--only", "random"]:
        random_mixed()
    else:
        main()
