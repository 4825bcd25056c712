"""Reading and writing JSON/YAML documents, and turning validation errors into
field paths a user can act on (``jobs[3].roles.worker.demand.gpu: ...``)."""

from __future__ import annotations

import difflib
import json
import math
import os
import tempfile
import types
import typing
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from schedopt.errors import FieldProblem, InputError

YAML_SUFFIXES = (".yaml", ".yml")
JSON_SUFFIXES = (".json",)

#: documented input limits (docs/formats.md): a larger file, deeper nesting or
#: more values (YAML aliases expanded) is refused with a message naming the limit
MAX_FILE_BYTES = 256 * 2**20
MAX_DEPTH = 64
MAX_VALUES = 5_000_000


#: libyaml's parser where PyYAML has it (about 10x faster on large instance files), else PyYAML's own
_SafeBase = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_SafeBase):  # type: ignore[valid-type,misc]
    """SafeLoader that refuses a key given twice in one mapping (the last would silently win)."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            dup = key in seen
        except TypeError:
            continue  # unhashable keys are refused by the constructor below
        if dup:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {show(key)}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {show(key)}")
        out[key] = value
    return out


def check_size(src: str, data: Any) -> None:
    """Depth <= MAX_DEPTH and values (aliases expanded) <= MAX_VALUES, counted
    once per shared node, so a YAML alias bomb is refused in linear time."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, int, bool]] = [(data, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        key = id(node)
        children = list(node.values()) if isinstance(node, dict) else node
        if done:
            sizes[key] = 1 + sum(sizes.get(id(c), 1) for c in children)
            if sizes[key] > MAX_VALUES:
                raise InputError(src, f"more than {MAX_VALUES:,} values (YAML aliases expanded); the limit is MAX_VALUES")
            continue
        if key in sizes:
            continue
        if depth > MAX_DEPTH:
            raise InputError(src, f"nested more than {MAX_DEPTH} levels deep; the limit is MAX_DEPTH")
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children if isinstance(c, (dict, list)) and id(c) not in sizes)


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
    basic = f"{kind} {low}" if low else kind  # what a wrong type or sign is told
    full = " and ".join(x for x in (basic, high) if x)  # a number over the limit is told the limit too

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
        over = ok and ((le is not None and value > le) or (lt is not None and value >= lt))
        if over or (not ok and isinstance(value, float) and math.isinf(value) and value > 0 and high):
            raise PydanticCustomError("schedopt_number", "expected {expected}, got {got}",
                                      {"expected": full, "got": show(value)})
        if not ok:
            raise PydanticCustomError("schedopt_number", "expected {expected}, got {got}",
                                      {"expected": basic, "got": show(value)})
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


