"""Build a collection's records: materialise each catalog entry, run the exact
solvers and the best heuristics of its problem, keep the best plan every check
accepts, and give it the tightest bound some plan's certificate proves.

Certificates are about the instance, not the plan that carries them: a
Lagrangian bound with ``admit = k`` holds for every plan admitting at least k
jobs. So the best plan (say a heuristic's) may carry another solver's proof
(say the exact solver's, stopped at its time limit); ``check --strict`` decides,
as for any plan. A record is ``optimal`` only when that check verifies the
plan's "optimal"; otherwise it is ``open``, with the bound that was verified.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

from schedopt.bench.catalog import Entry, entries
from schedopt.bench.records import (COLLECTION, Collection, Provenance, Record, collection_dir, instance_checksum,
                                    read_plan, write_collection, write_plan)
from schedopt.bench.recipes import MissingData, materialize
from schedopt.instance import Instance
from schedopt.plan import Plan, Status, relative_gap
from schedopt.tolerances import OPTIMAL_GAP, improves

log = logging.getLogger("schedopt.bench")

#: the solvers whose plans and proofs a record is built from, per problem
BUILD_SOLVERS = {
    "allocation": ("optimus-milp", "optimus-cpsat", "optimus-lagrange", "optimus-greedy"),
    "quality": ("slaq-milp", "slaq-cpsat", "slaq-greedy"),
    "partition": ("dorm-milp", "dorm-cpsat", "drf-containers"),
    "placement": ("placement-milp", "placement-cpsat", "placement-lagrange", "optimus-placement"),
    "ps-assignment": ("paa", "mxnet-default"),
}
#: instances this small get a shorter time limit
TINY_JOBS = 12
TINY_TIME_LIMIT_S = 10.0
#: seconds and leaves the certification pass gives the branch search per open allocation record
CERTIFY_BUDGET_S = 120.0
CERTIFY_MAX_LEAVES = 20_000
#: ... and node LPs (a solve's search takes branching.node_lp_budget's; offline, the seconds bound it)
CERTIFY_MAX_NODE_LPS = 1_000_000
#: the MILP's time limit in the hard pass: an open record still open after it is tagged HARD_TAG
HARD_TIME_LIMIT_S = 600.0
HARD_TAG = "hard"


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def candidate_plans(instance: Instance, problem: str, time_limit: float) -> list[tuple[Plan, float | None]]:
    """Each build solver's plan that ``check`` accepts, with the time limit it ran under."""
    from schedopt.api import solve
    from schedopt.checking import check
    from schedopt.errors import InputError
    from schedopt.registry import solver_info

    out = []
    for name in BUILD_SOLVERS[problem]:
        info = solver_info(name)
        if info.unavailable is not None:
            log.warning("%s: %s unavailable: %s", instance.name, name, info.unavailable)
            continue
        limit = time_limit if info.supports_time_limit else None
        try:
            plan = solve(instance, name, time_limit=limit, seed=0)
        except InputError as exc:  # the solver refuses what the instance states
            log.info("%s: %s refuses: %s", instance.name, name, exc)
            continue
        if not plan.has_solution:
            continue
        wrong = check(instance, plan)
        if wrong:
            log.error("%s: %s's plan fails check: %s", instance.name, name, wrong[0])
            continue
        out.append((plan, limit))
    return out


def better(new: Plan, old: Plan, lexicographic: bool) -> bool:
    """Whether ``new`` beats ``old``: more jobs admitted (where the problem counts them
    first), else a better value by more than rounding (:func:`schedopt.tolerances.improves`)."""
    if lexicographic and (new.objective.admitted or 0) != (old.objective.admitted or 0):
        return (new.objective.admitted or 0) > (old.objective.admitted or 0)
    if new.objective.value is None:
        return False
    if old.objective.value is None:
        return True
    sign = 1.0 if new.objective.sense == "min" else -1.0
    return improves(sign * new.objective.value, sign * old.objective.value)


def best_plan(plans: list[Plan], lexicographic: bool) -> Plan:
    """The best of ``plans``; ties go to the first (the build solvers' order: exact first)."""
    best = plans[0]
    for plan in plans[1:]:
        if better(plan, best, lexicographic):
            best = plan
    return best


