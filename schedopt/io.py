"""Reading and writing JSON/YAML documents, and turning validation errors into
field paths a user can act on (``jobs[3].roles.worker.demand.gpu: ...``)."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml
from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from schedopt.errors import FieldProblem, InputError

YAML_SUFFIXES = (".yaml", ".yml")
JSON_SUFFIXES = (".json",)


def show(value: Any) -> str:
    """Render a user's value the way it appeared in the file (strings quoted)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def number_validator(
    *, ge: float | None = None, gt: float | None = None, le: float | None = None, lt: float | None = None,
    integer: bool = False,
) -> Callable[[Any], float | int]:
    """A strict number check with a message that states the expectation.

    Booleans and strings are rejected (``"4"`` is not a number in our files).
    """
    kind = "an integer" if integer else "a number"
    low = f">= {ge:g}" if ge is not None else f"> {gt:g}" if gt is not None else None
    high = f"<= {le:g}" if le is not None else f"< {lt:g}" if lt is not None else None
    expected = " and ".join(x for x in (f"{kind} {low}" if low else kind, high) if x)

    def check(value: Any) -> float | int:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and isinstance(value, float) and not math.isfinite(value):
            ok = False
        if ok and integer and float(value) != int(value):
            ok = False
        if ok and ge is not None and value < ge:
            ok = False
        if ok and gt is not None and value <= gt:
            ok = False
        if ok and le is not None and value > le:
            ok = False
        if ok and lt is not None and value >= lt:
            ok = False
        if not ok:
            raise PydanticCustomError(
                "schedopt_number", "expected {expected}, got {got}",
                {"expected": expected, "got": show(value)},
            )
        return int(value) if integer else float(value)

    return check


def format_path(loc: tuple[Any, ...], skip: frozenset[str] = frozenset()) -> str:
    """``('jobs', 3, 'roles', 'worker')`` -> ``jobs[3].roles.worker``."""
    out = ""
    for part in loc:
        if part in skip or part == "[key]":
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


_TYPE_WORDS = {
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "literal_error": None,
}


def problems_from_validation(err: ValidationError, skip: frozenset[str] = frozenset()) -> list[FieldProblem]:
    """Translate pydantic's errors into one :class:`FieldProblem` per error."""
    problems: list[FieldProblem] = []
    for e in err.errors(include_url=False):
        path = format_path(tuple(e["loc"]), skip)
        kind = e["type"]
        got = show(e.get("input"))
        ctx = e.get("ctx") or {}
        if kind == "missing":
            msg = "required field is missing"
        elif kind == "extra_forbidden":
            msg = "unknown field"
        elif kind in ("too_short", "too_long"):
            msg = f"expected {_length_words(ctx)}, got {ctx.get('actual_length')} items"
        elif kind == "union_tag_invalid":
            msg = f"unknown {str(ctx.get('discriminator', 'tag')).strip(chr(39))} {show(ctx.get('tag'))}; expected one of {ctx.get('expected_tags')}"
        elif kind == "union_tag_not_found":
            msg = f"missing {str(ctx.get('discriminator', 'tag')).strip(chr(39))}"
        elif kind == "literal_error":
            msg = f"expected {ctx.get('expected')}, got {got}"
        elif kind in _TYPE_WORDS:
            msg = f"expected {_TYPE_WORDS[kind]}, got {got}"
        elif kind == "schedopt_number" or kind.startswith("value_error"):
            msg = e["msg"].removeprefix("Value error, ")
        else:
            msg = f"{e['msg']} (got {got})"
        problems.append(FieldProblem(path, msg))
    return problems


def _length_words(ctx: dict[str, Any]) -> str:
    lo, hi = ctx.get("min_length"), ctx.get("max_length")
    if lo is not None and hi is not None and lo == hi:
        return f"{lo} items"
    if lo is not None:
        return f"at least {lo} items"
    return f"at most {hi} items"


def read_document(path: str | os.PathLike[str]) -> Any:
    """Parse a JSON or YAML file (chosen by extension). Raises :class:`InputError`."""
    p = Path(path)
    src = str(path)
    suffix = p.suffix.lower()
    if suffix not in YAML_SUFFIXES + JSON_SUFFIXES:
        raise InputError(src, f"unknown file type {suffix or '(none)'!r}; expected .json, .yaml or .yml")
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(src, "file not found") from None
    except IsADirectoryError:
        raise InputError(src, "is a directory, expected a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(src, f"cannot read file: {exc}") from None
    if suffix in JSON_SUFFIXES:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(src, f"JSON syntax error at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(src, f"YAML syntax error{where}: {problem}") from None


def dumps(data: Any, suffix: str) -> str:
    if suffix.lower() in JSON_SUFFIXES:
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)


def write_document(path: str | os.PathLike[str], data: Any) -> None:
    """Write JSON or YAML atomically: a reader never sees half a file, and a
    failure leaves the old file (or no file) in place."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in YAML_SUFFIXES + JSON_SUFFIXES:
        raise InputError(str(path), f"unknown file type {suffix or '(none)'!r}; expected .json, .yaml or .yml")
    text = dumps(data, suffix)
    directory = p.parent if str(p.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(str(path), f"directory {str(directory)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_csv_numbers(path: str | os.PathLike[str], columns: tuple[str, ...]) -> np.ndarray:
    """Rows of numbers from a CSV file, shape (rows, len(columns)). A first row
    that is not numeric is a header and must name the columns; blank lines and
    ``#`` comments are skipped. Raises :class:`InputError` naming the line."""
    import csv

    p = Path(path)
    if not p.is_file():
        raise InputError(str(path), "no such file")
    rows: list[list[float]] = []
    problems: list[FieldProblem] = []
    layout = ", ".join(columns)
    try:
        with p.open(newline="") as fh:
            for line_no, row in enumerate(csv.reader(fh), start=1):
                cells = [c.strip() for c in row]
                if not any(cells) or cells[0].startswith("#"):
                    continue
                try:
                    values = [float(c) for c in cells]
                except ValueError:
                    if not rows and not problems and line_no == 1:
                        if [c.lower() for c in cells] != list(columns):
                            problems.append(FieldProblem("line 1", f"header {cells} does not name the columns ({layout})"))
                        continue
                    problems.append(FieldProblem(f"line {line_no}", f"expected numbers ({layout}), got {row}"))
                    continue
                if len(values) != len(columns):
                    problems.append(FieldProblem(f"line {line_no}", f"expected {len(columns)} values ({layout}), got {len(values)}"))
                elif not all(math.isfinite(v) for v in values):
                    problems.append(FieldProblem(f"line {line_no}", f"values must be finite, got {row}"))
                else:
                    rows.append(values)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), f"cannot read: {exc}") from None
    if problems:
        raise InputError(str(path), problems)
    if not rows:
        raise InputError(str(path), f"no data rows ({layout})")
    return np.array(rows, dtype=float)
