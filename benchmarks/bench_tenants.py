"""Tenants and quotas (issue 39 §5): the Philly trace's virtual clusters as Kueue queues.
Prints markdown and stores benchmarks/results/tenants-sim.json and tenants-snapshots.json
(docs/benchmarks.md renders them), and draws docs/figures/tenants_jct.png.

    .venv/bin/python benchmarks/bench_tenants.py [--data-dir ../shared/data] [--only sim|snapshots|figure]

- sim: `philly-tenants` workloads (60 jobs: 15 of each of the 4 busiest virtual clusters, rigid
  GPU counts, V100/K80 servers, quotas by GPU-time share in one cohort), simulated at arrival rates
  × 1, 2 and 4 under `kueue-admission`, `optimus-greedy` and `optimus-milp` (an exact allocation
  every round), with the cohort's borrowing and without it (each queue alone at its nominal quota):
  average JCT, GPU utilisation and each queue's share of its nominal quota while it has demand.
- snapshots: 1,000 jobs at once in 4 queues (`philly-tenants` on 72 servers; `optimus`'s elastic
  jobs on 2,000 servers with 4 queues of 40/30/20/10 % of each resource): the heuristics' certified
  gaps and the exact solvers' time with the quotas (cohort borrowing; no borrowing) and without them.
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


def _without_borrowing(inst: schedopt.Instance) -> schedopt.Instance:
    doc = inst.to_dict()
    for q in doc["queues"]:
        q.pop("cohort", None)
    doc["name"] = inst.name + "-no-borrowing"
    return schedopt.Instance.from_dict(doc)


#: the elastic snapshots' 4 queues: their share of every resource, jobs dealt to them in turn
SHARES = (0.4, 0.3, 0.2, 0.1)


def _with_queues(inst: schedopt.Instance) -> schedopt.Instance:
    """``inst`` with 4 queues in one cohort, nominal quotas 40/30/20/10 % of each resource, jobs dealt in turn."""
    doc = inst.to_dict()
    cap = {r: sum(s.count * s.capacity.get(r, 0.0) for s in inst.servers) for r in inst.resources}
    for k, job in enumerate(doc["jobs"]):
        job["queue"] = f"q{k % len(SHARES)}"
    doc["queues"] = [{"name": f"q{k}", "cohort": "all",
                      "quotas": {"default-flavor": {r: {"nominal": round(share * c, 3)} for r, c in cap.items()}}}
                     for k, share in enumerate(SHARES)]
    doc["name"] = inst.name + "-queues"
    return schedopt.Instance.from_dict(doc)


SNAPSHOT_T_S = 30.0


def snapshots(jobs: int, seeds: int, data_dir: str) -> None:
    """The heuristics' certified gaps and the exact solvers' time with quotas (cohort borrowing, and each
    queue alone at its nominal quota) and without them, on 1,000 jobs at once."""
    columns = ["instance", "queues", "admitted / jobs", "greedy gap", "lagrange gap", "greedy s",
               "milp s", "cpsat s", "proven optimal"]
    settings = [("philly-tenants, 72 servers (576 GPUs, 2.0× asked)",
                 lambda seed: generate_instance("philly-tenants", jobs=jobs, servers=72, seed=seed, data_dir=data_dir)),
                ("optimus, 2,000 servers, 4 queues 40/30/20/10 %",
                 lambda seed: _with_queues(generate_instance("optimus", jobs=jobs, servers=2000, seed=seed)))]
    variants = [("none", _without_queues), ("cohort borrowing", lambda i: i), ("no borrowing", _without_borrowing)]
    rows = []
    schedopt.warm_up(["optimus-milp", "optimus-cpsat"])

    def med(xs: list[float]) -> str:
        return f"{statistics.median(xs):.2f} [{max(xs):.2f}]"

    def gaps(xs: list[float | None]) -> str:
        sure = [x for x in xs if x is not None]
        if len(sure) < len(xs):
            return f"{len(sure)}/{len(xs)} certified" + (f", median {statistics.median(sure):.2%}" if sure else "")
        return f"{statistics.median(sure):.2%} [{max(sure):.2%}]"

    for label, make in settings:
        cells: dict[str, dict[str, list]] = {v: {} for v, _ in variants}
        for seed in range(seeds):
            base = make(seed)
            for vname, vary in variants:
                inst = vary(base)
                c = cells[vname]
                t0 = time.perf_counter()
                g = schedopt.solve(inst, "optimus-greedy")
                c.setdefault("greedy s", []).append(time.perf_counter() - t0)
                lag = schedopt.solve(inst, "optimus-lagrange")
                for plan in (g, lag):
                    assert not schedopt.check(inst, plan)
                c.setdefault("greedy gap", []).append(g.objective.gap)
                c.setdefault("lagrange gap", []).append(lag.objective.gap)
                for solver in ("optimus-milp", "optimus-cpsat"):
                    t0 = time.perf_counter()
                    p = schedopt.solve(inst, solver, time_limit=SNAPSHOT_T_S, seed=0)
                    c.setdefault(solver, []).append(time.perf_counter() - t0)
                    c.setdefault("optimal", []).append(p.status == schedopt.Status.OPTIMAL)
                    assert not schedopt.check(inst, p)
                    if solver == "optimus-milp":
                        c.setdefault("admitted", []).append(str(p.objective.admitted))
                print(f"{label} seed {seed} {vname}: gaps {g.objective.gap} / {lag.objective.gap}, "
                      f"milp {c['optimus-milp'][-1]:.2f} s, cpsat {c['optimus-cpsat'][-1]:.2f} s", file=sys.stderr, flush=True)
        for vname, _ in variants:
            c = cells[vname]
            rows.append([label, vname, f"{'/'.join(c['admitted'])} of {jobs}", gaps(c["greedy gap"]), gaps(c["lagrange gap"]),
                         med(c["greedy s"]), med(c["optimus-milp"]), med(c["optimus-cpsat"]),
                         f"{sum(c['optimal'])}/{len(c['optimal'])}"])
    notes = [f"exact solvers at T = {SNAPSHOT_T_S:g} s in one warmed-up process; gap = certified (value - bound) / value "
             "('k/n certified': the others admit fewer jobs than the admission LP's bound allows, so no bound on "
             "Σ t is claimed); 'none': the same jobs with the queues removed; 'no borrowing': each queue alone at its "
             "nominal quota; median [worst] over seeds"]
    tables.save("tenants-snapshots", columns=columns, rows=rows, seeds=list(range(seeds)), notes=notes,
                command=f"benchmarks/bench_tenants.py --only snapshots ({jobs} jobs)")
    print(tables.render("tenants-snapshots"))


def figure(out: Path) -> None:
    """Average JCT by arrival rate, from the stored results (benchmarks/results/tenants-sim.json)."""
    from schedopt.plots import pyplot

    doc = json.loads((tables.RESULTS / "tenants-sim.json").read_text())
    loads = [float(c.rsplit(" ", 1)[-1]) for c in doc["columns"] if c.startswith("avg JCT")]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    style = {name: (f"C{k}", m) for k, (name, m) in enumerate(zip(SCHEDULERS, ["o", "s", "^"]))}
    for row in doc["rows"]:
        name, borrowing = row[0].strip("`"), row[1] == "yes"
        ys = [float(cell.split()[0]) for cell in row[2:2 + len(loads)]]  # "median [worst]"
        color, marker = style[name]
        ax.plot(loads, ys, marker=marker, color=color, linestyle="-" if borrowing else "--",
                markerfacecolor=color if borrowing else "none",
                label=f"{name}, {'cohort borrowing' if borrowing else 'no borrowing'}")
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
    ap.add_argument("--seeds", type=int, default=5, help="seeds per cell (issue 38 §3: at least 5)")
    ap.add_argument("--only", choices=["sim", "snapshots", "figure"])
    args = ap.parse_args()
    if args.only in (None, "sim"):
        simulations(args.seeds, args.data_dir)
    if args.only in (None, "sim", "figure"):
        figure(ROOT / "docs" / "figures" / "tenants_jct.png")
    if args.only in (None, "snapshots"):
        snapshots(1000, args.seeds, args.data_dir)


if __name__ == "__main__":
    main()
