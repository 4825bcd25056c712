"""The collection as a user sees it: choosing records by set, materialising
their instances, reading their best known plans, and a plan's gap to a record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedopt.bench.records import COLLECTION, Collection, Record, load_collection, read_plan
from schedopt.bench.recipes import MissingData, check_record_instance, materialize
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.io import did_you_mean
from schedopt.plan import Plan
from schedopt.tolerances import improves

#: the sets of a collection, one per problem family of the library
SETS = ("allocation", "quality", "partition", "placement", "ps-assignment")
#: selects the benchmark subset (alone, or after a set: ``allocation:benchmark``)
BENCHMARK = "benchmark"


@dataclass
class Selection:
    """The records a SET argument names, with the folder each one's plan is in."""

    collection: Collection
    records: list[Record]
    folders: dict[str, Path] = field(default_factory=dict)

    def plan_path(self, record: Record) -> Path:
        return self.folders[record.id] / record.plan


def select(spec: str = "all", *, submissions: list[Path] | None = None, collection: str = COLLECTION) -> Selection:
    """The records ``spec`` names: ``all`` (or the collection's name), ``benchmark`` (the
    quick subset), a set (``allocation``, ...), ``SET:benchmark``, or a record id; several
    joined by commas. Submission folders lay their records over the package's."""
    coll, folders = load_collection(collection, submissions)
    by_id = {r.id: r for r in coll.records}
    chosen: dict[str, Record] = {}
    for token in [t.strip() for t in spec.split(",") if t.strip()] or ["all"]:
        name, _, sub = token.partition(":")
        if sub and sub != BENCHMARK:
            raise InputError("SET", f'"{token}": after ":" only "{BENCHMARK}" is known')
        if name in ("all", coll.collection):
            picked = coll.records
        elif name == BENCHMARK:
            picked = [r for r in coll.records if r.benchmark]
        elif name in SETS:
            picked = [r for r in coll.records if r.set == name]
        elif name in by_id:
            picked = [by_id[name]]
        else:
            raise InputError("SET", f'unknown set "{token}"; known: all, {BENCHMARK}, {", ".join(SETS)}, '
                                    f"SET:{BENCHMARK}, or a record id (bench list){did_you_mean(name, [*SETS, *by_id])}")
        if sub:
            picked = [r for r in picked if r.benchmark]
        for r in picked:
            chosen[r.id] = r
    order = {r.id: i for i, r in enumerate(coll.records)}
    return Selection(coll, sorted(chosen.values(), key=lambda r: order[r.id]), folders)


def record_instance(record: Record, data_dir: Any = None) -> Instance:
    """``record``'s instance, materialised and matched by checksum. Raises
    :class:`~schedopt.bench.recipes.MissingData` when its data folder is absent and
    ValueError when the instance made here is not the recorded one."""
    instance = materialize(record.recipe, record.id, data_dir)
    why = check_record_instance(record, instance)
    if why is not None:
        raise ValueError(f"{record.id}: {why}")
    return instance


@dataclass
class BenchInstance:
    """A record with its instance (``instance``: None when the data folder is absent)."""

    record: Record
    instance: Instance | None
    plan_path: Path
    skipped: str | None = None

    @property
    def best_plan(self) -> Plan:
        """The stored best known plan."""
        return read_plan(self.plan_path)


def instances(spec: str = BENCHMARK, *, data_dir: Any = None, submissions: list[Path] | None = None) -> list[BenchInstance]:
    """The records ``spec`` names (see :func:`select`) with their materialised instances;
    a record whose data folder is absent comes with ``instance=None`` and ``skipped`` saying why."""
    sel = select(spec, submissions=submissions)
    out = []
    for record in sel.records:
        try:
            inst: Instance | None = record_instance(record, data_dir)
            why = None
        except MissingData as exc:
            inst, why = None, str(exc)
        out.append(BenchInstance(record, inst, sel.plan_path(record), why))
    return out


@dataclass(frozen=True)
class RecordGap:
    """A plan against a record: ``gap`` is |value - best| / |value| with the sign of "worse"
    (negative: better than the best known), inf when it admits fewer jobs; ``improves``
    when it beats the record by more than rounding (more jobs admitted, or a better value)."""

    gap: float
    improves: bool
    fewer_admitted: bool = False

    def as_json(self) -> float | None:
        return None if math.isinf(self.gap) else self.gap


def gap_to_record(plan: Plan, record: Record) -> RecordGap:
    """How far ``plan`` is from ``record``'s best known (lexicographic where the problem counts jobs first)."""
    o = plan.objective
    if record.admitted is not None and o.admitted is not None and o.admitted != record.admitted:
        if o.admitted < record.admitted:
            return RecordGap(math.inf, False, True)
        return RecordGap(-math.inf, True)
    v, b = o.value, record.best_known
    if v is None or b is None:
        return RecordGap(math.inf if v is None else -math.inf, v is not None)
    sign = 1.0 if record.sense == "min" else -1.0
    worse_by = sign * (v - b)
    better = improves(sign * v, sign * b)
    if worse_by == 0 or (worse_by < 0 and not better):
        return RecordGap(0.0, False)
    if v == 0:
        return RecordGap(math.inf if worse_by > 0 else -math.inf, better)
    return RecordGap(worse_by / abs(v), better)
