"""Restart only when it pays (issue 15 §1): the same workloads simulated with the
scheduler blind to restarts (Optimus eq. 5-6 as printed) and aware of them (the
reconfiguration cost: running counts and ρ = the simulator's restart overhead;
with a placement solver also the running placement, kept unless a task must move).
Stores benchmarks/results/reconfiguration.json (docs/benchmarks.md renders it).

    .venv/bin/python benchmarks/bench_reconfiguration.py [--quick]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tables  # noqa: E402  (benchmarks/tables.py, next to this file)
from schedopt.generate import generate_instance  # noqa: E402
from schedopt.sim import simulate  # noqa: E402

SETTINGS = [
    # (family, jobs, servers, interval s, restart overhead s)
    ("optimus-workload", 60, 12, 60.0, 30.0),
    ("optimus-workload", 60, 12, 600.0, 60.0),
    ("poisson", 100, 16, 60.0, 30.0),
]


def main(seeds: int) -> None:
    table = []
    for family, jobs, servers, interval, overhead in SETTINGS:
        for scheduler in ("optimus-greedy", "optimus-milp", "optimus-greedy+optimus-placement", "optimus-greedy+dltap"):
            alloc, _, place = scheduler.partition("+")
            rows: dict[bool, dict[str, list[float]]] = {b: {"jct": [], "restarts": [], "ov": []} for b in (False, True)}
            for seed in range(seeds):
                wl = generate_instance(family, jobs=jobs, servers=servers, seed=seed, max_tasks=16)
                for aware in (False, True):
                    r = simulate(wl, alloc, placement=place or None, interval_s=interval, restart_overhead_s=overhead,
                                 restart_aware=aware, seed=seed)
                    rows[aware]["jct"].append(r.avg_jct_s or float("nan"))
                    rows[aware]["restarts"].append(r.restarts)
                    rows[aware]["ov"].append(r.scaling_overhead_share)
            m = {b: {k: statistics.mean(v) for k, v in rows[b].items()} for b in (False, True)}
            table.append([f"`{family}` {jobs} jobs / {servers} servers", f"{interval:g} / {overhead:g}", f"`{scheduler}`",
                          f"{m[False]['jct'] / 3600:.3f}", f"{m[True]['jct'] / 3600:.3f}",
                          f"{m[True]['jct'] / m[False]['jct'] - 1:+.1%}", f"{m[False]['restarts']:.0f}",
                          f"{m[True]['restarts']:.0f}", f"{m[True]['restarts'] / max(m[False]['restarts'], 1) - 1:+.1%}",
                          f"{m[False]['ov']:.1%} / {m[True]['ov']:.1%}"])
    tables.save("reconfiguration", columns=["workload", "interval / restart (s)", "scheduler", "avg JCT (h), blind", "aware",
                                            "JCT change", "restarts, blind", "aware", "restarts change",
                                            "overhead share blind / aware"],
                rows=table, command="benchmarks/bench_reconfiguration.py" + (" --quick" if seeds == 1 else ""),
                seeds=list(range(seeds)), notes=["means over the seeds; blind: `--restart-blind`, aware: the default"])
    print(tables.render("reconfiguration"))


if __name__ == "__main__":
    t0 = time.perf_counter()
    main(seeds=1 if "--quick" in sys.argv else 2)
    print(f"({time.perf_counter() - t0:.0f} s)")
