"""Tenants and quotas (issue 39 §5): the Philly trace's virtual clusters as Kueue queues.
Prints markdown and stores benchmarks/results/tenants-sim.json and tenants-snapshots.json
(docs/benchmarks.md renders them), and draws docs/figures/tenants_jct.png.

    .venv/bin/python benchmarks/bench_tenants.py [--data-dir ../shared/data] [--only sim|snapshots|figure]

- sim: `philly-tenants` workloads (60 jobs: 15 of each of the 4 busiest virtual clusters, rigid
  GPU counts, V100/K80 servers, quotas by GPU-time share in one cohort), simulated at arrival rates
  × 1, 2 and 4 under `kueue-admission`, `optimus-greedy` and `optimus-milp` (an exact allocation
  every round), with the cohort's borrowing and without it (each queue alone at its nominal quota):
  average JCT, GPU utilisation and each queue's share of its nominal quota while it has demand.
- snapshots: 1,000 `philly-tenants` jobs at once in 4 queues on 50-100 servers: the greedy's
  certified gap with quotas, and the exact solvers' time with the quotas and without them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
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


def simulations(seeds: int, data_dir: str) -> None:
    jobs, servers = 60, 4
    jct: dict[tuple[str, bool, float], list[float]] = {}
    util: dict[tuple[str, bool, float], list[float]] = {}
    share: dict[tuple[str, bool, float], list[float]] = {}  # the worst queue's mean share, per seed
    below: dict[tuple[str, bool, float], list[float]] = {}  # intervals any queue is below its share, per seed
    for seed in range(seeds):
        base = generate_instance("philly-tenants", jobs=jobs, servers=servers, seed=seed, data_dir=data_dir)
        for load in LOADS:
            for borrowing in (True, False):
                wl = _variant(base, load, borrowing)
                for s in SCHEDULERS:
                    r = simulate(wl, s, seed=seed, interval_s=INTERVAL_S)
                    assert r.finished == len(wl.jobs), (s, load, borrowing, seed, r.finished)
                    key = (s, borrowing, load)
                    jct.setdefault(key, []).append(r.avg_jct_s / 3600)
                    util.setdefault(key, []).append(r.avg_utilization.get("gpu", 0.0))
                    share.setdefault(key, []).append(min(r.queue_share.values()))
                    below.setdefault(key, []).append(max(r.queue_below_share.values()))
                    print(f"seed {seed} load {load} borrowing {borrowing} {s}: {r.avg_jct_s / 3600:.2f} h, "
                          f"worst queue share {min(r.queue_share.values()):.3f}", file=sys.stderr, flush=True)
    columns = (["scheduler", "cohort borrowing"] + [f"avg JCT (h), load {x}" for x in LOADS]
               + [f"GPU utilisation, load {x}" for x in LOADS]
               + [f"worst queue's share of nominal, load {x}" for x in LOADS])
    rows = []
    for borrowing in (True, False):
        for s in SCHEDULERS:
            cells = [f"{statistics.median(jct[s, borrowing, x]):.2f} [{max(jct[s, borrowing, x]):.2f}]" for x in LOADS]
            cells += [f"{statistics.median(util[s, borrowing, x]):.0%}" for x in LOADS]
            cells += [f"{statistics.median(share[s, borrowing, x]):.1%} ({statistics.median(below[s, borrowing, x]):.0%})"
                      for x in LOADS]
            rows.append([f"`{s}`", "yes" if borrowing else "no", *cells])
    notes = []
    for x in LOADS:
        ratio = [m / k for k, m in zip(jct["kueue-admission", True, x], jct["optimus-milp", True, x])]
        notes.append(f"load {x}, with borrowing: optimus-milp ÷ kueue-admission average JCT, median {statistics.median(ratio):.2f} "
                     f"(seeds: {', '.join(f'{v:.2f}' for v in ratio)})")
    notes.append("worst queue's share of nominal: per run, the lowest over queues of the mean, over intervals the queue has "
                 "demand, of min(1, GPUs it got / min(GPUs it asks, its nominal GPU quota)); in brackets the most intervals, "
                 "as a share, that one queue got less (median over seeds)")
    tables.save("tenants-sim", columns=columns, rows=rows, seeds=list(range(seeds)), notes=notes,
                command=f"benchmarks/bench_tenants.py --only sim ({jobs} jobs, {servers} servers, loads {LOADS}, {INTERVAL_S:.0f}-s rounds)")
    print(tables.render("tenants-sim"))


def _without_queues(inst: schedopt.Instance) -> schedopt.Instance:
    doc = inst.to_dict()
    doc.pop("queues", None)
    for job in doc["jobs"]:
        job.pop("queue", None)
    doc["name"] = inst.name + "-no-queues"
    return schedopt.Instance.from_dict(doc)


def snapshots(jobs: int, servers_list: list[int], seeds: int, data_dir: str) -> None:
    """The greedy's certified gap with quotas, and the exact solvers' time with and without them."""
    columns = ["servers (GPUs)", "GPUs asked / GPUs", "admitted / jobs", "greedy gap", "greedy s",
               "milp s, quotas", "milp s, none", "cpsat s, quotas", "cpsat s, none", "all optimal"]
    rows = []
    schedopt.warm_up(["optimus-milp", "optimus-cpsat"])
    for servers in servers_list:
        gaps, gs, mq, mn, cq, cn, adm, load = [], [], [], [], [], [], [], []
        optimal = True
        for seed in range(seeds):
            inst = generate_instance("philly-tenants", jobs=jobs, servers=servers, seed=seed, data_dir=data_dir)
            assert inst.queues is not None and len(inst.queues) == 4
            bare = _without_queues(inst)
            asked = sum(r.max_count * r.demand.get("gpu", 0.0) for j in inst.jobs for r in j.roles.values())
            load.append(asked / sum(s.count * s.capacity.get("gpu", 0.0) for s in inst.servers))
            t0 = time.perf_counter()
            g = schedopt.solve(inst, "optimus-greedy")
            gs.append(time.perf_counter() - t0)
            assert not schedopt.check(inst, g)
            gaps.append(g.objective.gap if g.objective.gap is not None else float("nan"))
            for solver, with_q, without in (("optimus-milp", mq, mn), ("optimus-cpsat", cq, cn)):
                for which, out in ((inst, with_q), (bare, without)):
                    t0 = time.perf_counter()
                    p = schedopt.solve(which, solver, time_limit=60, seed=0)
                    out.append(time.perf_counter() - t0)
                    optimal &= p.status == schedopt.Status.OPTIMAL
                    assert not schedopt.check(which, p)
                    if which is inst and solver == "optimus-milp":
                        adm.append(str(p.objective.admitted))
            print(f"servers {servers} seed {seed}: greedy gap {gaps[-1]:.3%}, milp {mq[-1]:.2f}/{mn[-1]:.2f} s, "
                  f"cpsat {cq[-1]:.2f}/{cn[-1]:.2f} s", file=sys.stderr, flush=True)

        def med(xs: list[float]) -> str:
            return f"{statistics.median(xs):.2f} [{max(xs):.2f}]"
        gap_cell = (f"{statistics.median(gaps):.2%} [{max(gaps):.2%}]" if all(x == x for x in gaps)
                    else f"{sum(x == x for x in gaps)}/{len(gaps)} certified")
        rows.append([f"{servers} ({servers * 8})", f"{statistics.median(load):.2f}", f"{'/'.join(adm)} of {jobs}", gap_cell,
                     med(gs), med(mq), med(mn), med(cq), med(cn), "yes" if optimal else "no"])
    notes = ["exact solvers at T = 60 s in one warmed-up process; gap = certified (value - bound) / value; "
             "'none': the same instance with its queues removed; median [worst] over seeds"]
    tables.save("tenants-snapshots", columns=columns, rows=rows, seeds=list(range(seeds)), notes=notes,
                command=f"benchmarks/bench_tenants.py --only snapshots ({jobs} jobs, 4 queues, servers {servers_list})")
    print(tables.render("tenants-snapshots"))


def figure(out: Path) -> None:
    """Average JCT by arrival rate, from the stored results (benchmarks/results/tenants-sim.json)."""
    from schedopt.plots import pyplot

    doc = json.loads((tables.RESULTS / "tenants-sim.json").read_text())
    loads = [float(c.rsplit(" ", 1)[-1]) for c in doc["columns"] if c.startswith("avg JCT")]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for row, m in zip(doc["rows"], ["o", "s", "^", "o", "s", "^"]):
        borrowing = row[1] == "yes"
        ys = [float(cell.split()[0]) for cell in row[2:2 + len(loads)]]  # "median [worst]"
        ax.plot(loads, ys, marker=m, linestyle="-" if borrowing else "--",
                label=f"{row[0].strip('`')}, {'cohort borrowing' if borrowing else 'no borrowing'}")
    ax.set_xlabel("arrival rate (× the Philly trace's)")
    ax.set_ylabel("average JCT (h), median over seeds")
    ax.set_ylim(bottom=0)
    seeds = doc.get("seeds") or []
    ax.set_title("philly-tenants: 60 jobs, 4 queues, 32 V100/K80 GPUs" + (f", seeds {seeds[0]}-{seeds[-1]}" if seeds else ""),
                 fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--only", choices=["sim", "snapshots", "figure"])
    args = ap.parse_args()
    if args.only in (None, "sim"):
        simulations(args.seeds, args.data_dir)
    if args.only in (None, "sim", "figure"):
        figure(ROOT / "docs" / "figures" / "tenants_jct.png")
    if args.only in (None, "snapshots"):
        snapshots(1000, [50, 72, 100], args.seeds, args.data_dir)


if __name__ == "__main__":
    main()
