"""Certificates (issue 33; docs/certificates.md): wrong bounds on multi-resource
quality instances, and what a certified bound and its replay cost.

Run: .venv/bin/python benchmarks/bench_certificates.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402  (benchmarks/tables.py)
from common import median_seconds  # noqa: E402

from schedopt.checking import check_report  # noqa: E402
from schedopt.generate import generate_instance  # noqa: E402
from schedopt.instance import Instance  # noqa: E402
from schedopt.plan import Status  # noqa: E402
from schedopt.registry import get_solver  # noqa: E402


def with_resources(seed: int, jobs: int, extra: int) -> Instance:
    """SLAQ's family on one server plus ``extra`` resources (capacity 20, demands 1-4)."""
    data = generate_instance("slaq", jobs=jobs, servers=1, seed=seed, max_tasks=8).to_dict()
    rng = np.random.default_rng(seed)
    names = [f"r{k}" for k in range(extra)]
    data["resources"] = list(data["resources"]) + names
    for server in data["servers"]:
        server["capacity"].update({n: 20 for n in names})
    for job in data["jobs"]:
        for role in job["roles"].values():
            role.setdefault("demand", {}).update({n: int(rng.integers(1, 5)) for n in names})
    return Instance.from_dict(data)


def wrong_bounds() -> None:
    rows, skipped = [], []
    for label, seeds, jobs, extras in (("issue 33 reproduction (12 jobs)", range(12), 12, (1,)),
                                       ("sweep (2-12 jobs)", range(30), None, (1, 2))):
        for extra in extras:
            wrong = failed = total = 0
            for seed in seeds:
                inst = with_resources(seed, jobs or 2 + seed % 11, extra)
                greedy = get_solver("slaq-greedy").solve(inst, seed=0)
                exact = get_solver("slaq-milp").solve(inst, seed=0)
                if exact.status != Status.OPTIMAL or greedy.objective.bound is None:
                    skipped.append(f"{label}, {1 + extra} resources, seed {seed}: `slaq-milp` {exact.status.value}, "
                                   f"greedy bound {greedy.objective.bound}")
                    continue
                total += 1
                wrong += greedy.objective.bound < exact.objective.value - 1e-9
                failed += not check_report(inst, greedy).ok
            rows.append([label, str(1 + extra), f"{wrong} of {total}", str(failed)])
    tables.save("certificates-wrong-bounds", columns=["instances", "resources", "slaq-greedy bounds below the proven optimum",
                                                      "replays that fail"],
                rows=rows, command="benchmarks/bench_certificates.py", seeds=list(range(30)),
                notes=["SLAQ's family on one server plus 1-2 extra resources (capacity 20, demands 1-4); the optimum from "
                       "`slaq-milp`; a replay is `schedopt check` of the greedy's plan",
                       "left out (no proven optimum to compare with, or no bound stated): " + ("; ".join(skipped) or "none")])
    print(tables.render("certificates-wrong-bounds"))


def costs() -> None:
    rows = []
    for family, jobs, servers, solver in (("optimus", 1000, 4000, "optimus-greedy"), ("optimus", 4000, 16000, "optimus-greedy"),
                                          ("slaq", 2000, 500, "slaq-greedy"), ("alibaba-dorm", 500, 1000, "drf-containers")):
        try:
            inst = generate_instance(family, jobs=jobs, servers=servers, seed=5, max_tasks=16)
        except Exception as exc:  # a family that needs ../shared/data
            rows.append([f"{family} {jobs}x{servers}", solver, f"skipped: {str(exc).splitlines()[0]}", "", ""])
            continue
        sol = get_solver(solver)
        sol.solve(inst, seed=0)
        solve_s, plan = median_seconds(lambda: sol.solve(inst, seed=0), 3)
        check_s, report = median_seconds(lambda: check_report(inst, plan), 3)
        assert report.ok and report.verified, report
        bound_s = plan.metrics.get("bound_seconds")
        rows.append([f"{family} {jobs} jobs x {servers} servers", solver, f"{solve_s:.3f}",
                     "-" if bound_s is None else f"{bound_s:.3f}", f"{check_s:.3f}"])
    tables.save("certificates-cost", columns=["instance", "solver", "solve (s)", "of which the bound (s)",
                                              "check with replay (s)"],
                rows=rows, command="benchmarks/bench_certificates.py", seeds=[5],
                notes=["medians of 3 in one warmed-up process; every plan's certificates replay (`check_report` verified)"])
    print(tables.render("certificates-cost"))


if __name__ == "__main__":
    wrong_bounds()
    costs()
