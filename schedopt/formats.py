"""The file formats, written out from the models' own field descriptions, so
docs/formats.md cannot drift from the code (a test compares them).

    python -m schedopt.formats > docs/formats.md
"""

from __future__ import annotations

import enum
import re
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from schedopt import instance as inst
from schedopt import io, plan
from schedopt.bench import records
from schedopt.convergence import LossCurve
from schedopt.sim import result
from schedopt.speed import Amdahl, OptimusAsync, OptimusSync, TableSpeed

#: (title, schema tag, top-level model, nested models in the order they are documented)
FORMATS: list[tuple[str, str, type[BaseModel], list[type[BaseModel]]]] = [
    ("Instance", inst.INSTANCE_SCHEMA, inst.Instance,
     [inst.Server, inst.Job, inst.Role, inst.Bandwidth, OptimusSync, OptimusAsync, Amdahl, TableSpeed, LossCurve,
      inst.LossHistory, inst.SpeedSamples, inst.Spread, inst.Queue, inst.Quota, inst.Preemption, inst.Policy]),
    ("Plan", plan.PLAN_SCHEMA, plan.Plan, [plan.Objective, plan.Certificate, plan.Proof]),
    ("Simulation result", result.SIMULATION_SCHEMA, result.SimulationResult, [result.JobOutcome]),
    ("Benchmark records", records.RECORDS_SCHEMA, records.Collection, [records.Record, records.Recipe, records.Provenance]),
]

SPEED_MODELS = (OptimusSync, OptimusAsync, Amdahl, TableSpeed)


def type_words(tp: Any) -> str:
    """A field type in words: ``list of Job``, ``map of text -> number``, ``Role or null``."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return type_words(args[0])
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        if set(members) == set(SPEED_MODELS):
            words = "speed form (" + ", ".join(f"[{m.__name__}](#{m.__name__.lower()})" for m in SPEED_MODELS) + ")"
        else:
            words = " or ".join(type_words(a) for a in members)
        return words + (" or null" if type(None) in args else "")
    if origin is typing.Literal:
        return " or ".join(f'"{a}"' for a in args)
    if origin is list:
        return f"list of {type_words(args[0])}"
    if origin is dict:
        return f"map of {type_words(args[0])} -> {type_words(args[1])}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return f"[{tp.__name__}](#{tp.__name__.lower()})"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return " or ".join(f'"{m.value}"' for m in tp)
    return {str: "text", float: "number", int: "integer", bool: "true or false", Any: "any"}.get(tp, str(tp))


def default_words(info: Any) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        return "empty"
    value = info.default
    if value is None or value is PydanticUndefined:
        return "null"
    if isinstance(value, enum.Enum):
        return f'"{value.value}"'
    return f"`{value}`"


def model_table(model: type[BaseModel]) -> str:
    """One markdown table: field, type, default, meaning."""
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        meaning = (info.description or "").replace("|", "\\|")
        rows.append(f"| `{info.alias or name}` | {type_words(info.annotation)} | {default_words(info)} | {meaning} |")
    return "\n".join(rows)


def first_paragraph(model: type[BaseModel]) -> str:
    """The docstring's first paragraph, reST roles turned into markdown code."""
    doc = (model.__doc__ or "").strip().split("\n\n")[0]
    text = " ".join(line.strip() for line in doc.splitlines())
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text).replace("``", "`")


#: a minimal complete instance, solved, checked and its plan shown (docs/formats.md runs it in `make test`)
EXAMPLE = [
    "## A minimal complete example", "",
    "Two one-role jobs on three 1-GPU servers (`instances/small-hand.yaml` is the same, with its hand-worked",
    "optimum): each job's time is `remaining_steps` over eq. 3's speed (`amdahl`: 1 / (serial + parallel / n)",
    "steps per second on n workers). The plan names its instance, solver, status and objective, with the",
    "bound and the certificate `check --strict` replays from the instance alone:", "",
    "```sh",
    "cat > two-jobs.yaml <<'YAML'",
    "schema: schedopt/instance@1",
    "name: two-jobs",
    "resources: [gpu]",
    "servers:",
    "  - {name: node, count: 3, capacity: {gpu: 1}}",
    "jobs:",
    "  - {id: a, roles: {worker: {demand: {gpu: 1}, min: 1, max: 3}},",
    "     speed: {form: amdahl, serial: 0, parallel: 10}, remaining_steps: 1}",
    "  - {id: b, roles: {worker: {demand: {gpu: 1}, min: 1, max: 3}},",
    "     speed: {form: amdahl, serial: 0, parallel: 4}, remaining_steps: 1}",
    "YAML",
    "schedopt solve two-jobs.yaml --solver optimus-milp --out plan.yaml",
    "schedopt check two-jobs.yaml plan.yaml --strict",
    "sed -n '1,13p' plan.yaml   # the plan's head; then metrics, options and the certificate",
    "```", "",
    "The optimum gives job `a` two workers and `b` one: 10/2 + 4/1 = 9 s of remaining time in all.", ""]


def render() -> str:
    """docs/formats.md."""
    out = ["# File formats", "",
           "Generated by `python -m schedopt.formats > docs/formats.md` from the models' field descriptions",
           "(`tests/test_formats.py` fails when this file and the code differ). Files are JSON or YAML, chosen by",
           "extension. Unknown fields are refused with a \"did you mean\"; every error names the file and the field",
           "path, e.g. `jobs[3].roles.worker.demand.gpu`.", "", *EXAMPLE]
    for title, schema, top, nested in FORMATS:
        out += [f"## {title} (`schema: {schema}`)", "", first_paragraph(top), "", f"### {top.__name__}", "",
                model_table(top), ""]
        for model in nested:
            out += [f"### {model.__name__}", "", first_paragraph(model), "", model_table(model), ""]
    out += ["## Several simulation results (`schema: " + result.RESULTS_SCHEMA + "`)", "",
            "`simulate --compare A,B --out FILE` writes `{schema, results: [simulation result, ...]}`.", "",
            "## Limits", "",
            "Beyond these an input is refused with a message naming the limit:", "",
            "| limit | value |", "|---|---|",
            f"| file size (`MAX_FILE_BYTES`) | {io.MAX_FILE_BYTES // 2**20} MiB |",
            f"| nesting depth (`MAX_DEPTH`) | {io.MAX_DEPTH} |",
            f"| values, YAML aliases expanded (`MAX_VALUES`) | {io.MAX_VALUES:,} |",
            f"| a capacity, demand, model size or bandwidth (`MAX_QUANTITY`) | {inst.MAX_QUANTITY:g} |",
            f"| remaining_steps (`MAX_STEPS`) | {inst.MAX_STEPS:g} |",
            f"| a role's min and max (`MAX_TASKS`) | {inst.MAX_TASKS:,} |",
            f"| servers after expanding count (`MAX_SERVERS`) | {inst.MAX_SERVERS:,} |",
            f"| jobs (`MAX_JOBS`) | {inst.MAX_JOBS:,} |", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render(), end="")