def with_proofs(plan: Plan, bound_from: Plan | None, count_from: Plan | None, total_jobs: int) -> Plan:
    """``plan`` claiming ``bound_from``'s objective bound and ``count_from``'s admitted
    bound with their proofs (None: no such claim), its gap and status restated."""
    obj = plan.objective.model_copy()
    cert: dict[str, Any] = {}
    obj.bound = obj.gap = obj.admitted_bound = None
    if bound_from is not None and bound_from.certificate is not None and bound_from.certificate.bound is not None:
        obj.bound = bound_from.objective.bound
        cert["bound"] = bound_from.certificate.bound
    if count_from is not None and count_from.certificate is not None and count_from.certificate.admitted_bound is not None:
        obj.admitted_bound = count_from.objective.admitted_bound
        cert["admitted_bound"] = count_from.certificate.admitted_bound
    obj.gap = relative_gap(obj.value, obj.bound)
    count_proven = obj.admitted is None or obj.admitted >= total_jobs or obj.admitted_bound == obj.admitted
    closed = obj.gap is not None and obj.gap <= OPTIMAL_GAP
    status = Status.OPTIMAL if closed and count_proven else (
        Status.HEURISTIC if plan.status == Status.HEURISTIC else Status.FEASIBLE)
    from schedopt.plan import Certificate

    return plan.model_copy(update={"objective": obj, "status": status,
                                   "certificate": Certificate(**cert) if cert else None})


def best_verified(instance: Instance, plans: list[Plan], lexicographic: bool) -> tuple[Plan, str | None]:
    """The best plan of ``plans`` with the tightest claims ``check --strict`` verifies, and
    the solver whose proof gives its bound."""
    from schedopt.checking import check_report

    best = best_plan(plans, lexicographic)
    J = len(instance.jobs)
    sign = 1.0 if best.objective.sense == "min" else -1.0
    proofs = [p for p in plans if p.certificate is not None]
    bounds = sorted([p for p in proofs if p.certificate and p.certificate.bound is not None and p.objective.bound is not None],
                    key=lambda p: -sign * (p.objective.bound or 0.0))
    counts = sorted([p for p in proofs if p.certificate and p.certificate.admitted_bound is not None
                     and p.objective.admitted_bound is not None], key=lambda p: p.objective.admitted_bound or 0)
    count_options: list[Plan | None] = [*counts, None]
    for b in [*bounds, None]:
        for c in count_options:
            candidate = with_proofs(best, b, c, J)
            report = check_report(instance, candidate, strict=True)
            if not report.violations and not report.unverified:
                return candidate, (b.solver if b is not None else None)
    raise RuntimeError(f"{instance.name}: no claim of the best plan ({best.solver}) passes check --strict")


def build_record(entry: Entry, data_dir: Any = None, plans_dir: Path | None = None) -> Record | None:
    """The record of ``entry`` (None when its data folder is absent); writes its plan into ``plans_dir``."""
    from schedopt import __version__

    try:
        instance = materialize(entry.recipe, entry.id, data_dir)
    except MissingData as exc:
        log.warning("%s: skipped, %s", entry.id, exc)
        return None
    limit = TINY_TIME_LIMIT_S if len(instance.jobs) <= TINY_JOBS else entry.time_limit_s
    started = time.perf_counter()
    found = candidate_plans(instance, entry.problem, limit)
    if not found:
        raise RuntimeError(f"{entry.id}: no build solver found a plan")
    plans = [p for p, _ in found]
    lexicographic = get_lexicographic(entry.problem)
    plan, bound_from = best_verified(instance, plans, lexicographic)
    limits = {p.solver: lim for p, lim in found}
    backend_optimal = any(p.status == Status.OPTIMAL and not better(plan, p, lexicographic) and not better(p, plan, lexicographic)
                          for p in plans)
    log.info("%s: %s %s in %.1f s", entry.id, plan.solver, plan.status.value, time.perf_counter() - started)
    rel = f"plans/{entry.id}.json.gz"
    if plans_dir is not None:
        write_plan(plans_dir / f"{entry.id}.json.gz", plan)
    o = plan.objective
    return Record(
        id=entry.id, set=entry.set, problem=entry.problem, family=entry.family, tags=list(entry.tags),
        benchmark=entry.benchmark, jobs=len(instance.jobs), servers=len(instance.server_names), recipe=entry.recipe,
        checksum=instance_checksum(instance), status="optimal" if plan.status == Status.OPTIMAL else "open",
        objective=o.name, sense=o.sense, best_known=o.value, admitted=o.admitted if lexicographic else None,
        bound=o.bound, admitted_bound=o.admitted_bound if lexicographic else None, plan=rel,
        backend_optimal=plan.status != Status.OPTIMAL and backend_optimal,
        provenance=Provenance(solver=plan.solver, bound_from=bound_from, options=plan.options,
                              time_limit_s=limits.get(plan.solver), seconds=plan.solve_seconds, date=now_iso(),
                              schedopt=__version__))


