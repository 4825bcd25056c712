"""Typed clusters at loop speed and at scale (issue 50 §3-4): the `gavel` family (K80/P100/V100,
rigid jobs, measured speeds; reads --data-dir).

    .venv/bin/python benchmarks/bench_typed.py [--only latency|latency-objectives|scale|multigpu|erased] [--seeds 5]

1. Per-call latency: 40, 100, 144, 200 and 400 jobs on 27 4-GPU servers (36 GPUs per type, Gavel's
   cluster), the first call after ``schedopt.warm_up()`` in a fresh process, the first call after
   ``schedopt.warm_up([solver], instance=...)`` given another seed's instance (a host's earlier
   round: other jobs of the same workload), and the median of the next calls, per solver; the
   typed greedy's certified gap beside it.
2. Scale: 1,000, 4,000 and 16,000 jobs (servers = jobs / 4), ``optimus-milp`` at T = 60 s and
   the type-aware greedy: time, status and gap per seed.
3. Multi-GPU jobs: the typed heuristics against ``optimus-milp``'s optimum at 11-400 jobs with
   Gavel's scale factors up to 8 (4 × --seeds seeds per size, from seed 100).
4. Typed against untyped (``--only erased``): both exact solvers at 1,000, 4,000 and 16,000 jobs
   (servers = jobs / 4, the scale part's seeds), typed and with the types erased (every server one
   type, every job at its V100 speed), T = 60 s; issue 50 §3's "within 2× untyped", per seed.
5. Per-call latency under both objectives (``--only latency-objectives``): the next calls of part 1
   under Σ t and under the average-JCT objective (``jct_weighted_time``), alternating per seed.
Stores benchmarks/results/typed-latency.json, typed-latency-objectives.json, typed-scale.json, typed-multigpu.json and
typed-erased.json.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# this checkout's code, also where another checkout is installed in editable mode (a frozen clone's run)
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]

import schedopt  # noqa: E402
from benchmarks import tables  # noqa: E402
from schedopt.generate import generate_instance  # noqa: E402

LATENCY_SOLVERS = ["optimus-greedy", "optimus-lagrange", "optimus-milp", "optimus-cpsat", "gavel-las"]
#: issue 50's range is 100-200 jobs on Gavel's 108 GPUs: its ends, the 144-job call it quotes, and beyond
LATENCY_JOBS = (40, 100, 144, 200, 400)
FIRST = """
import sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]  # this checkout, not the install
sys.path.insert(0, %r)
import time, schedopt
from schedopt.generate import generate_instance
jobs, servers, seed, data_dir, solver, own = %d, %d, %d, %r, %r, %r
if own:  # the host's own earlier instance (another seed: other jobs of the same workload) warms up too
    schedopt.warm_up([solver], instance=generate_instance("gavel", jobs=jobs, servers=servers, seed=seed + 1000,
                                                          data_dir=data_dir))
else:
    schedopt.warm_up()
inst = generate_instance("gavel", jobs=jobs, servers=servers, seed=seed, data_dir=data_dir)
t0 = time.perf_counter(); schedopt.solve(inst, solver, seed=0); t1 = time.perf_counter()
print(t1 - t0)
"""


def _next_calls(n: int, seed: int, solver: str, data_dir: str, objective: str | None) -> tuple[float, float | None]:
    """The median of five solves of fresh instances (after one unmeasured), s; the last plan's gap."""
    fresh = [generate_instance("gavel", jobs=n, servers=27, seed=seed, data_dir=data_dir) for _ in range(6)]
    if objective is not None:
        fresh = [inst.with_objective(objective) for inst in fresh]
    schedopt.solve(fresh[0], solver, seed=0)
    times = []
    for inst in fresh[1:]:
        t0 = time.perf_counter()
        plan = schedopt.solve(inst, solver, seed=0)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), plan.objective.gap


def latency(seeds: int, data_dir: str) -> None:
    rows = []
    for n in LATENCY_JOBS:
        for solver in LATENCY_SOLVERS:
            first, first_own, nxt, gaps = [], [], [], []
            for seed in range(seeds):
                for own, out_list in ((False, first), (True, first_own)):
                    out = subprocess.run([sys.executable, "-c", FIRST % (str(ROOT), n, 27, seed, data_dir, solver, own)],
                                         capture_output=True, text=True, check=True).stdout.split()
                    out_list.append(float(out[-1]))
                # a scheduler's loop parses each round's instance anew: each call gets a fresh one
                t, gap = _next_calls(n, seed, solver, data_dir, None)
                nxt.append(t)
                if gap is not None and solver != "gavel-las":
                    gaps.append(gap)
            rows.append([str(n), solver, f"{statistics.median(first) * 1e3:.1f}",
                         f"{statistics.median(first_own) * 1e3:.1f}", f"{statistics.median(nxt) * 1e3:.1f}",
                         f"{max(nxt) * 1e3:.1f}", f"{statistics.median(gaps) * 100:.3f} [{max(gaps) * 100:.3f}]" if gaps else "—"])
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    tables.save("typed-latency", columns=["jobs", "solver", "first call after warm_up (ms, median)",
                                          "first call after warm_up(instance=another seed's) (ms, median)",
                                          "next calls, fresh instances (ms, median)",
                                          "next calls (ms, worst seed)",
                                          "certified gap % (median [worst])"],
                rows=rows, seeds=list(range(seeds)),
                command="benchmarks/bench_typed.py --only latency (gavel family, 27 servers: 36 GPUs per type)")
    print(tables.render("typed-latency"))


