"""Placement benchmarks (issue 5). Stores benchmarks/results/placement-*.json and prints them.

    .venv/bin/python benchmarks/bench_placement.py [--quick] [--only scale|exact|time|gaps|lagrange|objectives|incremental] [--seeds 5]

1. ``optimus-placement`` and ``kube-default`` (and ``dltap``) at 100,000 tasks
   on 16,000 servers; cross-node pairs of ``dltap`` vs ``kube-default``.
2. Exact placement: growing ``generate placement`` and ``placement-classes``
   instances, 60 s each, over 5 seeds, and ``optimus-placement``'s certified gap
   (stored as benchmarks/results/placement-exact.json).
3. The heuristics against the optimum: 20 ``placement-classes`` instances of
   100 jobs on 50 servers.
4. ``placement-lagrange`` (issue 51) against the proven optimum at 400-2,000 jobs, on
   seeds 41-45 (none of them used while the heuristic was written): its gap to the optimum,
   the gap its own certificate proves, its time, and ``check --strict``'s time
   (stored as benchmarks/results/placement-lagrange.json).
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import schedopt
from common import median_seconds
import tables  # benchmarks/tables.py, next to this file (run as a script)
from schedopt.generate import generate_instance
from schedopt.instance import Instance
from schedopt.placement.optimus import optimus_place
from schedopt.placement.problem import compile_placement

HEURISTICS = ["optimus-placement", "kube-default", "dltap"]
#: the heuristics measured against the optimum (heuristic_gaps)
GAP_HEURISTICS = ["optimus-placement", "placement-lagrange", "kube-default", "dltap"]
#: the exact solver whose optimum each family's gaps are taken against (the faster one there)
REFERENCE = {"placement-typed": "placement-milp"}


def instance(tasks: int = 100_000, servers: int = 16_000, seed: int = 0) -> Instance:
    """Jobs of 1-8 PS (1 core, 2 GB) and 1-16 workers (2 cores, 4 GB) until ``tasks``; servers of 32 cores, 64 GB."""
    rng = np.random.default_rng(seed)
    jobs, alloc, n, i = [], {}, 0, 0
    while n < tasks:
        p, w = int(rng.integers(1, 9)), int(rng.integers(1, 17))
        jobs.append({"id": f"j{i}", "roles": {"ps": {"demand": {"cpu": 1, "mem_gb": 2}, "max": p},
                                              "worker": {"demand": {"cpu": 2, "mem_gb": 4}, "max": w}},
                     "model_size": 100, "bandwidth": {"ps": 125, "worker": 125}})
        alloc[f"j{i}"] = {"ps": p, "worker": w}
        n, i = n + p + w, i + 1
    return Instance.from_dict({"schema": "schedopt/instance@1", "name": f"place-{tasks}", "resources": ["cpu", "mem_gb"],
                               "servers": [{"name": "n", "count": servers, "capacity": {"cpu": 32, "mem_gb": 64}}],
                               "jobs": jobs, "allocation": alloc})


def scale(runs: int, suffix: str = "") -> None:
    inst = instance()
    data = compile_placement(inst)
    core, where = median_seconds(lambda: optimus_place(data, 0), runs)
    rows = [["`optimus-placement` core (`optimus_place`)", f"{core:.2f}", f"{sum(w is not None for w in where):,}", "", "", ""]]
    pairs = {}
    for name in HEURISTICS:
        sec, plan = median_seconds(lambda: schedopt.solve(inst, name, seed=0), runs)
        m = plan.metrics
        pairs[name] = m["cross_node_pairs"]
        rows.append([f"`{name}` whole solve", f"{sec:.2f}", f"{m['placed']:,}", f"{m['servers_used']:,}",
                     f"{m['cross_node_pairs']:,}", f"{m['total_transfer_time_s']:,.0f}"])
    sec, plan = median_seconds(lambda: schedopt.solve(inst, "optimus-placement", seed=0, bound=False), runs)
    rows.insert(2, ["`optimus-placement` whole solve, `bound=false` (no certified bounds)", f"{sec:.2f}",
                    f"{plan.metrics['placed']:,}", f"{plan.metrics['servers_used']:,}",
                    f"{plan.metrics['cross_node_pairs']:,}", f"{plan.metrics['total_transfer_time_s']:,.0f}"])
    sec, plan = median_seconds(lambda: schedopt.solve(inst, "optimus-placement", seed=0, bound=False, refine=False), runs)
    rows.insert(3, ["`optimus-placement` whole solve, `refine=false bound=false` (the paper's scheme alone)", f"{sec:.2f}",
                    f"{plan.metrics['placed']:,}", f"{plan.metrics['servers_used']:,}",
                    f"{plan.metrics['cross_node_pairs']:,}", f"{plan.metrics['total_transfer_time_s']:,.0f}"])
    cut = 1 - pairs["dltap"] / pairs["kube-default"]
    tables.save("placement-scale" + suffix, columns=["solver", "seconds (median of runs)", "placed jobs", "servers used",
                                                    "cross-node pairs", "Σ T_j (s)"],
                rows=rows, command="benchmarks/bench_placement.py --only scale", seeds=[0],
                notes=[f"{sum(int(c.sum()) for c in data.counts):,} tasks of {data.J:,} jobs (1-8 PS, 1-16 workers, seed 0) on "
                       f"16,000 servers of 32 cores and 64 GB; medians of {runs} runs in one process",
                       f"`dltap` against `kube-default`: {cut:.1%} fewer cross-node PS-worker pairs (DLTAP reports 12 % less traffic)"])
    print(tables.render("placement-scale" + suffix))


def exact_scale(limit_s: float, sizes: list[tuple[str, int, int]], seeds: int, table: str = "placement-exact") -> None:
    """Exact placement by size over ``seeds`` seeds, with ``optimus-placement``'s certified
    gap to the best bound an exact solver proved; stored as benchmarks/results/placement-exact.json."""
    schedopt.warm_up(["placement-milp", "placement-cpsat"])
    rows = []
    for family, jobs, servers in sizes:
        cells: dict[str, dict[str, list]] = {}
        for seed in range(seeds):
            inst = generate_instance(family, jobs=jobs, servers=servers, seed=seed, max_tasks=4)
            plans = {}
            for name in ("placement-cpsat", "placement-milp", "optimus-placement"):
                t0 = time.perf_counter()
                plans[name] = schedopt.solve(inst, name, time_limit=limit_s if name != "optimus-placement" else None, seed=0)
                sec = time.perf_counter() - t0
                assert not schedopt.check(inst, plans[name]), (family, jobs, seed, name)
                cells.setdefault(name, {"sec": [], "optimal": [], "gap": []})
                cells[name]["sec"].append(sec)
                cells[name]["optimal"].append(plans[name].status == schedopt.Status.OPTIMAL)
            # every plan's certified gap against the best bound any exact solver proved on this seed
            most = max(p.objective.admitted for p in plans.values())
            bounds = [p.objective.bound for n, p in plans.items() if n != "optimus-placement"
                      and p.objective.bound is not None and p.objective.admitted == most]
            for name, plan in plans.items():
                v = plan.objective.value
                gap = None
                if bounds and plan.objective.admitted == most:
                    gap = (v - max(bounds)) / v if v > 0 else 0.0
                cells[name]["gap"].append(gap)
            print(f"  {family} {jobs}/{servers} seed {seed}: " + ", ".join(
                f"{n} {c['sec'][-1]:.1f} s gap {c['gap'][-1]}" for n, c in cells.items()), file=sys.stderr, flush=True)
        for name, c in cells.items():
            known = [g for g in c["gap"] if g is not None]
            gap = (f"{statistics.median(known):.2%} [{max(known):.2%}]" if len(known) == len(c["gap"])
                   else f"places fewer on {len(c['gap']) - len(known)}/{len(c['gap'])}")
            rows.append([f"`{family}`", str(jobs), str(servers), f"`{name}`",
                         f"{sum(c['optimal'])}/{seeds}" if name != "optimus-placement" else "-",
                         gap, f"{statistics.median(c['sec']):.2f} [{max(c['sec']):.2f}]"])
    tables.save(table, columns=["family", "jobs", "servers", "solver", "proven optimal", "gap median [worst]",
                                            "seconds median [worst]"],
                rows=rows, seeds=list(range(seeds)),
                command=f"benchmarks/bench_placement.py --only exact --seeds {seeds}",
                notes=[f"max tasks 4 per role; exact solvers at T = {limit_s:g} s, one process after `schedopt.warm_up`; "
                       "gap: (Σ T_j - best bound an exact solver proved on that seed) / Σ T_j, over seeds where the plan places "
                       "the most jobs; `optimus-placement` with its default refinement; every plan passes `check`"])
    print(tables.render(table))


def heuristic_gaps(n: int, family: str = "placement-classes", jobs: int = 100, servers: int = 50, suffix: str = "") -> None:
    variants = [("optimus-placement", {"refine": False}, "`optimus-placement` (paper's scheme, `refine=False`)")] + \
        [(h, {}, f"`{h}`") for h in GAP_HEURISTICS]
    rows: dict[str, dict[str, list[float]]] = {label: {"fewer": [], "gap": [], "pairs": [], "sec": []} for _, _, label in variants}
    for seed in range(n):
        inst = generate_instance(family, jobs=jobs, servers=servers, seed=seed, max_tasks=4)
        best = schedopt.solve(inst, "placement-milp", time_limit=60, seed=0)
        pairs = schedopt.solve(inst, "placement-milp", objective="cross_pairs", time_limit=60, seed=0)
        assert best.status == schedopt.Status.OPTIMAL and pairs.status == schedopt.Status.OPTIMAL
        for h, options, label in variants:
            t0 = time.perf_counter()
            plan = schedopt.solve(inst, h, seed=seed, **options)
            rows[label]["sec"].append(time.perf_counter() - t0)
            rows[label]["fewer"].append(best.objective.admitted - plan.objective.admitted)
            if plan.objective.admitted == best.objective.admitted:
                v, o = plan.objective.value, best.objective.value
                rows[label]["gap"].append((v - o) / v if v > 0 else 0.0)
                rows[label]["pairs"].append(plan.metrics["cross_node_pairs"] - pairs.objective.value)
    table = []
    for label, r in rows.items():
        gaps = r["gap"] or [float("nan")]
        table.append([label, f"{sum(x > 0 for x in r['fewer'])} of {n}", f"{statistics.mean(r['fewer']):.2f}",
                      f"{statistics.median(gaps):.1%} [{max(gaps):.1%}] over {len(r['gap'])}",
                      f"{statistics.mean(r['pairs'] or [float('nan')]):.1f}", f"{statistics.median(r['sec']):.3f}"])
    tables.save("placement-heuristic-gaps" + suffix,
                columns=["heuristic", "instances placing fewer jobs than the optimum", "mean jobs fewer",
                         "Σ T_j gap, median [worst], where as many placed", "cross-node pairs above the minimum, mean",
                         "seconds (median)"],
                rows=table, command="benchmarks/bench_placement.py --only gaps", seeds=list(range(n)),
                notes=[f"{n} `generate {family}` instances: {jobs} jobs, {servers} servers, 1-4 PS and workers; the optimum "
                       "(Σ T_j, and the fewest cross-node pairs) by `placement-milp`'s class model"])
    print(tables.render("placement-heuristic-gaps" + suffix))


def heuristic_time(seeds: int = 5) -> None:
    """``optimus-placement``'s whole solve (with its refinement) on ``generate placement``
    instances (every server distinct), by size over seeds, after one warm solve: issue 36 §3's
    goal of under 1 s at 1,000 jobs. Stored as placement-heuristic-time.json."""
    rows = []
    for jobs, servers in ((100, 50), (400, 200), (1000, 500), (2000, 1000)):
        secs, placed = [], []
        for seed in range(seeds):
            inst = generate_instance("placement", jobs=jobs, servers=servers, seed=seed, max_tasks=4)
            schedopt.solve(inst, "optimus-placement")  # warm: imports and caches, as a scheduler's loop is
            t0 = time.perf_counter()
            plan = schedopt.solve(inst, "optimus-placement")
            secs.append(time.perf_counter() - t0)
            assert not schedopt.check(inst, plan)
            placed.append(plan.objective.admitted)
        rows.append([str(jobs), str(servers), f"{statistics.median(secs):.2f} [{max(secs):.2f}]",
                     f"{statistics.median(placed):g} [{min(placed)}]"])
        print(rows[-1], file=sys.stderr, flush=True)
    tables.save("placement-heuristic-time", columns=["jobs", "servers", "seconds median [worst]", "placed median [least]"],
                rows=rows, seeds=list(range(seeds)), command=f"benchmarks/bench_placement.py --only time --seeds {seeds}",
                notes=["`generate placement --max-tasks 4` (every server distinct); the whole `schedopt.solve` call of "
                       "`optimus-placement` with its default refinement, after one warm solve of the same instance; "
                       "one process, nothing else running; every plan passes `check`"])
    print(tables.render("placement-heuristic-time"))


#: each objective's value in a placement plan's metrics
METRIC_OF = {"sum": "total_transfer_time_s", "max": "max_transfer_time_s", "cross_pairs": "cross_node_pairs"}


def gap_rows(seeds: list[int], sizes: list[tuple[str, int, int]], limit_s: float, objective: str = "sum") -> list[list[str]]:
    """Rows of ``placement-lagrange`` and ``optimus-placement`` against the exact solver's proven
    optimum of ``objective`` (the exact plan's own --strict result in the last column)."""
    schedopt.warm_up(["placement-cpsat", "placement-milp", "placement-lagrange"])
    rows = []
    for family, jobs, servers in sizes:
        reference = REFERENCE.get(family, "placement-cpsat")
        cell: dict[str, list] = {"true": [], "cert": [], "sec": [], "check": [], "paper": [], "paper_sec": [],
                                 "exact_sec": [], "strict": [], "placed": [], "proven": [], "exact_strict": []}
        for seed in seeds:
            inst = generate_instance(family, jobs=jobs, servers=servers, seed=seed, max_tasks=4)
            t0 = time.perf_counter()
            exact = schedopt.solve(inst, reference, time_limit=limit_s, objective=objective)
            cell["exact_sec"].append(time.perf_counter() - t0)
            proven = exact.status == schedopt.Status.OPTIMAL
            cell["proven"].append(proven)
            cell["exact_strict"].append(not schedopt.check(inst, exact, strict=True))
            schedopt.solve(inst, "placement-lagrange", objective=objective)  # warm: as a scheduler's loop is
            t0 = time.perf_counter()
            plan = schedopt.solve(inst, "placement-lagrange", objective=objective)
            cell["sec"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            strict = schedopt.check(inst, plan, strict=True)
            cell["check"].append(time.perf_counter() - t0)
            assert not schedopt.check(inst, plan), (family, jobs, seed)
            cell["strict"].append(not strict)
            # the optimum, or where the exact solver did not prove it in time its bound (below the
            # optimum: the gap taken to it is at least the true one)
            opt = exact.objective.value if proven else (exact.objective.bound or 0.0)
            cell["placed"].append(plan.objective.admitted == exact.objective.admitted)
            gap = (plan.objective.value - opt) / opt if opt > 0 else 0.0
            assert gap > -1e-4, (family, jobs, seed, gap)  # never better than a proven bound beyond its tolerance
            cell["true"].append(max(0.0, gap))
            cell["cert"].append(plan.objective.gap)
            t0 = time.perf_counter()
            paper = schedopt.solve(inst, "optimus-placement")  # the paper's scheme has one objective: Σ T_j
            cell["paper_sec"].append(time.perf_counter() - t0)
            paper_value = float(paper.metrics[METRIC_OF[objective]])
            cell["paper"].append((paper_value - opt) / opt if paper.objective.admitted == exact.objective.admitted
                                 and opt > 0 else None)
            print(f"  {family} {jobs}/{servers} seed {seed}: exact {opt:.4f} in {cell['exact_sec'][-1]:.1f} s; ours "
                  f"{plan.objective.value:.4f} ({cell['true'][-1]:.3%}, certified {plan.objective.gap}) in "
                  f"{cell['sec'][-1]:.2f} s, check {cell['check'][-1]:.2f} s; optimus-placement {cell['paper'][-1]}",
                  file=sys.stderr, flush=True)

        def mw(xs: list, fmt: str = "{:.2%}") -> str:
            known = [x for x in xs if x is not None]
            if len(known) < len(xs):
                return f"places fewer on {len(xs) - len(known)}/{len(xs)}"
            return f"{fmt.format(statistics.median(known))} [{fmt.format(max(known))}]"
        rows.append([f"`{family}`", str(jobs), str(servers), f"{sum(cell['placed'])}/{len(seeds)}", mw(cell["true"]),
                     mw(cell["cert"]), mw(cell["sec"], "{:.2f}"), mw(cell["check"], "{:.2f}"),
                     f"{sum(cell['strict'])}/{len(seeds)}", mw(cell["paper"]),
                     f"`{reference}` " + mw(cell["exact_sec"], "{:.1f}") + f", proven {sum(cell['proven'])}/{len(seeds)}"
                     f", --strict {sum(cell['exact_strict'])}/{len(seeds)}"])
    return rows


def lagrange_gaps(seeds: list[int], sizes: list[tuple[str, int, int]], limit_s: float = 300.0,
                  table: str = "placement-lagrange") -> None:
    """``placement-lagrange`` and ``optimus-placement`` against ``placement-cpsat``'s proven optimum."""
    rows = gap_rows(seeds, sizes, limit_s)
    tables.save(table, columns=["family", "jobs", "servers", "placed the most", "gap to the optimum median [worst]",
                                "certified gap median [worst]", "seconds median [worst]", "check --strict seconds",
                                "--strict passes", "`optimus-placement` gap", "exact solver seconds, optima proven, its --strict passes"],
                rows=rows, seeds=seeds, command="benchmarks/bench_placement.py --only lagrange",
                notes=["max tasks 4 per role; `placement-lagrange` with its defaults, timed after one warm solve of the "
                       "same instance (one process, nothing else running); the optimum is the exact solver's (CP-SAT; "
                       "HiGHS on `placement-typed`, where CP-SAT takes a minute) at a 300 s limit; gap to the "
                       "optimum: (Σ T_j - optimum) / optimum, differences below the exact solver's tolerance shown as 0; "
                       "where the optimum is not proven in time, the gap is taken to the exact solver's bound (so it "
                       "is at least the true gap); certified gap: the plan's own gap, from bounds `check --strict` replays; every "
                       "plan passes `check`"])
    print(tables.render(table))


def objective_gaps(seeds: list[int], sizes: list[tuple[str, int, int]], limit_s: float = 120.0,
                   table: str = "placement-objectives") -> None:
    """The other two objectives (max T_j, cross-node pairs): ``placement-lagrange`` against the exact optimum."""
    rows = []
    for objective in ("max", "cross_pairs"):
        rows += [[f"`{objective}`", *row] for row in gap_rows(seeds, sizes, limit_s, objective)]
    tables.save(table, columns=["objective", "family", "jobs", "servers", "placed the most",
                                "gap to the optimum median [worst]", "certified gap median [worst]",
                                "seconds median [worst]", "check --strict seconds", "--strict passes",
                                "`optimus-placement` gap", "exact solver seconds, optima proven, its --strict passes"],
                rows=rows, seeds=seeds, command="benchmarks/bench_placement.py --only objectives",
                notes=["max tasks 4 per role; `placement-lagrange` with `objective` set, timed after one warm solve of "
                       "the same instance (one process); the optimum is `placement-cpsat`'s at a "
                       f"{limit_s:.0f} s limit (where not proven, the gap is taken to its bound); gap: (value - optimum) "
                       "/ optimum; certified gap: the plan's own, from bounds `check --strict` replays; every plan "
                       "passes `check`"])
    print(tables.render(table))


def second_round(family: str, jobs: int, servers: int, seed: int) -> Instance:
    """A scheduler's second round: ``placement-lagrange`` places round one, 60 % of its placed
    jobs (drawn with ``seed``) still run where it put them (the instance's ``previous``), the
    rest finished, and as many new jobs arrive (another seed's draw)."""
    first_inst = generate_instance(family, jobs=jobs, servers=servers, seed=seed, max_tasks=4)
    arrivals = generate_instance(family, jobs=jobs, servers=servers, seed=seed + 1000, max_tasks=4).to_dict()
    first = schedopt.solve(first_inst, "placement-lagrange")
    rng = np.random.default_rng(seed)
    running = {j for j in sorted(first.placement) if rng.random() < 0.6}
    doc = first_inst.to_dict()
    doc["jobs"] = [j for j in doc["jobs"] if j["id"] in running]
    doc["allocation"] = {k: v for k, v in doc["allocation"].items() if k in running}
    for job in arrivals["jobs"][:jobs - len(running)]:
        old = job["id"]
        job["id"] = f"new-{old}"
        doc["jobs"].append(job)
        doc["allocation"][job["id"]] = arrivals["allocation"][old]
    doc["previous"] = {j: first.placement[j] for j in sorted(running)}
    doc["name"] = f"{family}-round2-{jobs}j-{servers}s-seed{seed}"
    return Instance.from_dict(doc)


def kept_optimum(inst: Instance, kept: schedopt.Plan, limit_s: float) -> tuple[Instance, schedopt.Plan]:
    """The exact optimum among placements that keep every running task where it runs (the
    heuristics' rule, when no running job grows): ``placement-cpsat`` places the new jobs on what the
    running ones leave (each server its own entry, its capacity less their tasks). The running
    jobs' T_j are as they run (taken from ``kept``, a plan that keeps them all)."""
    doc = inst.to_dict()
    running = set(inst.previous or {})
    demand = {j["id"]: j["roles"] for j in doc["jobs"]}
    used: dict[str, dict[str, float]] = {}
    for job, servers in (inst.previous or {}).items():
        for server, roles in servers.items():
            for role, n in roles.items():
                for r, v in demand[job][role]["demand"].items():
                    used.setdefault(server, {}).setdefault(r, 0.0)
                    used[server][r] += n * v
    names = iter(inst.server_names)
    servers = []
    for group in doc["servers"]:
        for _ in range(group["count"]):
            name = next(names)
            servers.append({**{k: v for k, v in group.items() if k not in ("name", "count", "capacity")}, "name": name,
                            "count": 1, "capacity": {r: max(0.0, v - used.get(name, {}).get(r, 0.0))
                                                     for r, v in group["capacity"].items()}})
    rest = {**doc, "name": doc["name"] + "-new-jobs", "servers": servers,
            "jobs": [j for j in doc["jobs"] if j["id"] not in running],
            "allocation": {k: v for k, v in doc["allocation"].items() if k not in running}}
    rest.pop("previous", None)
    assert all(job in kept.placement for job in running)  # the heuristic kept every running job
    new_jobs = Instance.from_dict(rest)
    return new_jobs, schedopt.solve(new_jobs, "placement-cpsat", time_limit=limit_s)


def incremental(seeds: list[int], sizes: list[tuple[str, int, int]], limit_s: float = 60.0,
                table: str = "placement-incremental") -> None:
    """Jobs already running (``previous``): the heuristics keep them in place (their ``keep``
    default), the exact model moves tasks only where that places more jobs (``moves: first``)."""
    schedopt.warm_up(["placement-milp", "placement-lagrange"])
    rows = []
    for family, jobs, servers in sizes:
        got: dict[str, dict[str, list]] = {}
        for seed in seeds:
            inst = second_round(family, jobs, servers, seed)
            for name, opts in (("placement-lagrange", {}), ("optimus-placement", {}),
                               ("placement-milp", {"time_limit": limit_s})):
                t0 = time.perf_counter()
                plan = schedopt.solve(inst, name, **opts)
                sec = time.perf_counter() - t0
                assert not schedopt.check(inst, plan), (name, seed)
                cell = got.setdefault(name, {k: [] for k in ("placed", "stopped", "moved", "value", "sec", "proven",
                                                                "bound", "strict")})
                cell["placed"].append(plan.objective.admitted)
                cell["stopped"].append(int(plan.metrics.get("stopped_jobs", 0)))
                cell["moved"].append(int(plan.metrics.get("moved_tasks", 0)))
                cell["value"].append(plan.objective.value)
                cell["sec"].append(sec)
                cell["proven"].append(plan.status == schedopt.Status.OPTIMAL)
                cell["bound"].append(plan.objective.admitted_bound if plan.objective.admitted_bound is not None
                                     else len(inst.jobs))
                cell["strict"].append(not schedopt.check(inst, plan, strict=True))
                print(f"  {inst.name} {name}: placed {plan.objective.admitted} (bound {cell['bound'][-1]}), stopped "
                      f"{cell['stopped'][-1]}, moved {cell['moved'][-1]}, Σ T_j {plan.objective.value:.4f}, "
                      f"{plan.status.value}, {sec:.2f} s", file=sys.stderr, flush=True)
            # the optimum the heuristics' rule allows: running jobs as they run, new jobs placed exactly
            lagrange = schedopt.solve(inst, "placement-lagrange")
            t0 = time.perf_counter()
            new_jobs, fresh = kept_optimum(inst, lagrange, limit_s)
            sec = time.perf_counter() - t0
            running_s = sum(float(lagrange.metrics["transfer_time_s"][j]) for j in inst.previous or {})
            cell = got.setdefault("exact, keeping running jobs", {k: [] for k in ("placed", "stopped", "moved", "value",
                                                                                   "sec", "proven", "bound", "strict")})
            cell["placed"].append(len(inst.previous or {}) + fresh.objective.admitted)
            cell["stopped"].append(0)
            cell["moved"].append(0)
            cell["value"].append(running_s + fresh.objective.value)
            cell["sec"].append(sec)
            cell["proven"].append(fresh.status == schedopt.Status.OPTIMAL)
            cell["bound"].append(len(inst.previous or {}) + (fresh.objective.admitted_bound
                                                             if fresh.objective.admitted_bound is not None
                                                             else fresh.objective.admitted))
            cell["strict"].append(not schedopt.check(new_jobs, fresh, strict=True))
            print(f"  {inst.name} kept optimum: placed {cell['placed'][-1]}, Σ T_j {cell['value'][-1]:.4f}, "
                  f"{fresh.status.value}, {sec:.2f} s", file=sys.stderr, flush=True)
        for name, cell in got.items():
            rows.append([f"`{family}`", str(jobs), str(servers), f"`{name}`",
                         " / ".join(str(x) for x in cell["placed"]), " / ".join(str(x) for x in cell["bound"]),
                         " / ".join(str(x) for x in cell["stopped"]), " / ".join(str(x) for x in cell["moved"]),
                         " / ".join(f"{x:.3f}" for x in cell["value"]),
                         f"{statistics.median(cell['sec']):.2f} [{max(cell['sec']):.2f}]",
                         f"{sum(cell['proven'])}/{len(seeds)}", f"{sum(cell['strict'])}/{len(seeds)}"])
    tables.save(table, columns=["family", "jobs", "servers", "solver", "placed, per seed", "placed count's certified bound",
                                "running jobs stopped", "tasks moved", "Σ T_j (s)", "seconds median [worst]",
                                "proven optimal", "--strict passes"],
                rows=rows, seeds=seeds, command="benchmarks/bench_placement.py --only incremental",
                notes=["a second round (`second_round`): round one placed by `placement-lagrange`, 60 % of its placed jobs "
                       "still running where it put them, the rest finished, as many new jobs arriving; heuristics with "
                       "their default `keep` (running tasks stay), `placement-milp` with its default `moves: first` at "
                       f"T = {limit_s:.0f} s; the certified count bound is any placement's (running tasks free to move "
                       "and running jobs free to stop); every plan passes `check`; 'exact, keeping running jobs': the "
                       "optimum of the heuristics' own rule, the running jobs as they run and `placement-cpsat` placing "
                       "the new ones on what they leave (`kept_optimum`; its count bound and --strict are that "
                       "sub-instance's)"])
    print(tables.render(table))


def main() -> None:
    quick = "--quick" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    if only in (None, "scale"):
        scale(runs=1 if quick else 3, suffix="-quick" if quick else "")
    if only in (None, "exact"):
        seeds = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 5
        exact_scale(10 if quick else 60, [("placement", 8, 5), ("placement-classes", 8, 5)] if quick else
                    [("placement", 16, 10), ("placement", 48, 32), ("placement", 100, 50), ("placement", 400, 200),
                     ("placement", 1000, 500), ("placement-classes", 100, 50), ("placement-classes", 200, 100),
                     ("placement-classes", 400, 200)], seeds, "placement-exact-quick" if quick else "placement-exact")
    if only in (None, "time"):
        heuristic_time(int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 5)
    if only in (None, "lagrange"):
        lagrange_gaps([41, 42] if quick else [41, 42, 43, 44, 45],
                      [("placement", 400, 200), ("placement-classes", 400, 200)] if quick else
                      [("placement", 400, 200), ("placement", 1000, 500), ("placement", 2000, 1000),
                       ("placement-classes", 400, 200), ("placement-classes", 1000, 500),
                       ("placement-classes", 2000, 1000), ("placement-typed", 400, 200), ("placement-typed", 1000, 500),
                       ("placement-typed", 2000, 1000)], table="placement-lagrange-quick" if quick else "placement-lagrange")
    if only in (None, "objectives"):
        objective_gaps([46, 47] if quick else [46, 47, 48, 49, 50],
                       [("placement", 400, 200)] if quick else
                       [("placement", 400, 200), ("placement", 1000, 500), ("placement-classes", 400, 200),
                        ("placement-classes", 1000, 500)], table="placement-objectives-quick" if quick else
                       "placement-objectives")
    if only in (None, "incremental"):
        incremental([41, 42] if quick else [41, 42, 43, 44, 45],
                    [("placement", 100, 50)] if quick else [("placement", 100, 50), ("placement", 400, 200)],
                    10 if quick else 60, table="placement-incremental-quick" if quick else "placement-incremental")
    if only in (None, "gaps"):
        heuristic_gaps(3 if quick else 20, jobs=30 if quick else 100, servers=12 if quick else 50,
                       suffix="-quick" if quick else "")


if __name__ == "__main__":
    main()