def _members(tp: Any) -> list[Any]:
    """The alternatives of a type, with Optional/Union/Annotated unwrapped."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _members(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(tp) for m in _members(a)]
    return [tp]


def fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names (aliases where given) of the model reached by following
    ``loc`` from ``model`` through nested models, lists and dicts; [] if unknown."""
    current: list[Any] = [model]
    for part in loc:
        nxt: list[Any] = []
        for tp in (m for t in current for m in _members(t)):
            origin = typing.get_origin(tp)
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                for name, info in tp.model_fields.items():
                    if part in (name, info.alias):
                        nxt.append(info.annotation)
            elif origin is list and isinstance(part, int):
                nxt.append(typing.get_args(tp)[0])
            elif origin is dict and isinstance(part, str):
                nxt.append(typing.get_args(tp)[1])
        if not nxt:  # a union tag or an unknown step: stay where we are
            continue
        current = nxt
    return sorted({(info.alias or name) for t in current for m in _members(t)
                   if isinstance(m, type) and issubclass(m, BaseModel) for name, info in m.model_fields.items()})


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean "x"?)`` for the closest of ``choices``, or ``""``."""
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def problems_from_validation(err: ValidationError, skip: frozenset[str] = frozenset(),
                             model: type[BaseModel] | None = None) -> list[FieldProblem]:
    """Translate pydantic's errors into one :class:`FieldProblem` per error;
    with ``model`` (the validated class), unknown fields get a "did you mean"."""
    problems: list[FieldProblem] = []
    for e in err.errors(include_url=False):
        path = format_path(tuple(e["loc"]), skip)
        kind = e["type"]
        got = show(e.get("input"))
        ctx = e.get("ctx") or {}
        if kind == "missing":
            msg = "required field is missing"
        elif kind == "extra_forbidden":
            loc = tuple(e["loc"])
            msg = "unknown field" + (did_you_mean(loc[-1], fields_at(model, loc[:-1])) if model and loc else "")
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
    data = parse_text(_read_text(p, src), suffix, src)
    check_size(src, data)
    return data


def _read_text(p: Path, src: str) -> str:
    """The file's text, within MAX_FILE_BYTES; read errors as one :class:`InputError` naming ``src``."""
    try:
        if p.is_file() and p.stat().st_size > MAX_FILE_BYTES:
            raise InputError(src, f"file is larger than {MAX_FILE_BYTES // 2**20} MiB (the limit MAX_FILE_BYTES)")
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(src, "file not found") from None
    except IsADirectoryError:
        raise InputError(src, "is a directory, expected a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(src, f"cannot read file: {exc}") from None


def parse_text(text: str, suffix: str, src: str) -> Any:
    """Parse JSON or YAML text; duplicate keys, too deep nesting and syntax
    errors become an :class:`InputError` naming ``src``."""
    deep = InputError(src, f"nested more than {MAX_DEPTH} levels deep; the limit is MAX_DEPTH")
    if suffix in JSON_SUFFIXES:
        try:
            return json.loads(text, object_pairs_hook=_json_pairs)
        except json.JSONDecodeError as exc:
            raise InputError(src, f"JSON syntax error at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except ValueError as exc:
            raise InputError(src, str(exc)) from None
        except RecursionError:
            raise deep from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = (getattr(exc, "problem", None) or str(exc)).splitlines()[0]  # one line: the position is in `where`
        if "maximum nesting depth" in problem:  # libyaml's own guard, before ours
            raise deep from None
        if mark is None and getattr(exc, "position", None) is not None:
            where = f" at character {exc.position + 1}"
        kind = "YAML error" if isinstance(exc, yaml.constructor.ConstructorError) else "YAML syntax error"
        raise InputError(src, f"{kind}{where}: {problem}") from None
    except RecursionError:
        raise deep from None


#: significant digits of the floats written to files (12: far below every tolerance of
#: ``check``, and no float noise such as ``5065866.997600001``)
FLOAT_DIGITS = 12


def tidy_floats(data: Any) -> Any:
    """``data`` with every float rounded to :data:`FLOAT_DIGITS` significant digits."""
    if isinstance(data, float):
        return float(f"{data:.{FLOAT_DIGITS}g}") if math.isfinite(data) else data
    if isinstance(data, dict):
        return {k: tidy_floats(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [tidy_floats(v) for v in data]
    return data


def dumps(data: Any, suffix: str, tidy: bool = False) -> str:
    """JSON (``.json``) or YAML text of ``data``; ``tidy``: floats to 12 significant
    digits (plans and results; instances are written exactly)."""
    if tidy:
        data = tidy_floats(data)
    if suffix.lower() in JSON_SUFFIXES:
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)


def _umask() -> int:
    """The process umask, read without changing it (os.umask would, for every thread)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_document(path: str | os.PathLike[str], data: Any, tidy: bool = False) -> None:
    """Write JSON or YAML atomically: a reader never sees half a file, and a
    failure leaves the old file (or no file) in place. ``tidy``: see :func:`dumps`."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in YAML_SUFFIXES + JSON_SUFFIXES:
        raise InputError(str(path), f"unknown file type {suffix or '(none)'!r}; expected .json, .yaml or .yml")
    text = dumps(data, suffix, tidy)
    directory = p.parent if str(p.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(str(path), f"directory {str(directory)!r} does not exist")
    if p.is_dir():
        raise InputError(str(path), "is a directory, expected a file name")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=directory)
    except OSError as exc:
        raise InputError(str(path), f"cannot write here: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # the user's umask, as open() would give (mkstemp makes 0600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise InputError(str(path), f"cannot write: {exc.strerror or exc}") from None
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
            seen_first = False
            for line_no, row in enumerate(csv.reader(fh), start=1):
                cells = [c.strip() for c in row]
                if not any(cells) or cells[0].startswith("#"):
                    continue
                first, seen_first = not seen_first, True
                try:
                    values = [float(c) for c in cells]
                except ValueError:
                    if first:  # the first row that is not blank or a comment may be a header
                        if [c.lower() for c in cells] != list(columns):
                            problems.append(FieldProblem(f"line {line_no}", f"header {cells} does not name the columns ({layout})"))
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


def with_field_docs(*models: type[BaseModel]) -> None:
    """Append each model's fields (name, default, description) to its docstring,
    so ``help(Server)`` shows what each field means and its unit."""
    for model in models:
        lines = ["", "Fields:"]
        for name, info in model.model_fields.items():
            default = "required" if info.is_required() else f"default {info.default!r}" if info.default_factory is None else "default empty"
            lines.append(f"    {info.alias or name} ({default}): {info.description or ''}")
        model.__doc__ = (model.__doc__ or "").rstrip() + "\n" + "\n".join(lines) + "\n"


def as_document(value: Any, model: Any, load: Callable[[Any], Any], what: str) -> Any:
    """``value`` as a ``model`` document: a ``model`` as it is, a path (str or
    PathLike) read by ``load``, a mapping validated by ``model.from_dict``. Anything
    else is a :class:`TypeError` saying what to pass (``what``: instance, plan)."""
    if isinstance(value, model):
        return value
    if isinstance(value, (str, os.PathLike)):
        return load(value)
    if isinstance(value, dict):
        return model.from_dict(value)
    a = "an" if what[0] in "aeiou" else "a"
    raise TypeError(f"{what}: expected {a} {model.__name__}, a path to {a} {what} file or {a} {what} mapping, "
                    f"got {type(value).__name__}; load one with schedopt.{load.__name__}(path)")



def read_documents(path: str | os.PathLike[str]) -> list[Any]:
    """Every document of a multi-document YAML file (``---``-separated, as Kubernetes
    manifests are), with :func:`read_document`'s guards. Raises :class:`InputError`."""
    p = Path(path)
    src = str(path)
    if p.suffix.lower() not in YAML_SUFFIXES:
        return [read_document(path)]
    text = _read_text(p, src)
    try:
        docs = [d for d in yaml.load_all(text, Loader=_UniqueKeyLoader) if d is not None]  # noqa: S506
    except yaml.YAMLError as exc:  # worded at the error's own line, whichever document holds it
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = (getattr(exc, "problem", None) or str(exc)).splitlines()[0]
        if "maximum nesting depth" in problem:
            raise InputError(src, f"nested more than {MAX_DEPTH} levels deep; the limit is MAX_DEPTH") from None
        kind = "YAML error" if isinstance(exc, yaml.constructor.ConstructorError) else "YAML syntax error"
        raise InputError(src, f"{kind}{where}: {problem}") from None
    except RecursionError:
        raise InputError(src, f"nested more than {MAX_DEPTH} levels deep; the limit is MAX_DEPTH") from None
    for d in docs:
        check_size(src, d)
    return docs
