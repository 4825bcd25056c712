"""Names a package loads on first use (PEP 562), so importing it stays light: the
checker side imports ``schedopt`` and ``schedopt.allocation`` without their solvers."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable


def lazy_attributes(namespace: dict[str, Any], lazy: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__``: each name of ``lazy`` (name -> defining
    module) is imported when first asked for and then kept in ``namespace`` (its globals)."""

    def __getattr__(name: str) -> Any:
        if name in lazy:
            value = getattr(import_module(lazy[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(lazy))

    return __getattr__, __dir__
