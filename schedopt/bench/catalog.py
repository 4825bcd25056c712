"""What ``schedlib-2026.1`` holds: every instance's recipe, set and tags, the
input of :mod:`schedopt.bench.build` (the records it writes are what
``bench list``, ``run`` and ``verify`` read).

Sizes run from tiny (brute-forceable) to 16,000 jobs; "contended" clusters
cannot run every job (a quarter as many servers as jobs, for Optimus's jobs
about one GPU per four jobs), "uncontended" ones can. The benchmark subset
(``benchmark``) is about a third: every set, no instance past 4,000 jobs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedopt.bench.records import Recipe


@dataclass(frozen=True)
class Entry:
    """One instance to build: its id, set, problem, tags and recipe."""

    id: str
    set: str
    problem: str
    family: str
    recipe: Recipe
    tags: tuple[str, ...] = ()
    benchmark: bool = False
    #: the exact solvers' time limit when the record is built, seconds
    time_limit_s: float = 60.0
    extra: dict[str, Any] = field(default_factory=dict)


def _gen(set_: str, problem: str, family: str, jobs: int, servers: int, seed: int, *, max_tasks: int = 32,
         tags: tuple[str, ...] = (), benchmark: bool = False, data: bool = False, transforms: dict[str, Any] | None = None,
         prefix: str | None = None) -> Entry:
    label = prefix or family
    suffix = f"-t{max_tasks}" if max_tasks != 32 else ""
    rid = f"{label}-{jobs}j-{servers}s{suffix}-s{seed}"
    recipe = Recipe(family=family, jobs=jobs, servers=servers, seed=seed, max_tasks=max_tasks,
                    transforms=transforms or {}, data=data)
    return Entry(rid, set_, problem, family, recipe, tags, benchmark)


def _kit(function: str, label: str, seed: int, tags: tuple[str, ...], benchmark: bool = False) -> Entry:
    return Entry(f"{label}-s{seed}", "allocation", "allocation", label, Recipe(kit=function, seed=seed), tags, benchmark)


def _allocation() -> list[Entry]:
    out: list[Entry] = []
    for jobs in (8, 50, 200, 1000, 4000, 16000):
        tasks = 3 if jobs == 8 else 32
        size = ("tiny",) if jobs == 8 else ()
        for seed in (1, 2, 3) if jobs in (200, 1000) else (1, 2):
            for tag, servers in (("contended", max(3, jobs // 4)), ("uncontended", 4 * jobs if jobs > 8 else 16)):
                if seed == 3 and tag == "uncontended":
                    continue
                out.append(_gen("allocation", "allocation", "optimus", jobs, servers, seed, max_tasks=tasks,
                                tags=size + (tag,), benchmark=seed == 1 and jobs <= 4000 and (tag == "contended" or jobs <= 200)))
    for jobs in (50, 1000, 16000):
        for seed in (1, 2):
            out.append(_gen("allocation", "allocation", "optimus", jobs, max(3, jobs // 4), seed, tags=("jct", "contended"),
                            transforms={"objective": "jct_weighted_time"}, prefix="optimus-jct", benchmark=seed == 1 and jobs <= 1000))
    for jobs in (50, 1000, 4000):
        for seed in (1, 2):
            out.append(_gen("allocation", "allocation", "optimus", jobs, jobs, seed, tags=("running",),
                            transforms={"running": {"share": 0.67, "restart_max_s": 400}}, prefix="optimus-running",
                            benchmark=seed == 1 and jobs <= 1000))
    out.append(_gen("allocation", "allocation", "optimus-testbed", 9, 13, 0, tags=("paper",), benchmark=True))
    for seed in (1, 2, 3):
        out.append(_gen("allocation", "allocation", "optimus-workload", 30, 13, seed, tags=("paper",), benchmark=seed == 1))
    out.append(_gen("allocation", "allocation", "poisson", 200, 100, 1, benchmark=True))
    out.append(_gen("allocation", "allocation", "poisson", 2000, 1000, 1))
    kits = (("random_typed_instance", "kit-typed", ("tiny", "typed")), ("random_quota_instance", "kit-quota", ("tiny", "typed", "quotas")),
            ("random_restart_instance", "kit-restart", ("tiny", "running")), ("random_objective_instance", "kit-jct", ("tiny", "jct")),
            ("random_packing_instance", "kit-packing", ("packing",)))
    for function, label, tags in kits:
        for seed in (1, 2, 3, 4, 5) if label in ("kit-typed", "kit-quota") else (1, 2, 3):
            out.append(_kit(function, label, seed, tags, benchmark=seed == 1))
    # from the shared data folder (materialised at run time)
    for jobs, servers in ((30, 13), (200, 80), (1000, 400)):
        for seed in (1, 2):
            out.append(_gen("allocation", "allocation", "dl2", jobs, servers, seed, max_tasks=16, tags=("measured",),
                            data=True, benchmark=seed == 1 and jobs <= 200))
    out.append(_gen("allocation", "allocation", "dl2-fitted", 200, 80, 1, max_tasks=16, tags=("measured",), data=True))
    for jobs in (100, 1000, 4000, 16000):
        for seed in (1, 2):
            out.append(_gen("allocation", "allocation", "gavel", jobs, max(4, jobs // 4), seed, tags=("typed", "measured"),
                            data=True, benchmark=seed == 1 and jobs <= 1000))
    for jobs, servers in ((200, 100), (2000, 1000)):
        for seed in (1, 2):
            out.append(_gen("allocation", "allocation", "philly", jobs, servers, seed, tags=("trace",), data=True,
                            benchmark=seed == 1 and jobs <= 200))
    for jobs in (100, 1000, 4000):
        for seed in (1, 2):
            out.append(_gen("allocation", "allocation", "philly-tenants", jobs, max(8, jobs // 4), seed,
                            tags=("typed", "quotas", "trace"), data=True, benchmark=seed == 1 and jobs <= 1000))
    for seed in (1, 2):
        out.append(_gen("allocation", "allocation", "optimus-faithful", 100, 50, seed, tags=("measured",), data=True,
                        benchmark=seed == 1))
    return out


def _quality() -> list[Entry]:
    out: list[Entry] = []
    for jobs in (10, 40, 200, 1000, 4000, 16000):
        tasks = 4 if jobs == 10 else 32
        for tag, servers in (("contended", max(1, jobs // 16)), ("uncontended", max(2, jobs // 2))):
            for seed in (1, 2) if tag == "contended" and jobs <= 4000 else (1,):
                out.append(_gen("quality", "quality", "slaq", jobs, servers, seed, max_tasks=tasks,
                                tags=(("tiny",) if jobs == 10 else ()) + (tag,), benchmark=seed == 1 and jobs <= 4000 and tag == "contended"))
    return out


def _partition() -> list[Entry]:
    out: list[Entry] = []
    for jobs, servers in ((10, 5), (0, 20), (100, 40), (500, 1000)):
        for seed in (1, 2):
            out.append(_gen("partition", "partition", "dorm-table2", jobs, servers, seed, max_tasks=8 if jobs == 500 else 32,
                            tags=("tiny",) if jobs == 10 else ("paper",) if jobs == 0 else (), benchmark=seed == 1 and jobs <= 100))
    for jobs, servers in ((50, 100), (200, 400), (500, 1000)):
        for seed in (1, 2):
            out.append(_gen("partition", "partition", "alibaba-dorm", jobs, servers, seed, max_tasks=8 if jobs == 500 else 32,
                            tags=("trace",), data=True, benchmark=seed == 1 and jobs <= 50))
    return out


def _placement() -> list[Entry]:
    out: list[Entry] = []
    for family, sizes in (("placement", (10, 100, 400, 1000, 2000)), ("placement-classes", (10, 100, 400)),
                          ("placement-typed", (10, 100, 400, 1000))):
        for jobs in sizes:
            for seed in (1, 2, 3) if jobs in (400, 1000) and family == "placement" else (1, 2):
                servers = max(3, jobs // 2) if seed != 2 else max(2, jobs // 4)  # seed 2: contended
                out.append(_gen("placement", "placement", family, jobs, servers, seed, max_tasks=2 if jobs == 10 else 4,
                                tags=(("tiny",) if jobs == 10 else ()) + (("contended",) if seed == 2 else ()) +
                                (("typed",) if family == "placement-typed" else ()),
                                benchmark=seed == 1 and jobs <= 400))
    return out


def _ps_assignment() -> list[Entry]:
    out: list[Entry] = []
    for jobs, ps in ((1, 2), (3, 4), (5, 10), (9, 10), (9, 20), (9, 32)):
        out.append(_gen("ps-assignment", "ps-assignment", "optimus-paa", jobs, 13, 0, max_tasks=ps, tags=("measured",),
                        data=True, benchmark=jobs <= 5))
    return out


def entries() -> list[Entry]:
    """Every instance of the collection, in the order the records keep."""
    out = _allocation() + _quality() + _partition() + _placement() + _ps_assignment()
    ids = [e.id for e in out]
    assert len(set(ids)) == len(ids), "catalog ids must be unique"
    return out
