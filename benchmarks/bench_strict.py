"""Which solvers' own plans pass `schedopt check --strict` (issue 48 §5-§6), per solver.

Run: .venv/bin/python benchmarks/bench_strict.py

Every registered solver of each instance's problem solves the bundled instances and
generated ones (40 jobs on 10 and 3 servers, seeds 1-2, of `optimus`, `dl2`, `gavel`,
`philly-tenants`, `philly`, `optimus-workload`; small `slaq`, `placement`,
`placement-classes`, `optimus-paa`, `alibaba-dorm`; the trace families read --data-dir
and are skipped without it), T = 20 s; `check_report(strict=True)` judges each plan.
A plan fails --strict when a claim it makes (bound, admitted_bound, gap, optimal) has
no replayable proof; the column names what it rests on then.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402  (benchmarks/tables.py)

from schedopt.api import solve  # noqa: E402
from schedopt.checking import check_report  # noqa: E402
from schedopt.errors import InputError  # noqa: E402
from schedopt.generate import generate_instance  # noqa: E402
from schedopt.instance import load_instance  # noqa: E402
from schedopt.problems import infer_problem  # noqa: E402
from schedopt.registry import solvers  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ["optimus-100.yaml", "optimus-testbed.yaml", "slaq-40.yaml", "dorm-table2.yaml", "small-hand.yaml"]


def instances() -> list:
    out = [load_instance(ROOT / "instances" / name) for name in BUNDLED]

    def gen(family: str, jobs: int, servers: int, seed: int, **kw) -> None:
        try:
            out.append(generate_instance(family, jobs=jobs, servers=servers, seed=seed, **kw))
        except InputError as exc:  # a trace family without --data-dir
            print(f"skipped {family}: {exc}", file=sys.stderr)

    for family in ("optimus", "dl2", "gavel", "philly-tenants", "philly", "optimus-workload"):
        for seed in (1, 2):
            gen(family, 40, 10, seed)
            gen(family, 40, 3, seed)
    gen("slaq", 30, 5, 1)
    gen("placement", 20, 10, 1, max_tasks=4)
    gen("placement-classes", 20, 10, 1, max_tasks=4)
    gen("optimus-paa", 6, 3, 1)
    gen("alibaba-dorm", 30, 10, 1)
    return out


def main() -> None:
    passed: dict[str, int] = collections.Counter()
    total: dict[str, int] = collections.Counter()
    rests: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    problem_of: dict[str, str] = {}
    for inst in instances():
        problem = infer_problem(inst)
        for info in solvers(problem):
            if info.unavailable:
                continue
            try:
                plan = solve(inst, info.name, time_limit=20, seed=0)
            except InputError:
                continue  # the solver refuses the instance at its door (e.g. dl2 on typed clusters)
            report = check_report(inst, plan, strict=True)
            total[info.name] += 1
            problem_of[info.name] = problem
            if report.ok and not report.unverified:
                passed[info.name] += 1
            else:
                for v in report.violations + report.unverified:
                    why = ("backend" if "branch and bound" in v.message else
                           "no certificate" if "no certificate" in v.message else v.path)
                    rests[info.name][why] += 1
                    break
    rows = [[f"`{name}`", problem_of[name], f"{passed[name]} of {total[name]}",
             ", ".join(f"{k} ({n})" for k, n in rests[name].most_common()) or "-"]
            for name in sorted(total, key=lambda n: (problem_of[n], n))]
    tables.save("strict-survey", columns=["solver", "problem", "pass --strict", "the others rest on"], rows=rows,
                command="benchmarks/bench_strict.py", seeds=[1, 2],
                notes=["one run; T = 20 s; a solver refused at its door for an instance is not counted there"])
    print(tables.render("strict-survey"))


if __name__ == "__main__":
    main()