def staged_records(stage: Path, only: Iterable[str] | None = None,
                   shard: tuple[int, int] = (0, 1)) -> Iterator[tuple[Entry, Record]]:
    """The staged record of each catalog entry (those named in ``only``; every ``shard[1]``-th of
    them from ``shard[0]``), in catalog order; entries not staged are left out."""
    wanted = set(only) if only else None
    todo = [e for e in entries() if wanted is None or e.id in wanted]
    for i, entry in enumerate(todo):
        path = stage / "records" / f"{entry.id}.json"
        if i % shard[1] == shard[0] and path.exists():
            yield entry, Record.model_validate(json.loads(path.read_text()))


def stage_record(stage: Path, record: Record) -> None:
    """Write ``record`` as ``stage/records/ID.json``."""
    (stage / "records").mkdir(parents=True, exist_ok=True)
    (stage / "records" / f"{record.id}.json").write_text(json.dumps(record.model_dump(mode="json"), indent=1) + "\n")


def build(stage: Path, only: Iterable[str] | None = None, shard: tuple[int, int] = (0, 1), data_dir: Any = None) -> None:
    """Build the records of the catalog's entries (those named in ``only``; every ``shard[1]``-th
    from ``shard[0]``) into ``stage``: ``stage/records/ID.json`` and ``stage/plans/ID.json.gz``.
    An entry already built there is kept (a rerun builds what is missing)."""
    wanted = set(only) if only else None
    todo = [e for i, e in enumerate(entries()) if i % shard[1] == shard[0] and (wanted is None or e.id in wanted)]
    (stage / "records").mkdir(parents=True, exist_ok=True)
    for entry in todo:
        target = stage / "records" / f"{entry.id}.json"
        if target.exists():
            continue
        record = build_record(entry, data_dir, stage / "plans")
        if record is not None:
            stage_record(stage, record)


def collect(stage: Path, name: str = COLLECTION) -> Collection:
    """Gather the staged records in catalog order into the package's collection folder
    (records.json and plans/); an entry without a staged record is left out."""
    import shutil

    folder = collection_dir(name)
    records = []
    for entry, record in staged_records(stage):
        records.append(record)
        (folder / "plans").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(stage / "plans" / f"{entry.id}.json.gz", folder / "plans" / f"{entry.id}.json.gz")
    coll = Collection(collection=name, created=now_iso(), records=records)
    write_collection(folder, coll)
    return coll


SUMMARY_COLUMNS = ["set", "instances", "optimal (replayed)", "open", "open, a backend's optimum", "open, hard", "jobs",
                   "benchmark subset", "made from the data folder"]


def summary_rows(coll: Collection) -> list[list[Any]]:
    """Per set (and in all): instances, proven optimal, open, sizes, the benchmark subset and
    how many are made from the shared data folder (docs/benchmarks.md's schedlib table)."""
    rows = []
    groups = [(s, [r for r in coll.records if r.set == s]) for s in dict.fromkeys(r.set for r in coll.records)]
    for name, recs in [*groups, ("all", coll.records)]:
        rows.append([name if name == "all" else f"`{name}`", len(recs), sum(r.status == "optimal" for r in recs),
                     sum(r.status == "open" for r in recs), sum(r.backend_optimal for r in recs),
                     sum(HARD_TAG in r.tags for r in recs),
                     f"{min(r.jobs for r in recs):,}-{max(r.jobs for r in recs):,}", sum(r.benchmark for r in recs),
                     sum(r.recipe.data for r in recs)])
    return rows



