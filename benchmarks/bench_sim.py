"""Simulation benchmark and experiments (issue 6). Stores each table as benchmarks/results/sim-*.json
(docs/benchmarks.md renders them: benchmarks/tables.py) and prints them.

    .venv/bin/python benchmarks/bench_sim.py [--quick]

1. Scale: 1,000 jobs on 2,000 servers for 24 h with `optimus-greedy` (target under 60 s).
2. The Optimus comparison (Fig. 11 shape): optimus-greedy vs drf vs tetris (and fifo,
   srtf) on the Optimus synthetic workload, median and worst over 5 seeds.
3. Prediction-error sensitivity (Fig. 15 shape).
4. Exact allocation per interval (optimus-milp) vs the greedy, online.
"""

from __future__ import annotations

import statistics
import sys
import time

import tables  # benchmarks/tables.py, next to this file (run as a script)
from schedopt.generate import generate_instance
from schedopt.sim import simulate

SCHEDULERS = ["optimus-greedy", "drf", "tetris", "fifo", "srtf"]


def _mw(xs: list[float], fmt: str = ".2f", worst: str = "max") -> str:
    """median [worst] of ``xs`` (worst: the largest, or the smallest with worst='min')."""
    w = max(xs) if worst == "max" else min(xs)
    return f"{statistics.median(xs):{fmt}} [{w:{fmt}}]"


def scale(suffix: str) -> None:
    wl = generate_instance("poisson", jobs=1000, servers=2000, seed=0, max_tasks=32)
    # 1,000 arrivals in 24 h: Poisson at 1000/144 per 600-s interval
    import numpy as np

    rng = np.random.default_rng(0)
    arrivals = np.sort(rng.uniform(0, 86400, len(wl.jobs)))
    wl = wl.model_copy(update={"jobs": [j.model_copy(update={"arrival": float(a)}) for j, a in zip(wl.jobs, arrivals)]})
    t0 = time.perf_counter()
    r = simulate(wl, "optimus-greedy", horizon_s=86400)
    sec = time.perf_counter() - t0
    tables.save("sim-scale" + suffix, columns=["wall seconds", "intervals", "scheduler seconds", "finished in 24 h",
                                              "avg JCT of finished (h)"],
                rows=[[f"{sec:.1f}", str(r.plans), f"{r.scheduler_seconds:.1f}", f"{r.finished} of 1,000",
                       f"{(r.avg_jct_s or 0) / 3600:.2f}"]], command="benchmarks/bench_sim.py", seeds=[0],
                notes=["`generate poisson --jobs 1000 --servers 2000 --seed 0 --max-tasks 32`, arrivals uniform over 24 h; "
                       "one workload: a scale measurement, not a comparison"])
    print(tables.render("sim-scale" + suffix))


def comparison(seeds: int, jobs: int, servers: int, suffix: str) -> None:
    rows: dict[str, dict[str, list[float]]] = {s: {"jct": [], "mk": [], "ov": []} for s in SCHEDULERS}
    for seed in range(seeds):
        wl = generate_instance("optimus-workload", jobs=jobs, servers=servers, seed=seed, max_tasks=16)
        for s in SCHEDULERS:
            r = simulate(wl, s, seed=seed)
            rows[s]["jct"].append(r.avg_jct_s or float("nan"))
            rows[s]["mk"].append(r.makespan_s or float("nan"))
            rows[s]["ov"].append(r.scaling_overhead_share)
    drf = rows["drf"]
    table = []
    for s, r in rows.items():
        table.append([f"`{s}`", _mw([x / 3600 for x in r["jct"]]), _mw([x / 3600 for x in r["mk"]]),
                      _mw([a / b for a, b in zip(r["jct"], drf["jct"])]), _mw([a / b for a, b in zip(r["mk"], drf["mk"])]),
                      f"{statistics.median(r['ov']):.1%}"])
    name = f"sim-compare-{servers}" + suffix
    tables.save(name, columns=["scheduler", "avg JCT (h)", "makespan (h)", "JCT ÷ DRF's", "makespan ÷ DRF's",
                               "restart overhead share"],
                rows=table, command="benchmarks/bench_sim.py", seeds=list(range(seeds)),
                notes=[f"`generate optimus-workload --jobs {jobs} --servers {servers} --max-tasks 16 --seed N`, 600-s "
                       "interval, 60-s restart; median [worst] over the seeds, ratios taken per seed (lower is better)",
                       "Optimus reports DRF's average JCT 2.39× and makespan 1.63× Optimus's (the ratios here are the "
                       "inverse view: ours ÷ DRF's)"])
    print(tables.render(name))


