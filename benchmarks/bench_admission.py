"""Admission (issue 17 §4): the heuristics' admission rules against the optimum.

1. `optimus-greedy` with each rule on the instances of the allocation gap table
   (`optimus`, 50 jobs, seeds 1000..1009, four contention levels) against
   `optimus-milp`.
2. Admitted counts where admission is a hard packing
   (`schedopt.testing.random_packing_instance`: 150 jobs of random 3-resource
   demands on 18 servers, the issue's case) and on random mixed tiny-style
   instances of 150 jobs, against `optimus-milp`'s count; Σ t_j at the minimum
   against the exact lexicographic admission (most jobs, then least Σ t_j).
3. Each rule's time at 4,000 jobs (median of 3, after one warm-up call).

Stores `admission-gap`, `admission-packing` and `admission-time` in benchmarks/results/ (docs/benchmarks.md
renders them). `--only gap|packing|time` runs one part.

    .venv/bin/python benchmarks/bench_admission.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import schedopt  # noqa: E402
import tables  # noqa: E402  (benchmarks/tables.py, next to this file)
from schedopt.allocation.admission import ADMISSION_RULES, admit, admitted_upper_bound, minimum_use  # noqa: E402
from schedopt.allocation.problem import compile_allocation  # noqa: E402
from schedopt.generate import generate_instance  # noqa: E402
from schedopt.testing import assert_gap, random_packing_instance  # noqa: E402
from schedopt.testing.instances import random_tiny_instance  # noqa: E402

CONTENTION = {"light": 400, "medium": 110, "heavy": 55, "oversubscribed": 40}
RULES = ("smallest", "swap", "lp")


def gap_table(seeds: int = 10) -> None:
    rows = []
    for level, servers in CONTENTION.items():
        insts = [generate_instance("optimus", jobs=50, servers=servers, seed=1000 + s) for s in range(seeds)]
        for rule in RULES:
            solver = schedopt.get_solver("optimus-greedy", stop_rule="skip", priority_factor=1.0, admission=rule)
            reports = [assert_gap(i, solver, max_gap=float("inf"), reference="optimus-milp") for i in insts]
            fewer = sum(r.admitted < r.optimum_admitted for r in reports)
            finite = [r.gap for r in reports if r.admitted == r.optimum_admitted]
            rows.append([level, servers, f"`{rule}`", f"{100 * statistics.mean(finite):.2f}%", f"{100 * max(finite):.2f}%",
                         f"{fewer}/{seeds}"])
    tables.save("admission-gap", columns=["contention", "servers", "admission", "mean gap", "worst gap",
                                          "admitting fewer than the optimum"],
                rows=rows, command="benchmarks/bench_admission.py --only gap", seeds=[1000 + s for s in range(seeds)],
                notes=["`optimus-greedy` (`stop_rule=skip`, `priority_factor=1`) on `generate optimus --jobs 50`, gap to "
                       "`optimus-milp` by `schedopt.testing.assert_gap`, over the instances admitting the optimum's count"])
    print(tables.render("admission-gap"))


def time_keys(data, mins: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """t_j (J,) seconds at the minimum configuration (these instances run nothing: no restart term); inf elsewhere."""
    t = np.full(data.J, np.inf)
    for j in candidates.tolist():
        t[j] = float(data.time_s(j, int(mins[j, 0]), int(mins[j, 1])))
    return t


def exact_admission(data) -> tuple[int, float]:
    """The lexicographic optimum of admission alone: most jobs, then least Σ t_j at the minimum (HiGHS MILP)."""
    import scipy.optimize as so

    mins, ok, use = minimum_use(data)
    cand = np.flatnonzero(ok)
    t = time_keys(data, mins, cand)
    cand = cand[np.isfinite(t[cand])]
    cap = so.LinearConstraint(use[cand].T, -np.inf, data.cap * (1 + 1e-9))
    ones = np.ones(len(cand))
    first = so.milp(-ones, constraints=[cap], integrality=ones, bounds=so.Bounds(0, 1), options={"time_limit": 60})
    k = int(round(-first.fun))
    second = so.milp(t[cand], constraints=[cap, so.LinearConstraint(ones[None], k, k)], integrality=ones,
                     bounds=so.Bounds(0, 1), options={"time_limit": 60})
    return k, float(second.fun)


def packing_table(n: int = 12) -> None:
    table = []
    cases = {"packing, seeds 0..%d (150 / 18, 3 resources)" % (n - 1): [random_packing_instance(s) for s in range(n)],
             "mixed tiny-style, seeds 5000..%d (150 jobs)" % (5000 + n - 1):
                 [random_tiny_instance(s, n_jobs=150) for s in range(5000, 5000 + n)]}
    for label, insts in cases.items():
        rows: dict[str, list[tuple[float, float | None, float]]] = {r: [] for r in RULES}
        for inst in insts:
            data = compile_allocation(inst)
            k, least = exact_admission(data)
            if k == data.J:
                continue
            mins, ok, _ = minimum_use(data)
            t = time_keys(data, mins, np.flatnonzero(ok))
            for rule in RULES:
                t0 = time.perf_counter()
                got, _ = admit(data, rule)
                sec = time.perf_counter() - t0
                excess = (float(t[got].sum()) - least) / abs(least) if len(got) == k and least else None
                rows[rule].append((len(got) / k, excess, sec))
        for rule, r in rows.items():
            ratios = [x[0] for x in r]
            excess = [x[1] for x in r if x[1] is not None]
            mean_excess = [f"{100 * statistics.mean(excess):.2f}%", f"{100 * max(excess):.2f}%"] if excess else ["-", "-"]
            table.append([label, len(r), f"`{rule}`", f"{min(ratios):.3f}", f"{statistics.mean(ratios):.3f}",
                          sum(x < 1 for x in ratios), *mean_excess, f"{statistics.median(x[2] for x in r):.3f}"])
    tables.save("admission-packing", columns=["instances (jobs / servers)", "where not all fit", "rule",
                                              "count ÷ optimum: min", "mean", "instances below the optimum",
                                              "Σ t excess at equal count: mean", "worst", "seconds (median)"],
                rows=table, command="benchmarks/bench_admission.py --only packing",
                notes=["the optimum: most jobs, then least Σ t_j at the minimum configurations (scipy's HiGHS MILP); "
                       "instances where every job fits are left out"])
    print(tables.render("admission-packing"))


def time_table() -> None:
    rows = []
    cases = {"`optimus`, 1,000 servers (oversubscribed)": generate_instance("optimus", jobs=4000, servers=1000, seed=3),
             "packing, 400 servers, 3 resources": random_packing_instance(1, n_jobs=4000, servers=400)}
    for label, inst in cases.items():
        data = compile_allocation(inst)
        admit(data, "lp")  # warm-up: scipy's import
        ceiling = admitted_upper_bound(data)
        for rule in RULES:
            times, solves = [], []
            for _ in range(3):
                t0 = time.perf_counter()
                adm, _ = admit(data, rule)
                times.append(time.perf_counter() - t0)
                solves.append(schedopt.solve(inst, "optimus-greedy", admission=rule).solve_seconds)
            rows.append([label, f"`{rule}`", f"{statistics.median(times):.3f}", len(adm), ceiling,
                         f"{statistics.median(solves):.3f}"])
    tables.save("admission-time", columns=["admission at 4,000 jobs", "rule", "admission seconds (median of 3)", "admitted",
                                           "⌊LP⌋ bound", "`optimus-greedy` seconds (median of 3)"],
                rows=rows, command="benchmarks/bench_admission.py --only time", seeds=[3, 1],
                notes=["one warm-up call, then medians of 3; the `optimus-greedy` column is the whole certified solve"])
    print(tables.render("admission-time"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["gap", "packing", "time"])
    args = parser.parse_args()
    assert set(RULES) <= set(ADMISSION_RULES)
    for name, part in {"gap": gap_table, "packing": packing_table, "time": time_table}.items():
        if args.only in (None, name):
            part()