def certify_open(stage: Path, budget_s: float = CERTIFY_BUDGET_S, data_dir: Any = None) -> list[str]:
    """For each staged allocation record that is open while an exact solver's backend called its
    plan optimal, search for a branch certificate (``branch-lagrangian``; allocation's Σ-time
    objective) with a larger budget than a solve gives itself; a found one that ``check
    --strict`` verifies makes the record optimal. Returns the ids certified."""
    from schedopt.allocation.branching import branch_proof
    from schedopt.plan import Certificate

    done = []
    for entry, record in staged_records(stage):
        if entry.problem != "allocation" or record.status != "open" or not record.backend_optimal or record.best_known is None:
            continue
        instance = materialize(entry.recipe, entry.id, data_dir)
        if instance.policy is not None and instance.policy.objective != "total_remaining_time":
            continue
        plan = read_plan(stage / "plans" / f"{entry.id}.json.gz")
        J = len(instance.jobs)
        admitted = plan.objective.admitted or 0
        got = branch_proof(instance, record.best_known, admit=admitted if admitted < J else None,
                           time_limit_s=budget_s, max_leaves=CERTIFY_MAX_LEAVES, max_node_lps=CERTIFY_MAX_NODE_LPS)
        if got is None:
            log.info("%s: no branch certificate found (budget %.0f s)", entry.id, budget_s)
            continue
        tree_bound, proof, info = got
        lender = plan.model_copy(update={"objective": plan.objective.model_copy(update={"bound": tree_bound}),
                                         "certificate": Certificate(bound=proof, admitted_bound=(
                                             plan.certificate.admitted_bound if plan.certificate else None))})
        claimed, _ = best_verified(instance, [plan, lender], get_lexicographic(entry.problem))
        if claimed.status != Status.OPTIMAL:
            continue
        write_plan(stage / "plans" / f"{entry.id}.json.gz", claimed)
        o = claimed.objective
        record = record.model_copy(update={
            "status": "optimal", "bound": o.bound, "admitted_bound": o.admitted_bound, "backend_optimal": False,
            "provenance": record.provenance.model_copy(update={"bound_from": f"branch-lagrangian search ({info.get('branch_leaves')} leaves)"})})
        stage_record(stage, record)
        log.info("%s: certified optimal by a branch certificate (%s)", entry.id, info)
        done.append(entry.id)
    return done


def get_lexicographic(problem: str) -> bool:
    from schedopt.problems import get_problem

    return get_problem(problem).lexicographic_admission



def harden_open(stage: Path, only: Iterable[str] | None = None, shard: tuple[int, int] = (0, 1),
                time_limit_s: float = HARD_TIME_LIMIT_S, data_dir: Any = None) -> list[str]:
    """For each staged open record that no backend called optimal (a real gap), run the problem's
    first exact solver (its MILP on HiGHS) with ``time_limit_s``; keep a better plan (with the tightest claims ``check
    --strict`` verifies, its own or the record's proofs), and tag the record ``hard`` when it is
    still open: no replayable proof after that long. Returns the ids tagged."""
    from schedopt.api import solve
    from schedopt.checking import check
    from schedopt.registry import solver_info

    tagged = []
    for entry, record in staged_records(stage, only, shard):
        if record.status != "open" or record.backend_optimal or record.bound is None:
            continue
        instance = materialize(entry.recipe, entry.id, data_dir)
        old = read_plan(stage / "plans" / f"{entry.id}.json.gz")
        plans = [old]
        exact = [n for n in BUILD_SOLVERS[entry.problem] if solver_info(n).exact and solver_info(n).unavailable is None]
        for name in exact[:1]:  # the MILP (HiGHS): one solver's 10 minutes
            plan = solve(instance, name, time_limit=time_limit_s, seed=0)
            if plan.has_solution and not check(instance, plan):
                plans.append(plan)
            log.info("%s: %s %s %s in %.0f s", entry.id, name, plan.status.value, plan.objective.value, plan.solve_seconds)
        lexicographic = get_lexicographic(entry.problem)
        best = best_plan(plans, lexicographic)
        claimed, bound_from = best_verified(instance, [best, *[p for p in plans if p is not best]], lexicographic)
        o = claimed.objective
        update: dict[str, Any] = {"bound": o.bound, "admitted_bound": o.admitted_bound if lexicographic else None,
                                  "status": "optimal" if claimed.status == Status.OPTIMAL else "open"}
        if best is not old:
            update.update(best_known=o.value, admitted=o.admitted if lexicographic else None,
                          history=[*record.history, {"best_known": record.best_known, "bound": record.bound,
                                                     "provenance": record.provenance.model_dump(mode="json")}],
                          provenance=Provenance(solver=best.solver, bound_from=bound_from, options=best.options,
                                                time_limit_s=time_limit_s, seconds=best.solve_seconds, date=now_iso(),
                                                schedopt=record.provenance.schedopt))
        backend = any(p.status == Status.OPTIMAL and not better(best, p, lexicographic) for p in plans[1:])
        update["backend_optimal"] = update["status"] == "open" and backend
        if update["status"] == "open" and not backend:
            update["tags"] = [*record.tags, HARD_TAG] if HARD_TAG not in record.tags else record.tags
            tagged.append(entry.id)
        write_plan(stage / "plans" / f"{entry.id}.json.gz", claimed)
        stage_record(stage, record.model_copy(update=update))
    return tagged
