"""The sweep spec (``schema: schedopt/sweep@1``) and its expansion into cells.

A simulation sweep runs every workload × seed × load × scheduler; a solve
sweep every instance × seed × solver × time limit. A cell is a plain dict of
every parameter; its key hashes that dict, the library version and, for a
workload or instance file, the file's bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from schedopt.errors import FieldProblem, InputError
from schedopt.io import problems_from_validation, read_document

SWEEP_SCHEMA = "schedopt/sweep@1"

#: a finite number of seconds (no .inf, no NaN)
Seconds = Annotated[float, Field(allow_inf_nan=False)]
#: a seed every solver and the simulator take
Seed = Annotated[int, Field(ge=0, lt=2**32)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WorkloadSpec(_Strict):
    """A generated family (``family`` with its sizes; regenerated per seed) or a file."""

    family: str | None = Field(None, description="instance family of `schedopt generate` (e.g. optimus-workload)")
    file: str | None = Field(None, description="a workload or instance file, relative to the spec's folder")
    jobs: int = Field(30, ge=1, le=100_000, description="jobs, for a family")
    servers: int = Field(13, ge=1, le=100_000, description="servers, for a family")
    max_tasks: int = Field(16, ge=1, le=1024, description="most tasks per role, for a family")

    @model_validator(mode="after")
    def _one_source(self) -> "WorkloadSpec":
        if (self.family is None) == (self.file is None):
            raise ValueError("give exactly one of family or file")
        return self

    def label(self) -> str:
        return f"{self.family}-{self.jobs}j-{self.servers}s" if self.family else Path(self.file or "").stem


class SchedulerSpec(_Strict):
    """A solver with its options, and for simulations an optional placement solver."""

    name: str = Field(description="registered solver name")
    placement: str | None = Field(None, description="placement solver run after each allocation (simulations)")
    options: dict[str, Any] = Field(default_factory=dict, description="the solver's options")

    def label(self) -> str:
        """The name the results use: the solver, its placement, and its options (two
        entries of one solver with other options are two schedulers)."""
        opts = ", ".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return self.name + (f"+{self.placement}" if self.placement else "") + (f" ({opts})" if opts else "")


class SimulatorSpec(_Strict):
    """Settings of `schedopt simulate`, the same for every cell."""

    interval_s: Seconds = Field(600.0, gt=0, description="scheduling interval, seconds")
    restart_overhead_s: Seconds = Field(60.0, ge=0, description="seconds lost per restart")
    restart_aware: bool = Field(True, description="the scheduler sees restart costs")
    communication_aware: bool = Field(True, description="placement changes PS jobs' speed")
    ps_assignment: str | None = Field(None, description="ps-assignment solver setting PS imbalance")
    error_steps: float = Field(0.0, ge=0, lt=1, description="estimation error of remaining steps")
    error_speed: float = Field(0.0, ge=0, lt=1, description="estimation error of speeds")
    estimation: Literal["truth", "online"] = Field("truth", description="what the scheduler sees: the truth (with the errors) or online fits of loss curves and speeds")
    horizon_s: Seconds | None = Field(None, gt=0, description="stop after this many seconds")


class SweepSpec(_Strict):
    """A sweep: which cells to run. Load factor L divides every arrival time by L
    (L = 2: jobs arrive twice as fast); solve sweeps ignore loads."""

    schema_: Literal["schedopt/sweep@1"] = Field(alias="schema", description="format tag")
    name: str = Field("sweep", description="name of the sweep")
    kind: Literal["simulate", "solve"] = Field("simulate", description="simulations or solves")
    workloads: list[WorkloadSpec] = Field(min_length=1, description="workloads (simulate) or instances (solve)")
    seeds: list[Seed] = Field(default_factory=lambda: [0], min_length=1, description="seeds in [0, 2**32): generation, simulation, solver")
    loads: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(default_factory=lambda: [1.0], min_length=1, description="arrival-rate factors > 0 (simulate)")
    schedulers: list[SchedulerSpec] = Field(min_length=1, description="schedulers (simulate) or solvers (solve)")
    time_limits: list[Annotated[float, Field(ge=0, allow_inf_nan=False)] | None] = Field(default_factory=lambda: [None], min_length=1, description="time limits, seconds >= 0 (solve)")
    simulator: SimulatorSpec = Field(default_factory=SimulatorSpec, description="simulator settings (simulate)")
    data_dir: str | None = Field(None, description="shared data folder for families that read it")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _positive_loads(self) -> "SweepSpec":
        if any(not (load > 0) for load in self.loads):
            raise ValueError("loads: every load factor is > 0")
        labels = [s.label() for s in self.schedulers]
        twice = sorted({x for x in labels if labels.count(x) > 1})
        if twice:
            raise ValueError(f"schedulers: {', '.join(twice)} listed twice with the same options (their results would merge)")
        return self


def load_spec(path: str | os.PathLike[str]) -> tuple[SweepSpec, Path]:
    """The spec in ``path`` and the folder its relative file names start from."""
    doc = read_document(path)
    spec = spec_from_dict(doc, source=str(path))
    base = Path(path).resolve().parent
    check_spec(spec, base, str(path))
    return spec, base


def check_spec(spec: SweepSpec, base: Path, source: str = "<spec>") -> None:
    """Everything a cell would refuse, refused now, before any folder is made or
    any cell runs: solver and placement names (and that they compose), each
    solver's options, families, workload files that are readable instances.
    One :class:`InputError` naming ``source`` and each field."""
    from schedopt.instance import load_instance
    from schedopt.problems import families
    from schedopt.registry import solver_info

    problems: list[FieldProblem] = []
    known = families()
    for i, w in enumerate(spec.workloads):
        if w.family is not None and w.family not in known:
            problems.append(FieldProblem(f"workloads[{i}].family", f'unknown family "{w.family}"; known: {", ".join(sorted(known))}'))
        if w.file is not None:
            path = (base / w.file).resolve()
            try:
                load_instance(path)
            except InputError as exc:
                problems.append(FieldProblem(f"workloads[{i}].file", str(exc).splitlines()[0]))
    for i, s in enumerate(spec.schedulers):
        names = [("name", s.name)] + ([("placement", s.placement)] if s.placement else [])
        try:
            infos = {field: solver_info(value) for field, value in names}
        except InputError as exc:
            problems.append(FieldProblem(f"schedulers[{i}]", str(exc).split(": ", 1)[-1]))
            continue
        if spec.kind == "simulate" and infos["name"].problem not in ("allocation", "quality"):
            problems.append(FieldProblem(f"schedulers[{i}].name", f'"{s.name}" solves problem "{infos["name"].problem}"; '
                                                                  "the simulator needs an allocation solver"))
        if s.placement:
            try:
                solver_info(f"{s.name}+{s.placement}")
            except InputError as exc:
                problems.append(FieldProblem(f"schedulers[{i}].placement", str(exc).split(": ", 1)[-1]))
        try:
            infos["name"].make(**s.options)
        except InputError as exc:
            for p in exc.problems:
                problems.append(FieldProblem(f"schedulers[{i}].options" + (f".{p.path.removeprefix('option ')}" if p.path else ""),
                                             p.message))
    if spec.simulator.ps_assignment is not None:
        try:
            if solver_info(spec.simulator.ps_assignment).problem != "ps-assignment":
                problems.append(FieldProblem("simulator.ps_assignment", f'"{spec.simulator.ps_assignment}" is no ps-assignment solver'))
        except InputError as exc:
            problems.append(FieldProblem("simulator.ps_assignment", str(exc).split(": ", 1)[-1]))
    if problems:
        raise InputError(source, problems)


def spec_from_dict(doc: Any, source: str = "<spec>") -> SweepSpec:
    try:
        return SweepSpec.model_validate(doc)
    except ValidationError as exc:
        raise InputError(source, problems_from_validation(exc)) from None


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def expand(spec: SweepSpec, base: Path) -> list[dict[str, Any]]:
    """Every cell of the sweep, in a fixed order, each with its ``key``."""
    from schedopt import __version__

    cells = []
    for w in spec.workloads:
        wl: dict[str, Any] = w.model_dump(exclude_none=True)
        if w.file is not None:
            path = (base / w.file).resolve()
            if not path.is_file():
                raise InputError(str(path), "workloads[].file: no such file")
            wl = {"file": str(path), "digest": _file_digest(path)}
        else:
            wl["data_dir"] = spec.data_dir
        for seed in spec.seeds:
            for load in (spec.loads if spec.kind == "simulate" else [1.0]):
                for s in spec.schedulers:
                    for limit in (spec.time_limits if spec.kind == "solve" else [None]):
                        cell = {"kind": spec.kind, "workload": wl, "workload_label": w.label(), "seed": seed,
                                "load": load, "scheduler": s.name, "placement": s.placement, "options": s.options,
                                "label": s.label(), "time_limit": limit}
                        if spec.kind == "simulate":
                            cell["simulator"] = spec.simulator.model_dump()
                        text = json.dumps({**cell, "version": __version__}, sort_keys=True, default=str)
                        cell["key"] = hashlib.sha256(text.encode()).hexdigest()[:20]
                        cells.append(cell)
    return cells