#: the objectives the per-call latency is compared under (``--only latency-objectives``)
OBJECTIVE_SOLVERS = ["optimus-greedy", "optimus-lagrange", "optimus-milp", "optimus-cpsat"]


def latency_objectives(seeds: int, data_dir: str) -> None:
    """Next calls under Σ t and under the average-JCT objective, alternating seed by seed in one process."""
    schedopt.warm_up(OBJECTIVE_SOLVERS)
    rows = []
    for n in LATENCY_JOBS:
        for solver in OBJECTIVE_SOLVERS:
            by: dict[str | None, list[float]] = {None: [], "jct_weighted_time": []}
            gaps: list[float] = []
            for seed in range(seeds):
                for objective in by:
                    t, gap = _next_calls(n, seed, solver, data_dir, objective)
                    by[objective].append(t)
                    if objective is not None and gap is not None:
                        gaps.append(gap)
            plain, jct = by[None], by["jct_weighted_time"]
            ratios = [b / a for a, b in zip(plain, jct)]
            rows.append([str(n), solver, f"{statistics.median(plain) * 1e3:.1f}", f"{statistics.median(jct) * 1e3:.1f}",
                         f"{max(jct) * 1e3:.1f}", f"{statistics.median(ratios):.2f}",
                         f"{statistics.median(gaps) * 100:.3f} [{max(gaps) * 100:.3f}]" if gaps else "—"])
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    tables.save("typed-latency-objectives",
                columns=["jobs", "solver", "Σ t: next calls (ms, median)", "average-JCT: next calls (ms, median)",
                         "average-JCT: worst seed (ms)", "average-JCT ÷ Σ t (median per seed)",
                         "average-JCT: certified gap % (median [worst])"],
                rows=rows, seeds=list(range(seeds)),
                command="benchmarks/bench_typed.py --only latency-objectives (gavel family, 27 servers: 36 GPUs "
                        "per type; median of 5 fresh instances per seed, the objectives alternating)")
    print(tables.render("typed-latency-objectives"))


