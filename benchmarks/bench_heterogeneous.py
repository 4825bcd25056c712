"""Heterogeneous clusters (issue 34): Gavel's workload on K80/P100/V100 servers.
Prints markdown for docs/benchmarks.md and draws docs/figures/heterogeneous_jct.png.

    .venv/bin/python benchmarks/bench_heterogeneous.py [--quick] [--data-dir ../shared/data]

1. Simulation: the ``gavel`` family (rigid jobs, measured per-type speeds; 60 jobs on 36 GPUs) at three
   arrival rates (the family's rate × 1, 3, 6: 60 jobs do not reach steady state, so the higher rates make the contention), schedulers: type-aware
   optimus-greedy, the same greedy blind to types (first type with room),
   gavel-las, gavel-max-sum-throughput, gavel-finish-time-fairness. Median and
   worst over seeds of the average JCT and the makespan. (drf, tetris, fifo and
   srtf do not take typed clusters yet: they refuse them in one line.)
   ``--only spread``: the same on ``gavel-spread`` (Gavel's measured unconsolidated speeds for
   jobs spanning servers) against ``gavel``, per scheduler (issue 50 §5).
2. Snapshots: every job of a ``gavel`` instance at once (1,000 jobs), the greedy's
   certified gap and the exact solvers' time to a proof, typed and on the same jobs
   with the types erased (every server one type, every job at its V100 speed).
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
from schedopt.sim import simulate  # noqa: E402
from schedopt.sim.bounds import avg_jct_lower_bound_s, jct_lower_bounds_s  # noqa: E402

JCT = "jct_weighted_time"
SCHEDULERS = [("optimus-greedy", {}, "optimus-greedy (type-aware)"),
              ("optimus-greedy", {"accelerator_choice": "blind"}, "optimus-greedy, blind to types"),
              ("optimus-greedy", {"objective": JCT}, "optimus-greedy, average-JCT objective"),
              ("optimus-lagrange", {"objective": JCT}, "optimus-lagrange, average-JCT objective"),
              ("gavel-las", {}, "gavel-las"),
              ("gavel-max-sum-throughput", {}, "gavel-max-sum-throughput"),
              ("gavel-finish-time-fairness", {}, "gavel-finish-time-fairness")]
LOADS = [1.0, 3.0, 6.0]
#: stored results' name suffix: "-quick" for --quick runs, which the docs do not show
SUFFIX = ""
INTERVAL_S = 3600.0  # Gavel's rounds are 6 min; jobs run 0.5-167 h, so hour rounds keep runs short
RESTART_S = 60.0  # simulate()'s default restart overhead
BOUND = ("lower bound (schedopt/sim/bounds.py): each job alone on its best type from the first tick after it "
         "arrives, joined completion by completion with the pooled capacity run by SRPT")


def _loaded(inst: schedopt.Instance, load: float) -> schedopt.Instance:
    """Arrival times ÷ load (the sweeps' loads)."""
    jobs = [j.model_copy(update={"arrival": j.arrival / load}) for j in inst.jobs]
    return schedopt.Instance.from_dict({**inst.to_dict(), "jobs": [j.model_dump(mode="json", exclude_none=True) for j in jobs]})


def simulations(jobs: int, servers: int, seeds: int, data_dir: str, *, name: str = "heterogeneous-sim",
                skip: tuple[str, ...] = ()) -> dict[tuple[str, float], list[float]]:
    print(f"### Simulation: `gavel` family, {jobs} jobs on {servers} 4-GPU servers "
          f"({servers * 4 // 3} GPUs per type), {INTERVAL_S:.0f}-s rounds, 60-s restart, seeds 0-{seeds - 1}\n")
    print("Command: `.venv/bin/python benchmarks/bench_heterogeneous.py` (one run; median [worst] over seeds).\n")
    jct: dict[tuple[str, float], list[float]] = {}
    mk: dict[tuple[str, float], list[float]] = {}
    wall: dict[tuple[str, float], list[float]] = {}
    for load in LOADS:
        for seed in range(seeds):
            wl = _loaded(generate_instance("gavel", jobs=jobs, servers=servers, seed=seed, data_dir=data_dir), load)
            lb = jct_lower_bounds_s(wl, interval_s=INTERVAL_S, restart_overhead_s=RESTART_S)  # schedopt/sim/bounds.py
            jct.setdefault((BOUND, load), []).append(
                avg_jct_lower_bound_s(wl, interval_s=INTERVAL_S, restart_overhead_s=RESTART_S) / 3600)
            ends = [j.arrival + b for j, b in zip(wl.jobs, lb)]
            mk.setdefault((BOUND, load), []).append((max(ends) - min(j.arrival for j in wl.jobs)) / 3600)
            for solver, options, label in SCHEDULERS:
                if label in skip:
                    continue
                t0 = time.perf_counter()
                r = simulate(wl, solver, options=options, seed=seed, interval_s=INTERVAL_S, restart_overhead_s=RESTART_S)
                wall.setdefault((label, load), []).append(time.perf_counter() - t0)
                assert r.finished == len(wl.jobs), (label, load, seed, r.finished)
                jct.setdefault((label, load), []).append(r.avg_jct_s / 3600)
                mk.setdefault((label, load), []).append(r.makespan_s / 3600)
                print(f"  load {load} seed {seed} {label}: {r.avg_jct_s / 3600:.2f} h", file=sys.stderr, flush=True)
    columns = (["scheduler"] + [f"avg JCT (h), load {x}" for x in LOADS] + [f"makespan (h), load {x}" for x in LOADS]
               + ["sim s (median)"])
    rows = []
    for _, _, label in SCHEDULERS:
        if label in skip:
            continue
        cells = [f"{statistics.median(jct[label, x]):.2f} [{max(jct[label, x]):.2f}]" for x in LOADS]
        cells += [f"{statistics.median(mk[label, x]):.1f} [{max(mk[label, x]):.1f}]" for x in LOADS]
        rows.append([label, *cells, f"{statistics.median([s for x in LOADS for s in wall[label, x]]):.1f}"])
    rows.append([BOUND, *[f"{statistics.median(jct[BOUND, x]):.2f} [{max(jct[BOUND, x]):.2f}]" for x in LOADS],
                 *[f"{statistics.median(mk[BOUND, x]):.1f} [{max(mk[BOUND, x]):.1f}]" for x in LOADS], "—"])
    aware, blind = SCHEDULERS[0][2], SCHEDULERS[1][2]
    notes = []
    for x in (LOADS if blind not in skip else []):
        ratios = [b / a for a, b in zip(jct[aware, x], jct[blind, x])]
        notes.append(f"load {x}: blind ÷ type-aware average JCT, median {statistics.median(ratios):.2f}× "
                     f"(seeds: {', '.join(f'{r:.2f}' for r in ratios)})")
    for label in ("optimus-greedy, average-JCT objective", "optimus-lagrange, average-JCT objective"):
        for other in (aware, "gavel-las"):
            for x in LOADS:
                ratios = [a / b for a, b in zip(jct[label, x], jct[other, x])]
                notes.append(f"load {x}: {label} ÷ {other} average JCT, median {statistics.median(ratios):.2f}× "
                             f"(seeds: {', '.join(f'{r:.2f}' for r in ratios)}; ratio of medians "
                             f"{statistics.median(jct[label, x]) / statistics.median(jct[other, x]):.2f}×)")
    for other in (aware, "gavel-las"):
        for x in LOADS:
            ratios = [a / b for a, b in zip(jct[BOUND, x], jct[other, x])]
            notes.append(f"load {x}: the lower bound ÷ {other} average JCT (the least ratio any scheduler can reach), "
                         f"median {statistics.median(ratios):.2f}× (seeds: {', '.join(f'{r:.2f}' for r in ratios)})")
    name = name + SUFFIX
    tables.save(name, columns=columns, rows=rows, seeds=list(range(seeds)), notes=notes,
                command=f"benchmarks/bench_heterogeneous.py --only {'sim' if jobs == 60 else 'contended'} "
                        f"({jobs} jobs, {servers} servers, loads {LOADS})")
    print(tables.render(name))
    print()
    return jct


def spread_effect(jobs: int, servers: int, seeds: int, data_dir: str) -> None:
    """Issue 50 §5: the ``gavel-spread`` family (Gavel's measured unconsolidated speeds for jobs whose
    tasks span servers) against ``gavel`` (packed speeds throughout), same jobs and seeds, one run."""
    labels = [label for _, _, label in SCHEDULERS if label not in SPREAD_SKIP]
    jct: dict[tuple[str, str, float], list[float]] = {}
    wide: list[int] = []
    for family in ("gavel", "gavel-spread"):
        for load in LOADS:
            for seed in range(seeds):
                inst = generate_instance(family, jobs=jobs, servers=servers, seed=seed, data_dir=data_dir)
                if family == "gavel-spread" and load == LOADS[0]:
                    wide.append(sum(1 for j in inst.jobs if j.spread is not None and j.roles["worker"].max_count > 4))
                wl = _loaded(inst, load)
                for solver, options, label in SCHEDULERS:
                    if label in SPREAD_SKIP:
                        continue
                    r = simulate(wl, solver, options=options, seed=seed, interval_s=INTERVAL_S)
                    assert r.finished == len(wl.jobs), (family, label, load, seed, r.finished)
                    jct.setdefault((family, label, load), []).append(r.avg_jct_s / 3600)
                    print(f"  {family} load {load} seed {seed} {label}: {r.avg_jct_s / 3600:.2f} h", file=sys.stderr, flush=True)
    columns = ["scheduler"] + [f"avg JCT (h), load {x}, gavel-spread" for x in LOADS] + [f"÷ gavel, load {x}" for x in LOADS]
    rows = []
    for label in labels:
        cells = [f"{statistics.median(jct['gavel-spread', label, x]):.2f} [{max(jct['gavel-spread', label, x]):.2f}]"
                 for x in LOADS]
        for x in LOADS:
            ratios = [a / b for a, b in zip(jct["gavel-spread", label, x], jct["gavel", label, x])]
            cells.append(f"{statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]")
        rows.append([label, *cells])
    notes = [f"jobs spanning two servers (8 GPUs on 4-GPU servers) per seed: {', '.join(map(str, wide))} of {jobs}"]
    for x in LOADS:
        a = [p / q for p, q in zip(jct["gavel-spread", "optimus-greedy, average-JCT objective", x], jct["gavel-spread", "gavel-las", x])]
        notes.append(f"load {x}: gavel-spread, optimus-greedy with the average-JCT objective ÷ gavel-las, median "
                     f"{statistics.median(a):.2f}× (seeds: {', '.join(f'{r:.2f}' for r in a)})")
    name = "heterogeneous-sim-spread" + SUFFIX
    tables.save(name, columns=columns, rows=rows, seeds=list(range(seeds)), notes=notes,
                command=f"benchmarks/bench_heterogeneous.py --only spread ({jobs} jobs, {servers} servers, loads {LOADS})")
    print(tables.render(name))


#: the schedulers the spread comparison leaves out (the type-blind greedy and Themis: the table's focus is
#: the average-JCT objective against Gavel's LAS)
SPREAD_SKIP = ("optimus-greedy, blind to types", "gavel-finish-time-fairness")


def _erase_types(inst: schedopt.Instance) -> schedopt.Instance:
    """The same jobs and GPUs with one type: every job at its V100 speed."""
    doc = inst.to_dict()
    for srv in doc["servers"]:
        srv.pop("accelerator", None)
    for job in doc["jobs"]:
        job["speed"] = job.pop("speed_by_accelerator")["v100"]
    doc["name"] = inst.name + "-untyped"
    return schedopt.Instance.from_dict(doc)


def snapshots(jobs: int, servers_list: list[int], seeds: int, data_dir: str) -> None:
    print(f"### Snapshots: {jobs} `gavel` jobs at once, typed (K80/P100/V100) and with the types erased\n")
    print("One process, warmed up; `optimus-milp` and `optimus-cpsat` at T = 60 s; gap = certified "
          "(value - bound) / value; median [worst] over seeds 0-%d.\n" % (seeds - 1))
    columns = ["servers (GPUs)", "admitted / jobs", "greedy gap", "greedy s", "milp s typed", "milp s untyped",
               "cpsat s typed", "cpsat s untyped", "all optimal"]
    rows = []
    schedopt.warm_up(["optimus-milp", "optimus-cpsat"])
    for servers in servers_list:
        gaps, gs, mt, mu, ct, cu, adm = [], [], [], [], [], [], []
        optimal = True
        for seed in range(seeds):
            inst = generate_instance("gavel", jobs=jobs, servers=servers, seed=seed, data_dir=data_dir)
            flat = _erase_types(inst)
            t0 = time.perf_counter()
            g = schedopt.solve(inst, "optimus-greedy")
            gs.append(time.perf_counter() - t0)
            for solver, typed_out, flat_out in (("optimus-milp", mt, mu), ("optimus-cpsat", ct, cu)):
                for which, out in ((inst, typed_out), (flat, flat_out)):
                    t0 = time.perf_counter()
                    p = schedopt.solve(which, solver, time_limit=60, seed=0)
                    out.append(time.perf_counter() - t0)
                    optimal &= p.status == schedopt.Status.OPTIMAL
                    assert not schedopt.check(which, p)
                    if which is inst and solver == "optimus-milp":
                        exact = p
            adm.append(f"{exact.objective.admitted}")
            gaps.append(g.objective.gap if g.objective.gap is not None else float("nan"))
            assert not schedopt.check(inst, g)
        def med(xs: list[float]) -> str:
            return f"{statistics.median(xs):.2f} [{max(xs):.2f}]"
        gap_cell = (f"{statistics.median(gaps):.2%} [{max(gaps):.2%}]" if all(x == x for x in gaps)
                    else f"{sum(x == x for x in gaps)}/{len(gaps)} certified")
        rows.append([f"{servers} ({servers * 4})", f"{'/'.join(adm)} of {jobs}", gap_cell, med(gs), med(mt), med(mu),
                     med(ct), med(cu), "yes" if optimal else "no"])
    name = "heterogeneous-snapshots" + SUFFIX
    tables.save(name, columns=columns, rows=rows, seeds=list(range(seeds)),
                command=f"benchmarks/bench_heterogeneous.py --only snapshots ({jobs} jobs, servers {servers_list})")
    print(tables.render(name))


def figure(out: Path) -> None:
    """Average JCT by arrival rate, from the stored simulation results (benchmarks/results/heterogeneous-sim.json)."""
    import json

    from schedopt.plots import pyplot

    doc = json.loads((tables.RESULTS / "heterogeneous-sim.json").read_text())
    loads = [float(c.rsplit(" ", 1)[-1]) for c in doc["columns"] if c.startswith("avg JCT")]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for row, m in zip(doc["rows"], ["o", "s", "^", "D", "v", "P", "X", "*"]):
        label = row[0]
        ys = [float(cell.split()[0]) for cell in row[1:1 + len(loads)]]  # "median [worst]"
        if label == BOUND:  # no scheduler reaches below it
            ax.plot(loads, ys, color="black", linestyle=":", label="lower bound (no scheduler below it)")
            continue
        ax.plot(loads, ys, marker=m, label=label, linestyle="--" if "blind" in label else "-")
    ax.set_xlabel("arrival rate (× the gavel family's own: 1.8 jobs/h per 108 GPUs)")
    ax.set_ylabel("average JCT (h), median over seeds")
    ax.set_ylim(bottom=0)
    seeds = doc.get("seeds") or []
    ax.set_title(f"gavel workload, 60 jobs on 36 K80/P100/V100 GPUs, seeds {seeds[0]}-{seeds[-1]}" if seeds
                 else "gavel workload")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--only", choices=["sim", "contended", "spread", "snapshots", "figure"])
    ap.add_argument("--seeds", type=int, default=5, help="seeds per cell (issue 38 §3: at least 5)")
    args = ap.parse_args()
    global SUFFIX
    SUFFIX = "-quick" if args.quick else ""
    jobs, servers, seeds = (30, 6, 2) if args.quick else (60, 9, args.seeds)
    if args.only in (None, "sim"):
        simulations(jobs, servers, seeds, args.data_dir)
        if not args.quick:
            figure(ROOT / "docs" / "figures" / "heterogeneous_jct.png")
    if args.only == "contended":  # issue 50: four times the jobs on the same cluster (calls of 100+ jobs)
        simulations(240, servers, seeds, args.data_dir, name="heterogeneous-sim-240",
                    skip=("optimus-greedy, blind to types", "gavel-finish-time-fairness"))
    if args.only == "spread":  # issue 50 §5: Gavel's measured spread (unconsolidated) speeds
        spread_effect(jobs, servers, seeds, args.data_dir)
    if args.only == "figure":
        figure(ROOT / "docs" / "figures" / "heterogeneous_jct.png")
    if args.only in (None, "snapshots"):
        snapshots(200 if args.quick else 1000, [60, 90] if args.quick else [250, 300, 400], 2 if args.quick else args.seeds,
                  args.data_dir)


if __name__ == "__main__":
    main()
