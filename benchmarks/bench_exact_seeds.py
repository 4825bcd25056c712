"""The exact solvers' headline over many seeds (issue 38 §3): `optimus-milp` and `optimus-cpsat` at
4,000 jobs × 16,000 servers on the `optimus`, `philly` and `dl2` families, seeds 5-9, T = 60 s, in one
warmed-up process. Prints markdown and stores benchmarks/results/exact-seeds.json.

    .venv/bin/python benchmarks/bench_exact_seeds.py [--data-dir ../shared/data] [--seeds 5] [--jobs 4000]
    .venv/bin/python benchmarks/bench_exact_seeds.py --growth [--sizes 2000 4000 8000 16000]   # exact-growth.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import schedopt  # noqa: E402
from benchmarks import tables  # noqa: E402
from schedopt.generate import generate_instance  # noqa: E402

FAMILIES = ("optimus", "philly", "dl2")
SOLVERS = ("optimus-milp", "optimus-cpsat")
FIRST_SEED, T_S = 5, 60.0


def growth(args: argparse.Namespace) -> None:
    """How the exact solvers' time grows past 4,000 jobs (issue 36 §2): `optimus` at ``args.sizes``
    jobs (four servers each), the same seeds, both solvers; stored as exact-growth.json."""
    seeds = list(range(FIRST_SEED, FIRST_SEED + args.seeds))
    schedopt.warm_up(list(SOLVERS))
    rows = []
    for jobs in args.sizes:
        for solver in SOLVERS:
            times, statuses, gaps = [], [], []
            for seed in seeds:
                inst = generate_instance("optimus", jobs=jobs, servers=4 * jobs, seed=seed, data_dir=args.data_dir)
                t0 = time.perf_counter()
                plan = schedopt.solve(inst, solver, time_limit=T_S, seed=0)
                times.append(time.perf_counter() - t0)
                statuses.append(plan.status)
                gaps.append(plan.objective.gap)
                print(f"optimus {jobs} {solver} seed {seed}: {plan.status.value}, gap {plan.objective.gap}, "
                      f"{times[-1]:.1f} s", file=sys.stderr, flush=True)
            known = [g for g in gaps if g is not None]
            rows.append([f"{jobs:,}", f"`{solver}`", f"{statistics.median(times):.1f}", f"{max(times):.1f}",
                         " / ".join(f"{t:.1f}" for t in times),
                         f"{sum(s == schedopt.Status.OPTIMAL for s in statuses)}/{len(seeds)}",
                         f"{sum(g is not None and g <= 1e-4 for g in gaps)}/{len(seeds)}",
                         f"{max(known):.1e}" if known else "-"])
    tables.save("exact-growth", columns=["jobs", "solver", "median s", "worst s", "per seed (s)", "proven optimal",
                                         "within 1e-4", "worst gap"],
                rows=rows, seeds=seeds,
                command=f"benchmarks/bench_exact_seeds.py --growth --sizes {' '.join(map(str, args.sizes))} --seeds {args.seeds}",
                notes=[f"`generate optimus --jobs J --servers 4J`, T = {T_S:g} s, one warmed-up process, seconds include "
                       "the model build and hand-over; 'worst gap' is the certified (value - bound) / value"])
    print(tables.render("exact-growth"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=4000)
    ap.add_argument("--growth", action="store_true", help="the growth curve on `optimus` instead (exact-growth.json)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 4000, 8000, 16000])
    args = ap.parse_args()
    if args.growth:
        growth(args)
        return
    seeds = list(range(FIRST_SEED, FIRST_SEED + args.seeds))
    schedopt.warm_up(list(SOLVERS))
    rows = []
    for family in FAMILIES:
        for solver in SOLVERS:
            times, proven, gaps = [], 0, []
            for seed in seeds:
                inst = generate_instance(family, jobs=args.jobs, servers=4 * args.jobs, seed=seed, data_dir=args.data_dir)
                t0 = time.perf_counter()
                plan = schedopt.solve(inst, solver, time_limit=T_S, seed=0)
                times.append(time.perf_counter() - t0)
                proven += plan.status == schedopt.Status.OPTIMAL
                if plan.objective.gap is not None:
                    gaps.append(plan.objective.gap)
                print(f"{family} {solver} seed {seed}: {plan.status.value}, gap {plan.objective.gap}, {times[-1]:.1f} s",
                      file=sys.stderr, flush=True)
            rows.append([f"`{family}`", f"`{solver}`", f"{statistics.median(times):.1f}", f"{max(times):.1f}",
                         " / ".join(f"{t:.1f}" for t in times), f"{proven}/{len(seeds)}",
                         f"{max(gaps):.1e}" if gaps else "-"])
    tables.save("exact-seeds", columns=["family", "solver", "median s", "worst s", "per seed (s)", "proven optimal",
                                        "worst gap"],
                rows=rows, seeds=seeds,
                command=f"benchmarks/bench_exact_seeds.py --jobs {args.jobs} --seeds {args.seeds}",
                notes=[f"{args.jobs:,} jobs × {4 * args.jobs:,} servers, T = {T_S:g} s, one warmed-up process, "
                       "seconds include the model build; 'worst gap' is the certified (value - bound) / value"])
    print(tables.render("exact-seeds"))


if __name__ == "__main__":
    main()