def scale(seeds: int, data_dir: str, runs: int = 3) -> None:
    """Each solver ``runs`` times per seed, the two alternating (the machine's speed drifts between
    runs: a single run's ranking of two close times is noise); the median stated, every run beside it."""
    rows = []
    for n in (1000, 4000, 16000):
        for seed in range(31, 31 + seeds):
            inst = generate_instance("gavel", jobs=n, servers=n // 4, seed=seed, data_dir=data_dir)
            walls: dict[str, list[float]] = {"optimus-milp": [], "optimus-greedy": []}
            plans = {}
            for _ in range(runs):
                for solver in walls:
                    t0 = time.perf_counter()
                    plans[solver] = schedopt.solve(inst, solver, seed=0, time_limit=60)
                    walls[solver].append(time.perf_counter() - t0)
            for solver, times in walls.items():
                plan, gap = plans[solver], plans[solver].objective.gap
                rows.append([str(n), solver, str(seed), plan.status.value, f"{statistics.median(times):.2f}",
                             " ".join(f"{t:.2f}" for t in times),
                             f"{gap * 100:.4f}" if gap is not None else "—", str(plan.objective.admitted)])
                print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    rows.sort(key=lambda r: (int(r[0]), r[1] != "optimus-milp", int(r[2])))
    tables.save("typed-scale", columns=["jobs", "solver", "seed", "status", "seconds (wall)", "runs (s)", "gap %",
                                        "admitted"],
                rows=rows, seeds=list(range(31, 31 + seeds)),
                command=f"benchmarks/bench_typed.py --only scale (gavel family, servers = jobs / 4, T = 60 s; "
                        f"median of {runs} alternating runs)")
    print(tables.render("typed-scale"))


ERASED_SOLVERS = ("optimus-milp", "optimus-cpsat")


def erased(seeds: int, data_dir: str, sizes: tuple[int, ...] = (1000, 4000, 16000)) -> None:
    """Each exact solver on each typed instance and on the same jobs with the types erased, one run
    each in one warmed-up process; the table states the medians, the worst seed and the per-seed
    ratios (issue 50 §3: typed within 2× untyped, the worst seeds included)."""
    from benchmarks.bench_heterogeneous import _erase_types

    schedopt.warm_up(list(ERASED_SOLVERS))
    rows = []
    seed_list = list(range(31, 31 + seeds))
    for n in sizes:
        cases = []
        for seed in seed_list:
            inst = generate_instance("gavel", jobs=n, servers=n // 4, seed=seed, data_dir=data_dir)
            cases.append((inst, _erase_types(inst)))
        for solver in ERASED_SOLVERS:
            typed_s, flat_s, proven = [], [], 0
            for inst, flat in cases:
                for which, out in ((inst, typed_s), (flat, flat_s)):
                    t0 = time.perf_counter()
                    plan = schedopt.solve(which, solver, seed=0, time_limit=60)
                    out.append(time.perf_counter() - t0)
                    assert not schedopt.check(which, plan)
                    if which is inst:
                        proven += plan.status == schedopt.Status.OPTIMAL
                print(f"{n} {solver}: typed {typed_s[-1]:.2f} s, untyped {flat_s[-1]:.2f} s", file=sys.stderr,
                      flush=True)
            ratios = [t / f for t, f in zip(typed_s, flat_s)]
            rows.append([f"{n:,}", f"`{solver}`", f"{statistics.median(typed_s):.2f} [{max(typed_s):.2f}]",
                         f"{statistics.median(flat_s):.2f} [{max(flat_s):.2f}]",
                         f"{statistics.median(typed_s) / statistics.median(flat_s):.1f}×",
                         " / ".join(f"{r:.1f}" for r in ratios), f"{proven}/{len(cases)}"])
    tables.save("typed-erased", columns=["jobs", "solver", "typed s", "untyped s", "typed ÷ untyped (medians)",
                                         "per seed (typed ÷ untyped)", "typed proven optimal"],
                rows=rows, seeds=seed_list,
                command=f"benchmarks/bench_typed.py --only erased (gavel family, servers = jobs / 4, T = 60 s; "
                        f"one run each, one warmed-up process)",
                notes=["median [worst] over the seeds; untyped: the same jobs and GPUs with one type, every job at "
                       "its V100 speed; every plan passes `check`"])
    print(tables.render("typed-erased"))


MULTIGPU_SIZES = [(11, 3), (20, 6), (20, 9), (40, 9), (80, 27), (144, 27), (400, 27)]


def multigpu(seeds: int, data_dir: str) -> None:
    """The typed heuristics against the optimum on Gavel's multi-GPU jobs (``--max-tasks 8``:
    scale factors 1, 2, 4, 8), from 3 servers (4 GPUs per type) to 27 (36 per type); seeds from
    100 (the heuristics were written against seeds 0-29)."""
    import numpy as np

    rows = []
    for n, servers in MULTIGPU_SIZES:
        insts = [generate_instance("gavel", jobs=n, servers=servers, seed=seed, max_tasks=8, data_dir=data_dir)
                 for seed in range(100, 100 + seeds)]
        exact, exact_s = [], []
        for inst in insts:
            t0 = time.perf_counter()
            exact.append(schedopt.solve(inst, "optimus-milp", seed=0))
            exact_s.append(time.perf_counter() - t0)
            assert exact[-1].status == schedopt.Status.OPTIMAL, (n, servers, exact[-1].status)
        for solver in ("optimus-greedy", "optimus-lagrange"):
            gaps, certified, secs, fewer = [], [], [], 0
            for inst, best in zip(insts, exact):
                t0 = time.perf_counter()
                plan = schedopt.solve(inst, solver, seed=0)
                secs.append(time.perf_counter() - t0)
                assert not schedopt.check(inst, plan)
                if plan.objective.admitted < best.objective.admitted:
                    fewer += 1
                    gaps.append(math.inf)
                else:
                    gaps.append(plan.objective.value / best.objective.value - 1 if best.objective.admitted else 0.0)
                certified.append(plan.objective.gap if plan.objective.gap is not None else math.inf)
            g, c = np.array(gaps), np.array(certified)
            rows.append([f"{n} x {servers}", solver, f"{int((g <= 0.01).sum())} of {seeds}", str(fewer),
                         f"{np.median(g) * 100:.2f}", f"{g.max() * 100:.2f}",
                         f"{np.median(c) * 100:.2f} [{c.max() * 100:.2f}]", f"{int((c <= 0.01).sum())} of {seeds}",
                         f"{statistics.median(secs) * 1e3:.0f}", f"{statistics.median(exact_s) * 1e3:.0f}"])
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    tables.save("typed-multigpu", columns=["jobs x servers", "solver", "within 1 % of the optimum", "fewer jobs admitted",
                                           "gap % (median)", "gap % (worst)", "certified gap % (median [worst])",
                                           "certified within 1 %", "ms (median)", "optimus-milp ms (median)"],
                rows=rows, seeds=list(range(100, 100 + seeds)),
                command="benchmarks/bench_typed.py --only multigpu (gavel family, --max-tasks 8, 4-GPU servers)")
    print(tables.render("typed-multigpu"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--only", choices=["latency", "latency-objectives", "scale", "multigpu", "erased"])
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    if args.only in (None, "latency"):
        latency(args.seeds, args.data_dir)
    if args.only in (None, "latency-objectives"):
        latency_objectives(args.seeds, args.data_dir)
    if args.only in (None, "scale"):
        scale(min(args.seeds, 3), args.data_dir)
    if args.only in (None, "multigpu"):
        multigpu(4 * args.seeds, args.data_dir)
    if args.only in (None, "erased"):
        erased(min(args.seeds, 3), args.data_dir)


if __name__ == "__main__":
    main()
