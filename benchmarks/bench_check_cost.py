"""What `schedopt check --strict` costs next to the solve it checks (issue 48 §8), by size.

Run: .venv/bin/python benchmarks/bench_check_cost.py [--quick]

Per family (formula speeds `optimus`, measured table speeds `dl2`, and typed `gavel`: K80/P100/V100
servers, a speed per type; the last two read --data-dir) and size (1,000-16,000 jobs, servers = jobs / 4: contended), one
instance per seed; `optimus-greedy` and `optimus-milp` (T = 60 s) solve it, then
`check_report(strict=True)` recomputes the objective and constraints and replays
every certificate. Each cell is the median over the seeds [worst]; the ratio is
per seed, check seconds / solve seconds.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402  (benchmarks/tables.py)

from schedopt.api import solve  # noqa: E402
from schedopt.checking import check_report  # noqa: E402
from schedopt.errors import InputError  # noqa: E402
from schedopt.generate import generate_instance  # noqa: E402

SEEDS = [31, 32]
SIZES = [1000, 4000, 16000]
SOLVERS = ["optimus-greedy", "optimus-milp"]


def cell(values: list[float], fmt: str = "{:.2f}") -> str:
    return f"{fmt.format(statistics.median(values))} [{fmt.format(max(values))}]"


def main(quick: bool = False) -> None:
    seeds, sizes = (SEEDS[:1], SIZES[:2]) if quick else (SEEDS, SIZES)
    rows = []
    for family in ("optimus", "dl2", "gavel"):
        for jobs in sizes:
            runs: dict[str, list[tuple[float, float, bool]]] = {s: [] for s in SOLVERS}
            for seed in seeds:
                try:
                    inst = generate_instance(family, jobs=jobs, servers=jobs // 4, seed=seed)
                except InputError as exc:  # dl2 and gavel read the shared data folder
                    print(f"skipped {family}: {exc}", file=sys.stderr)
                    break
                for solver in SOLVERS:
                    t0 = time.perf_counter()
                    plan = solve(inst, solver, seed=0, time_limit=60)
                    t1 = time.perf_counter()
                    report = check_report(inst, plan, strict=True)
                    t2 = time.perf_counter()
                    runs[solver].append((t1 - t0, t2 - t1, report.ok and not report.unverified))
            for solver, got in runs.items():
                if not got:
                    continue
                solve_s = [g[0] for g in got]
                check_s = [g[1] for g in got]
                ratio = [c / s for s, c, _ in got]
                rows.append([f"`{family}` {jobs:,} jobs × {jobs // 4:,} servers", f"`{solver}`", cell(solve_s),
                             cell(check_s), cell(ratio), f"{sum(g[2] for g in got)} of {len(got)}"])
                print(rows[-1], flush=True)
    tables.save("check-cost", columns=["instances", "solver", "solve s", "check --strict s", "check ÷ solve",
                                       "pass --strict"],
                rows=rows, command="benchmarks/bench_check_cost.py" + (" --quick" if quick else ""), seeds=seeds,
                notes=["one run alone on the machine; cells: median over seeds [worst]; `check` recomputes the "
                       "objective, every constraint and replays both certificates (Σ-time bound and admitted count)"])
    print(tables.render("check-cost"))


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
