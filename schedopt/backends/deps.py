"""Optional backends and what this environment can load (issue 40).

OR-Tools (CP-SAT) is an optional extra, ``pip install 'schedopt[cpsat]'``: the
core needs only HiGHS (highspy). Measured in one process with OR-Tools 9.15
(which bundles HiGHS 1.12's symbols): highspy 1.12, 1.13, 1.14 and 1.16 load
and solve beside it in either import order; highspy 1.15 does not (whichever
loads second fails with an ``undefined symbol`` ImportError). Nothing here
imports a backend unless asked: :func:`why_unavailable` looks at installed
versions only.
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from schedopt.errors import InputError

#: requirement -> (module, the extra that installs it)
REQUIREMENTS = {"ortools": ("ortools", "cpsat"), "highspy": ("highspy", None)}


class MissingDependencyError(InputError):
    """A solver needs a backend this environment lacks or cannot load beside another."""


def _installed(dist: str) -> str | None:
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def clash() -> str | None:
    """Why OR-Tools and highspy cannot share this process (None when they can)."""
    hs, ot = _installed("highspy"), _installed("ortools")
    if hs and ot and hs.startswith("1.15.") and ot.startswith("9.15."):
        return (f"highspy {hs} and OR-Tools {ot} cannot load in one process (a symbol clash of their bundled "
                f"HiGHS); use highspy 1.12-1.14 or >= 1.16")
    return None


@lru_cache(maxsize=None)
def why_unavailable(requirement: str) -> str | None:
    """None when ``requirement`` (a key of :data:`REQUIREMENTS`) can be used here,
    else one line saying why and how to fix it. Reads installed versions only."""
    module, extra = REQUIREMENTS[requirement]
    if importlib.util.find_spec(module) is None:
        how = f"pip install 'schedopt[{extra}]'" if extra else f"pip install {module}"
        return f"{module} is not installed ({how})"
    if requirement == "ortools":
        return clash()
    return None


def require(requirement: str, who: str) -> None:
    """Raise :class:`MissingDependencyError` naming ``who`` when ``requirement`` is unusable."""
    why = why_unavailable(requirement)
    if why is not None:
        raise MissingDependencyError(who, f"needs {requirement}: {why}")


def load(module: str, requirement: str, who: str) -> Any:
    """Import ``module`` of ``requirement``; a failure (not installed, a symbol
    clash) is one :class:`MissingDependencyError` line, never a traceback from
    inside the backend."""
    require(requirement, who)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise MissingDependencyError(who, f"cannot load {module}: {detail}"
                                          f"{'; ' + clash() if clash() else ''}") from None
