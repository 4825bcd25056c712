"""The benchmark library's records: what each instance is, how it is made, its
best known plan and the proven bound, as MIPLIB's ``.solu`` file keeps them.

A collection (``schedlib-2026.1``) is a folder inside the package:
``records.json`` (one :class:`Record` per instance) and ``plans/ID.json.gz``
(the best known plan, whose certificate ``schedopt check --strict`` replays).
A submission (an improvement found by ``bench run --submit DIR``) is a folder of
the same shape holding only the records it changes; :func:`load_collection`
lays it over the package's records.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from schedopt.errors import InputError
from schedopt.io import problems_from_validation
from schedopt.plan import Plan

RECORDS_SCHEMA = "schedopt/bench-records@1"
#: the collection this version of the library ships
COLLECTION = "schedlib-2026.1"
#: where collections live inside the package
COLLECTIONS_DIR = Path(__file__).resolve().parent / "collections"
#: significant digits of every float when an instance is hashed (:func:`instance_checksum`)
CHECKSUM_DIGITS = 12


class Recipe(BaseModel):
    """How an instance is made, deterministic in ``seed``: a ``schedopt generate``
    family (``family``, ``jobs``, ``servers``, ``max_tasks``) or a function of the
    testing kit (``kit``: ``random_typed_instance``, ...), then ``transforms``
    (``objective``: the policy's objective; ``running``: jobs running now, see
    :mod:`schedopt.bench.recipes`)."""

    model_config = ConfigDict(extra="forbid")

    family: str | None = Field(None, description="schedopt generate family")
    kit: str | None = Field(None, description="a random_*_instance function of schedopt.testing")
    jobs: int | None = Field(None, ge=0, description="generate --jobs")
    servers: int | None = Field(None, ge=1, description="generate --servers")
    max_tasks: int = Field(32, ge=1, description="generate --max-tasks")
    seed: int = Field(0, ge=0, description="generate --seed (or the kit function's seed)")
    transforms: dict[str, Any] = Field(default_factory=dict, description="objective: NAME; running: {share, restart_max_s}")
    data: bool = Field(False, description="reads the shared data folder (materialised at run time, matched by checksum)")

    @model_validator(mode="after")
    def _one_maker(self) -> "Recipe":
        if (self.family is None) == (self.kit is None):
            raise ValueError("a recipe names exactly one of family and kit")
        if self.family is not None and (self.jobs is None or self.servers is None):
            raise ValueError("a family recipe names jobs and servers")
        return self

    def command(self) -> str:
        """The recipe as the command that makes it (before its transforms)."""
        if self.kit is not None:
            return f"schedopt.testing.{self.kit}({self.seed})"
        return (f"schedopt generate {self.family} --jobs {self.jobs} --servers {self.servers} "
                f"--seed {self.seed} --max-tasks {self.max_tasks}")


class Provenance(BaseModel):
    """Who found the best known plan, and who proved the bound."""

    model_config = ConfigDict(extra="forbid")

    solver: str = Field(description="the solver whose plan is the best known")
    bound_from: str | None = Field(None, description="the solver whose certificate proves the bound")
    options: dict[str, Any] = Field(default_factory=dict, description="the solver's options")
    time_limit_s: float | None = Field(None, description="the time limit of the solve, seconds")
    seconds: float | None = Field(None, description="the solve's wall time, seconds")
    date: str = Field(description="when, ISO 8601")
    schedopt: str = Field(description="the schedopt version")


class Record(BaseModel):
    """One instance of a collection and what is known about it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="unique in the collection; the instance's name")
    set: str = Field(description="allocation, quality, partition, placement or ps-assignment")
    problem: str = Field(description="the registered problem the instance poses")
    family: str = Field(description="the generator family (or the kit function)")
    tags: list[str] = Field(default_factory=list, description="typed, quotas, running, jct, contended, uncontended, tiny, ...")
    benchmark: bool = Field(False, description="in the benchmark subset (quick runs)")
    jobs: int = Field(ge=0, description="jobs in the instance")
    servers: int = Field(ge=0, description="servers after expanding count")
    recipe: Recipe = Field(description="how the instance is made")
    checksum: str = Field(description="sha256 of the materialised instance (instance_checksum)")
    status: Literal["optimal", "open", "infeasible"] = Field(description="optimal: the best plan is proven optimal by a replayable certificate; open: not proven")
    objective: str = Field(description="the objective's name")
    sense: Literal["min", "max"] = Field(description="min or max")
    best_known: float | None = Field(description="the best known plan's objective value")
    admitted: int | None = Field(None, description="jobs the best known plan admits (placed), where the problem counts them first")
    bound: float | None = Field(None, description="a proven bound on the optimum (replayed from the stored plan's certificate)")
    admitted_bound: int | None = Field(None, description="a proven upper bound on the jobs any plan admits")
    backend_optimal: bool = Field(False, description="an open record whose best known an exact solver's branch and bound "
                                                    "calls optimal: its word, which no certificate lets anyone replay")
    plan: str = Field(description="the stored plan, relative to the collection folder")
    provenance: Provenance = Field(description="who found the plan and who proved the bound")
    history: list[dict[str, Any]] = Field(default_factory=list, description="earlier best known values (improvements keep them)")

    @property
    def gap(self) -> float | None:
        """The record's own gap |best - bound| / |best| (None without a bound)."""
        if self.best_known is None or self.bound is None:
            return None
        if self.best_known == 0:
            return 0.0 if self.bound == 0 else math.inf
        return abs(self.best_known - self.bound) / abs(self.best_known)


