"""Placement and PS assignment change speed in simulation (issue 16 §2): the
same ``optimus-colocated`` workloads (Optimus jobs on identical servers where a
PS can share a server with workers; ResNet-50 and Inception-BN with their
measured parameter blocks) simulated with each placement and PS assignment,
communication-aware. Needs ../shared/data (the parameter blocks). Prints
markdown for docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_comm.py [--quick]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from schedopt.generate import generate_instance  # noqa: E402
from schedopt.sim import simulate  # noqa: E402

JOBS, SERVERS = 30, 13
CELLS = [
    # (allocation, placement, ps-assignment, communication-aware)
    ("optimus-greedy", None, None, True),
    ("optimus-greedy", "optimus-placement", None, False),
    ("optimus-greedy", "optimus-placement", None, True),
    ("optimus-greedy", "kube-default", None, True),
    ("optimus-greedy", "dltap", None, True),
    ("optimus-greedy", "optimus-placement", "paa", True),
    ("optimus-greedy", "optimus-placement", "mxnet-default", True),
    ("optimus-greedy", "kube-default", "mxnet-default", True),
    ("drf", "optimus-placement", "paa", True),
    ("drf", "kube-default", "mxnet-default", True),
]


def main(seeds: int) -> None:
    print(f"`optimus-colocated`, {JOBS} jobs, {SERVERS} servers, interval 600 s, restart 60 s, seeds 0..{seeds - 1}; "
          "ratios are to `optimus-greedy+optimus-placement` with `paa`, communication-aware, per seed then averaged.\n")
    print("| allocation | placement | PS assignment | speed model | avg JCT (h) | makespan (h) | JCT ratio | makespan ratio | mean φ |")
    print("|---|---|---|---|---|---|---|---|---|")
    runs: dict[tuple, list] = {}
    for seed in range(seeds):
        wl = generate_instance("optimus-colocated", jobs=JOBS, servers=SERVERS, seed=seed, max_tasks=16)
        for cell in CELLS:
            alloc, place, psa, aware = cell
            runs.setdefault(cell, []).append(simulate(wl, alloc, placement=place, ps_assignment=psa,
                                                      communication_aware=aware, seed=seed))
    ref = runs[("optimus-greedy", "optimus-placement", "paa", True)]
    for cell, rs in runs.items():
        alloc, place, psa, aware = cell
        jct = statistics.mean(r.avg_jct_s for r in rs)
        mk = statistics.mean(r.makespan_s for r in rs)
        rj = statistics.mean(r.avg_jct_s / b.avg_jct_s for r, b in zip(rs, ref))
        rm = statistics.mean(r.makespan_s / b.makespan_s for r, b in zip(rs, ref))
        phis = [r.mean_transfer_share for r in rs if r.mean_transfer_share is not None]
        phi = f"{statistics.mean(phis):.2f}" if phis else "—"
        print(f"| `{alloc}` | {f'`{place}`' if place else '—'} | {f'`{psa}`' if psa else 'even'} | "
              f"{'aware' if aware else 'blind'} | {jct / 3600:.3f} | {mk / 3600:.2f} | {rj:.3f} | {rm:.3f} | {phi} |", flush=True)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main(seeds=1 if "--quick" in sys.argv else 5)
    print(f"\n({time.perf_counter() - t0:.0f} s)")
