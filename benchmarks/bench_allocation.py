"""Allocation benchmarks (issue 2). Stores each table as benchmarks/results/allocation-*.json, which
docs/benchmarks.md renders (benchmarks/tables.py), and prints them.

    .venv/bin/python benchmarks/bench_allocation.py            # everything (~3-5 min on 2 cores)
    .venv/bin/python benchmarks/bench_allocation.py --only gap # one part: scale-greedy | scale-milp | gap

Medians of several runs in one process; the machines are shared and noisy, so
compare ratios measured in the same run rather than absolute seconds.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path
from typing import Any

import numpy as np

import schedopt
import tables  # benchmarks/tables.py, next to this file (run as a script)
from common import median_seconds
from schedopt.allocation.greedy import greedy_allocate, greedy_allocate_heap
from schedopt.allocation.lagrange import solve_lp
from schedopt.allocation.problem import compile_allocation, enumerate_choices
from schedopt.allocation.admission import admit_smallest_first
from schedopt.generate import generate_instance
from schedopt.instance import Instance

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def dense_cluster(instance: Instance, servers: int) -> Instance:
    """The same jobs on ``servers`` identical servers of 24 cores, 4 GPUs, 160 GB,
    so that capacity admits about 100,000 tasks (Optimus §6.4's scale)."""
    data = instance.to_dict()
    data["servers"] = [{"name": "node", "count": servers, "capacity": {"cpu": 24, "gpu": 4, "mem_gb": 160}}]
    data["name"] = f"dense-{len(instance.jobs)}j-{servers}s"
    return Instance.from_dict(data)


def plain_heap_greedy(inst: Instance) -> dict[int, tuple[int, int]]:
    """Eq. 9 as a scheduler would first write it, no bound: compile, admit, heap greedy."""
    data = compile_allocation(inst)
    _, start = admit_smallest_first(data)
    return greedy_allocate_heap(data, start)[0]


def bench_greedy_scale(runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for max_tasks in (32, 64):
        base = generate_instance("optimus", jobs=4000, servers=16000, seed=3, max_tasks=max_tasks)
        clusters = [(f"optimus-cluster, {max_tasks} PS/workers", base)]
        if max_tasks == 64:
            clusters.append((f"dense-cluster, {max_tasks} PS/workers", dense_cluster(base, 16000)))
        for label, inst in clusters:
            data = compile_allocation(inst)
            _, start = admit_smallest_first(data)
            core_s, (config, counters) = median_seconds(lambda: greedy_allocate(data, start), runs)
            heap_s, config_heap = median_seconds(lambda: plain_heap_greedy(inst), runs)
            assert config == config_heap
            solve_s, plan = median_seconds(lambda: schedopt.solve(inst, "optimus-greedy", bound=False), runs)
            bound_s, bplan = median_seconds(lambda: schedopt.solve(inst, "optimus-greedy"), runs)
            lag_s, lplan = median_seconds(lambda: schedopt.solve(inst, "optimus-lagrange"), runs)
            lp_s, lp = median_seconds(lambda: solve_lp(data, enumerate_choices(data)), 1)
            assert not schedopt.check(inst, lplan)
            assert not schedopt.check(inst, plan) and not schedopt.check(inst, bplan)
            assert bplan.objective.bound <= lp.bound * (1 + 1e-9)
            out[label] = {
                "jobs": len(inst.jobs), "servers": len(inst.server_names), "tasks": plan.metrics["tasks"],
                "greedy_core_s": core_s, "plain_heap_greedy_s": heap_s, "solve_no_bound_s": solve_s,
                "solve_with_bound_s": bound_s, "certified_over_heap": bound_s / heap_s,
                "bound_seconds": bplan.metrics["bound_seconds"], "bound_iterations": bplan.metrics["bound_iterations"],
                "column_generation_lp_s": lp_s, "bound_below_lp": (lp.bound - bplan.objective.bound) / lp.bound,
                "bound_lp_gap_certified": bplan.metrics["bound_lp_gap"], "gap_vs_lp_bound": bplan.objective.gap,
                "lagrange_s": lag_s, "lagrange_over_greedy": lag_s / bound_s, "lagrange_gap_vs_lp_bound": lplan.objective.gap,
                "lagrange_tasks": lplan.metrics["tasks"],
            }
    return out


def bench_milp_scale(runs: int) -> dict[str, Any]:
    inst = schedopt.load_instance(ROOT / "instances" / "optimus-1000.json")
    out: dict[str, Any] = {}
    for name in ("optimus-milp", "optimus-cpsat"):
        secs, plan = median_seconds(lambda: schedopt.solve(inst, name), runs)
        assert not schedopt.check(inst, plan)
        out[name] = {
            "seconds": secs, "status": plan.status.value, "gap": plan.objective.gap,
            "configurations": plan.metrics["configurations"], "after_pruning": plan.metrics.get("after_pruning", "-"),
            "after_fixing": plan.metrics.get("after_fixing"), "presolve_s": plan.metrics.get("presolve_seconds"),
            "value": plan.objective.value,
        }
    return out


def bench_exact_4000() -> dict[str, Any]:
    """Issue 17 §2: optimus-milp and optimus-cpsat at 4,000 jobs, model building included (one run each)."""
    import time

    out: dict[str, Any] = {}
    for label, servers, seed in (("4,000 jobs, 16,000 servers", 16000, 3), ("4,000 jobs, 1,000 servers (oversubscribed)", 1000, 4)):
        inst = generate_instance("optimus", jobs=4000, servers=servers, seed=seed)
        for name in ("optimus-milp", "optimus-cpsat"):
            t0 = time.perf_counter()
            plan = schedopt.solve(inst, name, time_limit=120)
            secs = time.perf_counter() - t0
            assert not schedopt.check(inst, plan)
            out[f"{label} / {name}"] = {
                "seconds": secs, "status": plan.status.value, "gap": plan.objective.gap, "admitted": plan.objective.admitted,
                "configurations": plan.metrics.get("configurations"), "after_fixing": plan.metrics.get("after_fixing"),
                "presolve_s": plan.metrics.get("presolve_seconds"),
            }
    return out


# light / medium / heavy / oversubscribed: about 7, 2, 1 and 0.7 GPUs per job (50 jobs; 6/13 of servers have 2 GPUs)
CONTENTION = {"light": 400, "medium": 110, "heavy": 55, "oversubscribed": 40}


def bench_gap(seeds: int, jobs: int = 50) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for level, servers in CONTENTION.items():
        rows = []
        for seed in range(seeds):
            inst = generate_instance("optimus", jobs=jobs, servers=servers, seed=1000 + seed)
            exact = schedopt.solve(inst, "optimus-milp")
            assert exact.status == schedopt.Status.OPTIMAL, exact.message
            runs = [(rule, schedopt.solve(inst, "optimus-greedy", stop_rule=rule, priority_factor=1.0)) for rule in ("skip", "paper")]
            runs.append(("lagrange", schedopt.solve(inst, "optimus-lagrange")))
            for rule, g in runs:
                assert not schedopt.check(inst, g) and not schedopt.check(inst, exact)
                same = g.objective.admitted == exact.objective.admitted
                rows.append({
                    "seed": seed, "rule": rule, "admitted": g.objective.admitted, "opt_admitted": exact.objective.admitted,
                    "gap_vs_opt": (g.objective.value - exact.objective.value) / g.objective.value if same else None,
                    "gap_vs_bound": g.objective.gap,
                })
        summary = {}
        for rule in ("skip", "paper", "lagrange"):
            gaps = [r["gap_vs_opt"] for r in rows if r["rule"] == rule and r["gap_vs_opt"] is not None]
            certified = [r["gap_vs_bound"] for r in rows if r["rule"] == rule and r["gap_vs_bound"] is not None]
            assert all(gp >= -1e-9 for gp in gaps), "a heuristic beat the optimum"
            summary[rule] = {
                "instances": seeds, "mean_gap": float(np.mean(gaps)) if gaps else None,
                "worst_gap": float(np.max(gaps)) if gaps else None,
                "mean_certified_gap": float(np.mean(certified)) if certified else None,
                "fewer_admitted": sum(1 for r in rows if r["rule"] == rule and r["admitted"] < r["opt_admitted"]),
            }
        out[level] = {"servers": servers, "jobs": jobs, "gpus": 2 * round(servers * 6 / 13), "by_rule": summary}
    return out


def store(res: dict[str, Any], command: str, seeds: list[int] | None) -> list[str]:
    """Each part's table saved as benchmarks/results/allocation-*.json (docs/benchmarks.md renders
    them, benchmarks/tables.py); returns the names saved."""
    saved = []

    def save(name: str, columns: list[str], rows: list[list[Any]], notes: list[str] | None = None,
             with_seeds: bool = False) -> None:
        tables.save(name, columns=columns, rows=rows, command=command, seeds=seeds if with_seeds else None, notes=notes)
        saved.append(name)

    if "greedy_scale" in res:
        save("allocation-greedy-scale",
             ["cluster", "tasks placed", "greedy core, numpy (s)", "plain heap greedy (s)", "solve, no bound (s)",
              "solve + dual bound (s)", "certified ÷ plain heap", "dual iterations", "bound below the LP",
              "LP by column generation (s)", "certified gap"],
             [[label, str(r["tasks"]), f"{r['greedy_core_s']:.3f}", f"{r['plain_heap_greedy_s']:.3f}",
               f"{r['solve_no_bound_s']:.3f}", f"{r['solve_with_bound_s']:.3f}", f"{r['certified_over_heap']:.2f}x",
               str(r["bound_iterations"]), f"{100 * r['bound_below_lp']:.5f}%", f"{r['column_generation_lp_s']:.2f}",
               f"{100 * r['gap_vs_lp_bound']:.2f}%"] for label, r in res["greedy_scale"].items()],
             ["medians of the runs in one process; `generate optimus --jobs 4000 --servers 16000 --seed 3 [--max-tasks 64]`"])
        save("allocation-lagrange-4000",
             ["cluster", "optimus-greedy + bound (s)", "optimus-lagrange (s)", "ratio", "greedy certified gap",
              "lagrange certified gap", "tasks placed by lagrange"],
             [[label, f"{r['solve_with_bound_s']:.3f}", f"{r['lagrange_s']:.3f}", f"{r['lagrange_over_greedy']:.2f}x",
               f"{100 * r['gap_vs_lp_bound']:.3f}%", f"{100 * r['lagrange_gap_vs_lp_bound']:.4f}%", str(r["lagrange_tasks"])]
              for label, r in res["greedy_scale"].items()])
    if "milp_scale" in res:
        save("allocation-milp-1000",
             ["solver", "status", "gap", "seconds (median)", "configurations", "after dominance", "after fixing", "presolve (s)"],
             [[name, r["status"], f"{r['gap']:.1e}", f"{r['seconds']:.2f}", str(r["configurations"]), str(r["after_pruning"]),
               str(r["after_fixing"]), f"{r['presolve_s']:.2f}"] for name, r in res["milp_scale"].items()],
             ["`instances/optimus-1000.json`, warmed-up process, model building included"])
    if "exact_4000" in res:
        save("allocation-exact-4000",
             ["instance / solver", "status", "gap", "seconds (one run)", "admitted", "configurations (never enumerated)",
              "listed after fixing", "presolve (s)"],
             [[label, r["status"], f"{r['gap']:.1e}", f"{r['seconds']:.1f}", str(r["admitted"]), str(r["configurations"]),
               str(r["after_fixing"]), f"{r['presolve_s']:.2f}"] for label, r in res["exact_4000"].items()],
             ["one run each at T = 120 s; the same solvers over seeds 5-9 and three families: the exact-seeds table"])
    if "gap" in res:
        rows = []
        for level, r in res["gap"].items():
            for rule, x in r["by_rule"].items():
                def pct(v: float | None, digits: int = 4) -> str:
                    return "-" if v is None else f"{100 * v:.{digits}f}%"
                name = "optimus-lagrange" if rule == "lagrange" else f"optimus-greedy, {rule}"
                rows.append([level, f"{r['servers']} ({r['gpus']})", name, pct(x["mean_gap"]), pct(x["worst_gap"]),
                             pct(x["mean_certified_gap"]), f"{x['fewer_admitted']}/{x['instances']}"])
        save("allocation-gap",
             ["contention", "servers (GPUs) for 50 jobs", "heuristic", "mean gap to optimum", "worst gap",
              "mean certified gap (LP)", "instances admitting fewer jobs"], rows,
             ["50 `optimus` jobs per instance, seeds 1000 onward; gap to the optimum `optimus-milp` proves"], with_seeds=True)
    return saved


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["scale-greedy", "scale-milp", "exact-4000", "gap"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    res: dict[str, Any] = {"machine": {"python": platform.python_version(), "cpu_count": __import__("os").cpu_count()}}
    if args.only in (None, "scale-greedy"):
        res["greedy_scale"] = bench_greedy_scale(args.runs)
    if args.only in (None, "scale-milp"):
        res["milp_scale"] = bench_milp_scale(max(1, args.runs // 2))
    if args.only in (None, "exact-4000"):
        res["exact_4000"] = bench_exact_4000()
    if args.only in (None, "gap"):
        res["gap"] = bench_gap(args.seeds)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "allocation-raw.json").write_text(json.dumps(res, indent=2))  # every measured number
    command = "benchmarks/bench_allocation.py" + (f" --only {args.only}" if args.only else "") + \
        f" --runs {args.runs} --seeds {args.seeds}"
    for name in store(res, command, list(range(1000, 1000 + args.seeds))):
        print(tables.render(name))


if __name__ == "__main__":
    main()
