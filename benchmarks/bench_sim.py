"""Simulation benchmark and experiments (issue 6). Prints markdown for docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_sim.py [--quick]

1. Scale: 1,000 jobs on 2,000 servers for 24 h with `optimus-greedy` (target under 60 s).
2. The Optimus comparison (Fig. 11 shape): optimus-greedy vs drf vs tetris (and fifo,
   srtf) on the Optimus synthetic workload, means over seeds.
3. Prediction-error sensitivity (Fig. 15 shape).
4. Exact allocation per interval (optimus-milp) vs the greedy, online.
"""

from __future__ import annotations

import statistics
import sys
import time

from schedopt.generate import generate_instance
from schedopt.sim import simulate

SCHEDULERS = ["optimus-greedy", "drf", "tetris", "fifo", "srtf"]


def scale() -> None:
    wl = generate_instance("poisson", jobs=1000, servers=2000, seed=0, max_tasks=32)
    # 1,000 arrivals in 24 h: Poisson at 1000/144 per 600-s interval
    import numpy as np

    rng = np.random.default_rng(0)
    arrivals = np.sort(rng.uniform(0, 86400, len(wl.jobs)))
    wl = wl.model_copy(update={"jobs": [j.model_copy(update={"arrival": float(a)}) for j, a in zip(wl.jobs, arrivals)]})
    t0 = time.perf_counter()
    r = simulate(wl, "optimus-greedy", horizon_s=86400)
    sec = time.perf_counter() - t0
    print("### Scale: 1,000 jobs (arrivals uniform over 24 h), 2,000 servers, 24 h, `optimus-greedy`. Target: under 60 s.\n")
    print("| wall seconds | intervals | scheduler seconds | finished in 24 h | avg JCT of finished (h) |")
    print("|---|---|---|---|---|")
    print(f"| {sec:.1f} | {r.plans} | {r.scheduler_seconds:.1f} | {r.finished} of 1,000 | {(r.avg_jct_s or 0) / 3600:.2f} |\n")


def comparison(seeds: int, jobs: int, servers: int) -> dict[str, float]:
    print(f"### Optimus comparison: `optimus-workload`, {jobs} jobs on {servers} servers (6:7 GPU:CPU), "
          f"600-s interval, 60-s restart overhead, mean of {seeds} seeds\n")
    rows: dict[str, dict[str, list[float]]] = {s: {"jct": [], "mk": [], "ov": []} for s in SCHEDULERS}
    for seed in range(seeds):
        wl = generate_instance("optimus-workload", jobs=jobs, servers=servers, seed=seed, max_tasks=16)
        for s in SCHEDULERS:
            r = simulate(wl, s, seed=seed)
            rows[s]["jct"].append(r.avg_jct_s or float("nan"))
            rows[s]["mk"].append(r.makespan_s or float("nan"))
            rows[s]["ov"].append(r.scaling_overhead_share)
    base = {k: statistics.mean(rows["drf"][k]) for k in ("jct", "mk")}
    print("| scheduler | avg JCT (h) | makespan (h) | JCT ÷ DRF's | makespan ÷ DRF's | restart overhead share |")
    print("|---|---|---|---|---|---|")
    out = {}
    for s, r in rows.items():
        jct, mk = statistics.mean(r["jct"]), statistics.mean(r["mk"])
        out[s] = jct
        print(f"| `{s}` | {jct / 3600:.2f} | {mk / 3600:.2f} | {jct / base['jct']:.2f} | {mk / base['mk']:.2f} | "
              f"{statistics.mean(r['ov']):.1%} |")
    print("\nOptimus reports DRF's average JCT 2.39× and makespan 1.63× Optimus's (ratios above are the inverse view: "
          "ours ÷ DRF's).\n")
    return out


def errors(seeds: int, jobs: int, servers: int) -> None:
    print(f"### Prediction-error sensitivity (Fig. 15 shape): `optimus-greedy`, {jobs} jobs on {servers} servers, "
          f"mean of {seeds} seeds, relative to no error\n")
    levels = [0.0, 0.1, 0.2, 0.3, 0.5]
    base = {}
    print("| error e | avg JCT, steps error (× e=0) | makespan, steps error | avg JCT, speed error | makespan, speed error |")
    print("|---|---|---|---|---|")
    for e in levels:
        vals = {"steps": ([], []), "speed": ([], [])}
        for seed in range(seeds):
            wl = generate_instance("optimus-workload", jobs=jobs, servers=servers, seed=100 + seed, max_tasks=16)
            for kind in ("steps", "speed"):
                r = simulate(wl, "optimus-greedy", seed=seed, error_steps=e if kind == "steps" else 0.0,
                             error_speed=e if kind == "speed" else 0.0)
                vals[kind][0].append(r.avg_jct_s)
                vals[kind][1].append(r.makespan_s)
        m = {k: (statistics.mean(v[0]), statistics.mean(v[1])) for k, v in vals.items()}
        if e == 0.0:
            base = m
        print(f"| {e:.0%} | {m['steps'][0] / base['steps'][0]:.3f} | {m['steps'][1] / base['steps'][1]:.3f} | "
              f"{m['speed'][0] / base['speed'][0]:.3f} | {m['speed'][1] / base['speed'][1]:.3f} |")
    print()


def exact_online(seeds: int, jobs: int, servers: int) -> None:
    print(f"### Exact allocation every interval (`optimus-milp`) vs the greedy, online: {jobs} jobs on {servers} servers, "
          f"mean of {seeds} seeds\n")
    print("| scheduler | avg JCT (h) | makespan (h) | scheduler seconds (total) |")
    print("|---|---|---|---|")
    for s in ("optimus-greedy", "optimus-milp"):
        jct, mk, sec = [], [], []
        for seed in range(seeds):
            wl = generate_instance("optimus-workload", jobs=jobs, servers=servers, seed=200 + seed, max_tasks=16)
            r = simulate(wl, s, seed=seed)
            jct.append(r.avg_jct_s)
            mk.append(r.makespan_s)
            sec.append(r.scheduler_seconds)
        print(f"| `{s}` | {statistics.mean(jct) / 3600:.3f} | {statistics.mean(mk) / 3600:.3f} | {statistics.mean(sec):.1f} |")
    print()


def main() -> None:
    quick = "--quick" in sys.argv
    if not quick:
        scale()
    for servers in (13, 39):  # the paper's testbed size, and three times it (less contention)
        comparison(2 if quick else 5, 30, servers)
        errors(1 if quick else 5, 30, servers)
        exact_online(1 if quick else 3, 30, servers)


if __name__ == "__main__":
    main()
