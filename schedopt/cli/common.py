"""What every verb shares: the Typer app, the consoles, exit codes, option
parsing and the bad-input wrapper (one message naming the file and field,
exit status 2, no traceback)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import typer
from rich.console import Console

from schedopt.errors import InputError
from schedopt.io import did_you_mean, dumps, tidy_floats, write_document


def make_console(stderr: bool = False) -> Console:
    # Piped output gets a wide table rather than rich's 80-column default.
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(stderr=stderr, width=width)


def handles_bad_input(fn: Callable[..., None]) -> Callable[..., None]:
    """Bad input: one message naming the file and field, exit status 2, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except InputError as exc:
            err.print("error: " + exc.render(), highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None

    return wrapper


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True,
                  help="Deep-learning cluster scheduling: exact models and published heuristics.")


def _version(value: bool) -> None:
    if value:
        from schedopt import __version__

        typer.echo(f"schedopt {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="print the version and exit")) -> None:
    """Deep-learning cluster scheduling: exact models and published heuristics.

    Exit status: 0 success; 1 no plan (infeasible, or the time limit came before
    any plan), or a failed check; 2 bad input (nothing written)."""
out = make_console()
err = make_console(stderr=True)

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def fmt(x: Any, spec: str = ".6g") -> str:
    return "-" if x is None else format(x, spec)


def parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError("--option", f'expected KEY=VALUE, got "{pair}"')
        options[key.strip()] = option_value(value, key.strip())
    return options


def option_value(text: str, key: str = "") -> Any:
    """An option's value as YAML reads it, except that numbers YAML 1.1 leaves as
    strings (``1e-3``, ``5E+2``: no dot in the mantissa) are numbers. Read by the
    same guarded loader as files (syntax errors, duplicate keys, nesting and
    alias limits become an :class:`InputError` naming the option)."""
    from schedopt.io import check_size, parse_text

    src = f"--option {key}" if key else "--option"
    value = parse_text(text, ".yaml", src)
    check_size(src, value)
    if isinstance(value, str) and re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+", value.strip()):
        return float(value)
    return value


@contextlib.contextmanager
def stderr_logging(enabled: bool) -> Iterator[None]:
    """``--log``: the ``schedopt`` logger's records go to standard error (and only there)."""
    if not enabled:
        yield
        return
    import logging

    logger = logging.getLogger("schedopt")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    saved = (logger.level, logger.propagate)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


@contextlib.contextmanager
def busy(message: str, log: bool = False) -> Iterator[Any]:
    """A live status line on standard error while a long call runs, on a terminal
    only (and not with ``--log``, whose lines would fight it); yields the status or None."""
    if not err.is_terminal or log:
        yield None
        return
    with err.status(message) as status:
        yield status


FORMATS = ("table", "json")


def check_format(value: str) -> str:
    """``--format``: ``table`` (for people) or ``json`` (one JSON document on standard output)."""
    if value not in FORMATS:
        raise InputError("--format", f'expected one of {", ".join(FORMATS)}, got "{value}"{did_you_mean(value, FORMATS)}')
    return value


def print_json(data: Any) -> None:
    """One JSON document on standard output (floats tidied), nothing else."""
    sys.stdout.write(json.dumps(tidy_floats(data), indent=2) + "\n")
    sys.stdout.flush()


def write_out(path: Path, data: Any, as_json: bool = False) -> None:
    """Write a plan or result ``data`` to ``path`` (floats tidied); ``-`` is standard
    output (YAML, or JSON with ``as_json``)."""
    if str(path) == "-":
        if as_json:
            print_json(data)
        else:
            sys.stdout.write(dumps(data, ".yaml", tidy=True))
            sys.stdout.flush()
    else:
        write_document(path, data, tidy=True)


def parse_solver_options(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """``SOLVER.KEY=VALUE`` pairs (compare's ``--option``) -> {solver: {key: value}}."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in parse_options(pairs).items():
        solver, dot, option = key.rpartition(".")
        if not dot or not solver or not option:
            raise InputError("--option", f'expected SOLVER.KEY=VALUE (e.g. optimus-milp.rel_gap=0.01), got "{key}=..."')
        out.setdefault(solver, {})[option] = value
    return out


def check_out_path(path: Optional[Path]) -> None:
    if path is not None and str(path) == "-":
        return
    if path is not None and path.suffix.lower() not in (".json", ".yaml", ".yml"):
        raise InputError(str(path), "unknown file type; expected .json, .yaml or .yml")
    if path is not None and not path.parent.is_dir():
        raise InputError(str(path), f"directory {str(path.parent)!r} does not exist")
    if path is not None and not os.access(path.parent, os.W_OK):  # found before any work is done
        raise InputError(str(path), f"directory {str(path.parent)!r} is not writable")
