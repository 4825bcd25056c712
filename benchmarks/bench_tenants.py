"""Tenants and quotas (issue 39 §5): the Philly trace's virtual clusters as Kueue queues.
Prints markdown and stores benchmarks/results/tenants-sim.json (docs/benchmarks.md renders it).

    .venv/bin/python benchmarks/bench_tenants.py [--data-dir ../shared/data]

`philly-tenants` workloads (60 jobs: 15 of each of the 4 busiest virtual clusters, rigid GPU
counts, V100/K80 servers, quotas by GPU-time share in one cohort), simulated at arrival rates
× 1, 2 and 4 under `kueue-admission`, `optimus-greedy` and `optimus-milp` (an exact allocation
every round), with the cohort's borrowing and without it (each queue alone at its nominal quota).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import schedopt  # noqa: E402
from benchmarks import tables  # noqa: E402
from schedopt.generate import generate_instance  # noqa: E402
from schedopt.sim import simulate  # noqa: E402

SCHEDULERS = ["kueue-admission", "optimus-greedy", "optimus-milp"]
LOADS = [1.0, 2.0, 4.0]
INTERVAL_S = 1800.0


def _variant(inst: schedopt.Instance, load: float, borrowing: bool) -> schedopt.Instance:
    doc = inst.to_dict()
    for job in doc["jobs"]:
        job["arrival"] = job["arrival"] / load
    if not borrowing:
        for q in doc["queues"]:
            q.pop("cohort", None)
    return schedopt.Instance.from_dict(doc)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    jobs, servers = 60, 4
    jct: dict[tuple[str, bool, float], list[float]] = {}
    util: dict[tuple[str, bool, float], list[float]] = {}
    for seed in range(args.seeds):
        base = generate_instance("philly-tenants", jobs=jobs, servers=servers, seed=seed, data_dir=args.data_dir)
        for load in LOADS:
            for borrowing in (True, False):
                wl = _variant(base, load, borrowing)
                for s in SCHEDULERS:
                    r = simulate(wl, s, seed=seed, interval_s=INTERVAL_S)
                    assert r.finished == len(wl.jobs), (s, load, borrowing, seed, r.finished)
                    jct.setdefault((s, borrowing, load), []).append(r.avg_jct_s / 3600)
                    util.setdefault((s, borrowing, load), []).append(r.avg_utilization.get("gpu", 0.0))
                    print(f"seed {seed} load {load} borrowing {borrowing} {s}: {r.avg_jct_s / 3600:.2f} h", file=sys.stderr, flush=True)
    columns = ["scheduler", "cohort borrowing"] + [f"avg JCT (h), load {x}" for x in LOADS] + [f"GPU utilisation, load {x}" for x in LOADS]
    rows = []
    for borrowing in (True, False):
        for s in SCHEDULERS:
            cells = [f"{statistics.median(jct[s, borrowing, x]):.2f} [{max(jct[s, borrowing, x]):.2f}]" for x in LOADS]
            cells += [f"{statistics.median(util[s, borrowing, x]):.0%}" for x in LOADS]
            rows.append([f"`{s}`", "yes" if borrowing else "no", *cells])
    notes = []
    for x in LOADS:
        ratio = [m / k for k, m in zip(jct["kueue-admission", True, x], jct["optimus-milp", True, x])]
        notes.append(f"load {x}, with borrowing: optimus-milp ÷ kueue-admission average JCT, median {statistics.median(ratio):.2f} "
                     f"(seeds: {', '.join(f'{v:.2f}' for v in ratio)})")
    tables.save("tenants-sim", columns=columns, rows=rows, seeds=list(range(args.seeds)), notes=notes,
                command=f"benchmarks/bench_tenants.py ({jobs} jobs, {servers} servers, loads {LOADS}, {INTERVAL_S:.0f}-s rounds)")
    print(tables.render("tenants-sim"))


if __name__ == "__main__":
    main()