class Collection(BaseModel):
    """``records.json``: a collection's records, in a stable order."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["schedopt/bench-records@1"] = Field(RECORDS_SCHEMA, alias="schema", description="format tag")
    collection: str = Field(description="the collection's name and version, e.g. schedlib-2026.1")
    created: str = Field(description="when the records were built, ISO 8601")
    records: list[Record] = Field(description="one record per instance")


def collection_dir(name: str = COLLECTION) -> Path:
    return COLLECTIONS_DIR / name


def read_collection(folder: Path) -> Collection:
    """The collection in ``folder`` (its ``records.json``); InputError naming the file and field."""
    path = folder / "records.json"
    if not path.is_file():
        raise InputError(str(path), "no records.json here: not a benchmark collection or submission folder")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(str(path), f"cannot read: {exc}") from None
    try:
        coll = Collection.model_validate(data)
    except ValidationError as exc:
        raise InputError(str(path), problems_from_validation(exc)) from None
    ids = [r.id for r in coll.records]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise InputError(str(path), f"records: ids {dupes[:5]} appear twice")
    return coll


def write_collection(folder: Path, coll: Collection) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(coll.model_dump(mode="json", by_alias=True), indent=1, sort_keys=False) + "\n"
    (folder / "records.json").write_text(text, encoding="utf-8")


def load_collection(name: str = COLLECTION, submissions: list[Path] | None = None) -> tuple[Collection, dict[str, Path]]:
    """The package's collection ``name`` with each submission folder's records laid
    over it (by id; a submission's record replaces the package's), and for each id
    the folder its plan path is relative to."""
    folder = collection_dir(name)
    if not folder.is_dir():
        known = sorted(p.name for p in COLLECTIONS_DIR.iterdir() if p.is_dir()) if COLLECTIONS_DIR.is_dir() else []
        raise InputError("--collection", f'no collection "{name}"; this library ships: {", ".join(known) or "none"}')
    coll = read_collection(folder)
    where = {r.id: folder for r in coll.records}
    by_id = {r.id: i for i, r in enumerate(coll.records)}
    for sub in submissions or []:
        extra = read_collection(Path(sub))
        if extra.collection != coll.collection:
            raise InputError(str(Path(sub) / "records.json"), f'collection: "{extra.collection}", expected "{coll.collection}"')
        for rec in extra.records:
            if rec.id not in by_id:
                raise InputError(str(Path(sub) / "records.json"), f'records: "{rec.id}" is not an instance of {coll.collection}')
            coll.records[by_id[rec.id]] = rec
            where[rec.id] = Path(sub)
    return coll, where


def read_plan(path: Path) -> Plan:
    """A stored plan (``.json.gz`` or ``.json``)."""
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        data = json.loads(raw)
    except (OSError, ValueError, EOFError) as exc:
        raise InputError(str(path), f"cannot read the stored plan: {exc}") from None
    return Plan.from_dict(data, source=str(path))


def write_plan(path: Path, plan: Plan) -> None:
    """``plan`` as gzipped JSON, byte for byte the same for the same plan (no time stamp)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(plan.to_dict(), separators=(",", ":"), sort_keys=True).encode()
    path.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))


def _canonical(value: Any) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        v = float(f"{value:.{CHECKSUM_DIGITS}g}")
        return int(v) if v.is_integer() else v
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def instance_checksum(instance: Any) -> str:
    """``sha256:`` of the instance's document (``Instance.to_dict``) as canonical JSON:
    keys sorted, no spaces, every float at 12 significant digits (integral floats as
    integers), so the last bits of a platform's libm do not change it."""
    doc = _canonical(instance.to_dict())
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
