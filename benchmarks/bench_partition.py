"""Dorm partition benchmarks (issue 4). Stores benchmarks/results/dorm-paper-scale.json,
dorm-arrivals.json, dorm-scale.json, dorm-alibaba-defaults.json and dorm-certified.json (docs/benchmarks.md renders them).

    .venv/bin/python benchmarks/bench_partition.py [--data-dir ../shared/data] [--only paper|online|scale|defaults|certified]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import schedopt
import tables  # benchmarks/tables.py, next to this file (run as a script)
from schedopt.data import DEFAULT_DATA_DIR
from schedopt.generate import generate_instance
from schedopt.instance import Instance

SOLVERS = ["dorm-1", "dorm-2", "dorm-3", "drf-containers", "swarm-static"]


def paper_scale() -> None:
    inst = generate_instance("dorm-table2", jobs=0, servers=20, seed=0)
    for name in ("dorm-milp", "dorm-cpsat"):
        schedopt.solve(inst, name)  # warm: imports and first-call costs are not the model's
    rows = []
    for name in ["dorm-milp", "dorm-cpsat", *SOLVERS]:
        t0 = time.perf_counter()
        plan = schedopt.solve(inst, name)
        secs = time.perf_counter() - t0
        ok = "ok" if not schedopt.check(inst, plan) else "FAILED"
        bound = "-" if plan.objective.bound is None else f"{plan.objective.bound:.4f}"
        rows.append([name, plan.status.value, f"{plan.objective.value:.4f}", bound, f"{secs:.3f}",
                     f"{plan.metrics['fairness_loss']:.3f}", ok])
    tables.save("dorm-paper-scale", columns=["solver", "status", "Σ_k u_k", "bound", "seconds", "fairness loss", "check"],
                rows=rows, command="benchmarks/bench_partition.py --only paper", seeds=[0],
                notes=["`generate dorm-table2 --jobs 0 --servers 20 --seed 0`, one run after a warm-up solve, default options"])
    print(tables.render("dorm-paper-scale"))


def online_snapshots(step: int = 5) -> None:
    """Applications arrive in Table II's random order; at every 5th arrival each
    policy re-decides from its own previous placement (budgets bind)."""
    full = generate_instance("dorm-table2", jobs=0, servers=20, seed=0)
    doc = full.to_dict()
    prev: dict[str, dict | None] = {name: None for name in SOLVERS}
    rows = []
    for k in range(step, len(doc["jobs"]) + 1, step):
        row = {}
        for name in SOLVERS:
            d = {**doc, "jobs": doc["jobs"][:k], "name": f"table2-first{k}"}
            if prev[name] and not name.startswith(("drf", "swarm")):
                d["previous"] = prev[name]
            inst = Instance.from_dict(d, "snapshot")
            plan = schedopt.solve(inst, name, time_limit=30)
            assert not schedopt.check(inst, plan), schedopt.check(inst, plan)
            prev[name] = plan.placement
            row[name] = plan.objective.value
        rows.append((k, row))
    ratios = {n: np.mean([r[n] / r["swarm-static"] for _, r in rows]) for n in SOLVERS}
    tables.save("dorm-arrivals", columns=["applications", *SOLVERS],
                rows=[[k, *(f"{row[n]:.3f}" for n in SOLVERS)] for k, row in rows],
                command="benchmarks/bench_partition.py --only online", seeds=[0],
                notes=["Σ_k u_k after every 5th arrival of `generate dorm-table2 --jobs 0 --servers 20 --seed 0`, each policy "
                       "from its own previous placement (30 s limit)",
                       "mean ratio over Swarm: " + ", ".join(f"{n} {ratios[n]:.2f}x" for n in SOLVERS if n != "swarm-static")])
    print(tables.render("dorm-arrivals"))


def scale(data_dir: str) -> None:
    """500 applications on 1,000 servers of a few classes, `dorm-milp` at 60 s (table `dorm-scale`)."""
    cases = [("dorm-table2, 500 apps, 1000 servers", lambda: generate_instance("dorm-table2", jobs=500, servers=1000, seed=0))]
    if Path(data_dir).is_dir():
        cases.append(("alibaba-dorm, 500 apps, 1000 nodes", lambda: generate_instance(
            "alibaba-dorm", jobs=500, servers=1000, seed=0, max_tasks=8, data_dir=data_dir)))
    rows = []
    for label, make in cases:
        inst = make()
        t0 = time.perf_counter()
        plan = schedopt.solve(inst, "dorm-milp", time_limit=60, rel_gap=1e-3)
        secs = time.perf_counter() - t0
        assert not schedopt.check(inst, plan)
        gap = "-" if plan.objective.gap is None else f"{100 * plan.objective.gap:.2f}%"
        value = "-" if plan.objective.value is None else f"{plan.objective.value:.4f}"
        bound = "-" if plan.objective.bound is None else f"{plan.objective.bound:.4f}"
        rows.append([label, plan.metrics.get("classes", "-"), plan.metrics["mode"], plan.status.value, value, bound,
                     gap, f"{secs:.1f}"])
    tables.save("dorm-scale", columns=["instance", "classes", "mode", "status", "Σ_k u_k", "bound", "gap", "seconds"],
                rows=rows, command="benchmarks/bench_partition.py --only scale", seeds=[0],
                notes=["`dorm-milp`, 60 s limit, `rel_gap=1e-3`; every plan passes `check`; alibaba-dorm at max tasks 8 "
                       "(needs ../shared/data)"])
    print(tables.render("dorm-scale"))


def cli_defaults(data_dir: str) -> None:
    """Issue 17 §6: `generate alibaba-dorm` at the CLI's default max tasks (32), both exact
    solvers with their default options, 60 s limit (table `dorm-alibaba-defaults`)."""
    rows = []
    for jobs, servers in ((200, 400), (500, 1000)):
        inst = generate_instance("alibaba-dorm", jobs=jobs, servers=servers, seed=0, data_dir=data_dir)
        for name in ("dorm-milp", "dorm-cpsat"):
            t0 = time.perf_counter()
            plan = schedopt.solve(inst, name, time_limit=60, seed=0)
            secs = time.perf_counter() - t0
            assert not schedopt.check(inst, plan)
            gap = "-" if plan.objective.gap is None else f"{100 * plan.objective.gap:.2f}%"
            bound = "-" if plan.objective.bound is None else f"{plan.objective.bound:.4f}"
            m = plan.metrics
            cg = "-" if "colgen_iterations" not in m else (
                f"{m['colgen_iterations']} LPs, {m['colgen_patterns']} patterns, {m['colgen_seconds']:.1f} s, "
                + ("converged" if m["colgen_converged"] else "stopped"))
            rounded = m.get("lp_rounding_utilization")
            shapes = len({tuple(job.roles[job.role_names[0]].demand.items()) for job in inst.jobs})
            rows.append([f"alibaba-dorm {jobs} apps, {servers} nodes", f"`{name}`", m.get("classes", "-"), shapes,
                         plan.status.value, f"{plan.objective.value:.4f}", bound, gap, cg,
                         "-" if rounded is None else f"{rounded:.4f}", f"{secs:.1f}"])
    tables.save("dorm-alibaba-defaults",
                columns=["instance", "solver", "classes", "shapes", "status", "Σ_k u_k", "bound", "gap",
                         "column generation", "LP rounding", "seconds"],
                rows=rows, command="benchmarks/bench_partition.py --only defaults", seeds=[0],
                notes=["`generate alibaba-dorm` at the CLI's default max tasks (32), each solver with its default "
                       "options, 60 s limit, one run with nothing else running; every plan passes `check`"])
    print(tables.render("dorm-alibaba-defaults"))


def certified(data_dir: str, seeds: tuple[int, ...] = (41, 42, 43, 44, 45), time_limit: float = 10.0) -> None:
    """Issue 48 §5: how many of the exact solvers' plans `check --strict` verifies from the instance
    alone (the dorm-lagrangian certificate), per-server mode, seeds nobody tuned on."""
    from statistics import median

    from schedopt.checking import check_report

    sizes = [("dorm-table2", 12, 6), ("dorm-table2", 30, 10), ("dorm-table2", 50, 20), ("dorm-table2", 200, 100),
             ("alibaba-dorm", 20, 8)]
    rows = []
    for family, jobs, servers in sizes:
        insts = []
        for seed in seeds:
            try:
                insts.append(generate_instance(family, jobs=jobs, servers=servers, seed=seed, data_dir=data_dir))
            except schedopt.InputError as exc:  # alibaba-dorm without --data-dir
                print(f"skipped {family}: {exc}")
                break
        if not insts:
            continue
        for name in ("dorm-milp", "dorm-cpsat"):
            optimal = verified = passes = infeasible = 0
            gaps, solve_s, check_s = [], [], []
            for inst in insts:
                t0 = time.perf_counter()
                plan = schedopt.solve(inst, name, time_limit=time_limit, seed=0)
                solve_s.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                report = check_report(inst, plan, strict=True)
                check_s.append(time.perf_counter() - t0)
                assert report.ok, (name, inst.name, report.violations)
                infeasible += plan.status == schedopt.Status.KEPT_PREVIOUS  # P2 infeasible: Dorm keeps the placement
                optimal += plan.status == schedopt.Status.OPTIMAL
                clean = not report.unverified
                passes += clean
                verified += clean and plan.status == schedopt.Status.OPTIMAL
                if clean and plan.objective.gap is not None:
                    gaps.append(100 * plan.objective.gap)
            gap = f"{median(gaps):.3f} [{max(gaps):.3f}]" if gaps else "-"
            feasible = len(insts) - infeasible
            rows.append([f"`{family}` {jobs} x {servers}", f"`{name}`", f"{feasible} of {len(insts)}",
                         f"{optimal} of {feasible}", f"{verified} of {feasible}", f"{passes} of {len(insts)}", gap,
                         f"{median(solve_s):.2f}", f"{median(check_s):.2f}"])
            print(rows[-1])
    tables.save("dorm-certified", columns=["instances", "solver", "P2 feasible", "optimal", "optimal verified by --strict",
                                           "--strict passes", "verified gap % median [worst]", "solve s (median)",
                                           "check --strict s (median)"],
                rows=rows, command="benchmarks/bench_partition.py --only certified", seeds=list(seeds),
                notes=[f"T = {time_limit:g} s, per-server mode but at 200 x 100 (class mode, 5 shapes: the mode's default); one run; "
                       "'verified': the plan's claims replayed from the instance alone (dorm-lagrangian), "
                       "none resting on the backend"])
    print(tables.render("dorm-certified"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    ap.add_argument("--only", choices=["paper", "online", "scale", "defaults", "certified"], default=None)
    args = ap.parse_args()
    if args.only in (None, "paper"):
        paper_scale()
    if args.only in (None, "online"):
        online_snapshots()
    if args.only in (None, "scale"):
        scale(args.data_dir)
    if args.only in (None, "defaults"):
        cli_defaults(args.data_dir)
    if args.only in (None, "certified"):
        certified(args.data_dir)
