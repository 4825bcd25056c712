"""Placement and PS assignment change speed in simulation (issue 16 §2): the
same ``optimus-colocated`` workloads (Optimus jobs on identical servers where a
PS can share a server with workers; ResNet-50 and Inception-BN with their
measured parameter blocks) simulated with each placement and PS assignment,
communication-aware. Needs ../shared/data (the parameter blocks). Stores
benchmarks/results/placement-sim.json (docs/benchmarks.md renders it).

    .venv/bin/python benchmarks/bench_comm.py [--quick] [--pays]

``--pays`` (issue 51 §4): where placement pays, the communication-heavy jobs alone, each
placement's JCT over five seeds (stored as benchmarks/results/placement-pays.json).
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
    table = []
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
        table.append([f"`{alloc}`", f"`{place}`" if place else "—", f"`{psa}`" if psa else "even",
                      "aware" if aware else "blind", f"{jct / 3600:.3f}", f"{mk / 3600:.2f}", f"{rj:.3f}", f"{rm:.3f}", phi])
    tables.save("placement-sim", columns=["allocation", "placement", "PS assignment", "speed model", "avg JCT (h)",
                                          "makespan (h)", "JCT ratio", "makespan ratio", "mean φ"],
                rows=table, command="benchmarks/bench_comm.py" + (" --quick" if seeds < 5 else ""),
                seeds=list(range(seeds)),
                notes=[f"`optimus-colocated`, {JOBS} jobs, {SERVERS} servers, interval 600 s, restart 60 s; ratios are to "
                       "`optimus-greedy+optimus-placement` with `paa`, communication-aware, per seed then averaged"])
    print(tables.render("placement-sim"))


#: the communication-heavy models (a transfer share of the step of 7-40 % at (4, 4), Table 2's coefficients)
HEAVY = ("deepspeech2", "resnet50", "inception-bn")
PAYS = [None, "kube-default", "optimus-placement", "placement-lagrange"]


def heavy_workload(seed: int, jobs: int = JOBS) -> "object":
    """``optimus-colocated`` kept to its communication-heavy jobs: the first ``jobs`` of a larger draw
    whose model is one of :data:`HEAVY`, arrivals as drawn."""
    from schedopt.instance import Instance

    doc = generate_instance("optimus-colocated", jobs=jobs * 6, servers=SERVERS, seed=seed, max_tasks=16).to_dict()
    doc["jobs"] = [j for j in doc["jobs"] if j.get("model") in HEAVY][:jobs]
    doc["name"] = f"colocated-heavy-{seed}"
    return Instance.from_dict(doc)


def where_placement_pays(seeds: int) -> None:
    """Issue 51 §4: on communication-heavy PS jobs on co-located servers, the JCT each placement
    gives under the same allocation solver (communication-aware, PAA), over seeds."""

    runs: dict[str | None, list] = {p: [] for p in PAYS}
    for seed in range(seeds):
        wl = heavy_workload(seed)
        for place in PAYS:
            runs[place].append(simulate(wl, "optimus-greedy", placement=place, ps_assignment="paa" if place else None,
                                        seed=seed))
        print(f"  seed {seed}: " + ", ".join(f"{p}: {runs[p][-1].avg_jct_s / 3600:.3f} h" for p in PAYS),
              file=sys.stderr, flush=True)
    ref = runs["kube-default"]
    rows = []
    for place, rs in runs.items():
        ratios = [r.avg_jct_s / b.avg_jct_s for r, b in zip(rs, ref)]
        phis = [r.mean_transfer_share for r in rs if r.mean_transfer_share is not None]
        rows.append([f"`{place}`" if place else "none (all-remote transfers)",
                     f"{statistics.median(r.avg_jct_s for r in rs) / 3600:.3f}",
                     f"{statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]",
                     f"{statistics.mean(phis):.2f}" if phis else "1.00"])
    tables.save("placement-pays", columns=["placement", "avg JCT median (h)", "JCT ÷ kube-default's, median [range]",
                                           "mean φ (transfer share kept)"],
                rows=rows, seeds=list(range(seeds)), command="benchmarks/bench_comm.py --pays",
                notes=[f"`optimus-colocated` kept to its communication-heavy jobs ({', '.join(HEAVY)}): the first {JOBS} "
                       f"of each draw, {SERVERS} servers; allocation `optimus-greedy`, PS assignment `paa` with a "
                       "placement; interval 600 s, restart 60 s, communication-aware; one run per seed"])
    print(tables.render("placement-pays"))


if __name__ == "__main__":
    t0 = time.perf_counter()
    if "--pays" in sys.argv:
        where_placement_pays(seeds=2 if "--quick" in sys.argv else 5)
    else:
        main(seeds=1 if "--quick" in sys.argv else 5)
    print(f"\n({time.perf_counter() - t0:.0f} s)")
