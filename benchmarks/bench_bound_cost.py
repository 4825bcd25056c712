"""What the certified bound costs `optimus-greedy` (issue 38 §2): the greedy with and without its
bound at 4,000 jobs × 16,000 servers, on measured table speeds (`dl2`) and formula speeds
(`optimus`), seeds 5-9. Prints markdown and stores benchmarks/results/bound-cost.json.

    .venv/bin/python benchmarks/bench_bound_cost.py [--data-dir ../shared/data] [--seeds 5]

One process, warmed up on a small instance; per seed, 5 calls without and 5 with the bound,
alternated, and their medians; cells are the median [worst] over seeds; the ratio is per seed
(with ÷ without), the same plan either way.
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

JOBS, SERVERS, FIRST_SEED, RUNS = 4000, 16000, 5, 5


def _paired_medians(inst: schedopt.Instance, runs: int = RUNS) -> tuple[float, float, schedopt.Plan, schedopt.Plan]:
    """Median seconds without and with the bound, the calls alternated (the machine's noise hits both)."""
    off, on = [], []
    for _ in range(runs):
        for bound, out in ((False, off), (True, on)):
            t0 = time.perf_counter()
            plan = schedopt.solve(inst, "optimus-greedy", bound=bound)
            out.append(time.perf_counter() - t0)
            if bound:
                p_on = plan
            else:
                p_off = plan
    return statistics.median(off), statistics.median(on), p_off, p_on


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    seeds = list(range(FIRST_SEED, FIRST_SEED + args.seeds))
    schedopt.solve(generate_instance("optimus", jobs=50, servers=200, seed=0), "optimus-greedy")  # imports, caches
    rows = []
    for family in ("dl2", "optimus"):
        off, on, ratio, gaps = [], [], [], []
        for seed in seeds:
            inst = generate_instance(family, jobs=JOBS, servers=SERVERS, seed=seed, data_dir=args.data_dir)
            t_off, t_on, p_off, p_on = _paired_medians(inst)
            assert p_on.allocation == p_off.allocation and not schedopt.check(inst, p_on)
            off.append(t_off)
            on.append(t_on)
            ratio.append(t_on / t_off)
            gaps.append(p_on.objective.gap)
            print(f"{family} seed {seed}: {t_off:.3f} s without, {t_on:.3f} s with the bound ({t_on / t_off:.2f}×), "
                  f"gap {p_on.objective.gap}", file=sys.stderr, flush=True)

        def med(xs: list[float], spec: str = ".2f") -> str:
            return f"{statistics.median(xs):{spec}} [{max(xs):{spec}}]"
        sure = [g for g in gaps if g is not None]
        rows.append([f"`{family}` {JOBS:,} jobs × {SERVERS:,} servers", med(off), med(on), med(ratio),
                     f"{statistics.median(sure):.2%} [{max(sure):.2%}]" if len(sure) == len(gaps) else f"{len(sure)}/{len(gaps)} certified"])
    tables.save("bound-cost", columns=["instances", "greedy s, no bound", "greedy s, with bound", "with ÷ without",
                                       "certified gap"],
                rows=rows, seeds=seeds, command="benchmarks/bench_bound_cost.py",
                notes=[f"one process; per seed the median of {RUNS} calls each way, alternated; cells: median [worst] over seeds"])
    print(tables.render("bound-cost"))


if __name__ == "__main__":
    main()
