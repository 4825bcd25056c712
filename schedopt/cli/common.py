"""What every verb shares: the Typer app, the consoles, exit codes, option
parsing and the bad-input wrapper (one message naming the file and field,
exit status 2, no traceback)."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer
import yaml
from rich.console import Console

from schedopt.errors import InputError


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
        options[key.strip()] = yaml.safe_load(value)
    return options


def check_out_path(path: Optional[Path]) -> None:
    if path is not None and path.suffix.lower() not in (".json", ".yaml", ".yml"):
        raise InputError(str(path), "unknown file type; expected .json, .yaml or .yml")
    if path is not None and not path.parent.is_dir():
        raise InputError(str(path), f"directory {str(path.parent)!r} does not exist")