def errors(seeds: int, jobs: int, servers: int, suffix: str) -> None:
    levels = [0.0, 0.1, 0.2, 0.3, 0.5]
    runs: dict[tuple[float, str], tuple[list[float], list[float]]] = {}
    for e in levels:
        for seed in range(seeds):
            wl = generate_instance("optimus-workload", jobs=jobs, servers=servers, seed=100 + seed, max_tasks=16)
            for kind in ("steps", "speed"):
                r = simulate(wl, "optimus-greedy", seed=seed, error_steps=e if kind == "steps" else 0.0,
                             error_speed=e if kind == "speed" else 0.0)
                jct, mk = runs.setdefault((e, kind), ([], []))
                jct.append(r.avg_jct_s)
                mk.append(r.makespan_s)
    table = []
    for e in levels:
        cells = []
        for kind in ("steps", "speed"):
            for i in (0, 1):
                cells.append(_mw([a / b for a, b in zip(runs[e, kind][i], runs[0.0, kind][i])], ".3f"))
        table.append([f"{e:.0%}", cells[0], cells[1], cells[2], cells[3]])
    name = f"sim-errors-{servers}" + suffix
    tables.save(name, columns=["error e", "avg JCT, steps error (× e=0)", "makespan, steps error", "avg JCT, speed error",
                               "makespan, speed error"],
                rows=table, command="benchmarks/bench_sim.py", seeds=list(range(100, 100 + seeds)),
                notes=[f"`optimus-greedy`, `optimus-workload` {jobs} jobs on {servers} servers; each seed's run with error e "
                       "over the same seed's run without; median [worst] over the seeds"])
    print(tables.render(name))


def exact_online(seeds: int, jobs: int, servers: int, suffix: str) -> None:
    cols: dict[str, dict[str, list[float]]] = {}
    for s in ("optimus-greedy", "optimus-milp"):
        for seed in range(seeds):
            wl = generate_instance("optimus-workload", jobs=jobs, servers=servers, seed=200 + seed, max_tasks=16)
            r = simulate(wl, s, seed=seed)
            c = cols.setdefault(s, {"jct": [], "mk": [], "sec": []})
            c["jct"].append(r.avg_jct_s / 3600)
            c["mk"].append(r.makespan_s / 3600)
            c["sec"].append(r.scheduler_seconds)
    g = cols["optimus-greedy"]
    table = [[f"`{s}`", _mw(c["jct"], ".3f"), _mw(c["mk"], ".3f"), _mw([a / b for a, b in zip(c["jct"], g["jct"])], ".3f"),
              _mw(c["sec"], ".1f")] for s, c in cols.items()]
    name = f"sim-exact-{servers}" + suffix
    tables.save(name, columns=["scheduler", "avg JCT (h)", "makespan (h)", "JCT ÷ greedy's", "scheduler seconds (total)"],
                rows=table, command="benchmarks/bench_sim.py", seeds=list(range(200, 200 + seeds)),
                notes=[f"`optimus-workload` {jobs} jobs on {servers} servers; median [worst] over the seeds"])
    print(tables.render(name))


def main() -> None:
    quick = "--quick" in sys.argv
    suffix = "-quick" if quick else ""
    if not quick:
        scale(suffix)
    for servers in (13, 39):  # the paper's testbed size, and three times it (less contention)
        comparison(2 if quick else 5, 30, servers, suffix)
        errors(1 if quick else 5, 30, servers, suffix)
        exact_online(1 if quick else 5, 30, servers, suffix)


if __name__ == "__main__":
    main()
