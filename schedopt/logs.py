"""Backend progress as Python logging, only when asked.

``schedopt.solve(..., log=True)`` (CLI: ``--log``) streams what HiGHS and
CP-SAT print while they search (incumbent, bound, gap, time) as INFO records
of the loggers ``schedopt.highs`` and ``schedopt.cpsat``. Without it nothing
is logged or printed (the ``schedopt`` logger has a NullHandler: a solver's
warnings reach a host's handlers only). When neither the ``schedopt`` logger nor
the root logger has a handler, one writing to standard error is added for the solve.
``log`` may also be a :class:`logging.Logger`, whose children receive the lines.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
from typing import Iterator

LOGGER = logging.getLogger("schedopt")
# a library writes nothing unless its host configures logging (Python's last-resort handler would
# print a solver's warnings, such as DL2's untrained policy, on standard error): the logging HOWTO's rule
LOGGER.addHandler(logging.NullHandler())

#: the logger backend progress goes to during this solve (None: not asked); per thread
_TARGET: contextvars.ContextVar[logging.Logger | None] = contextvars.ContextVar("schedopt_log", default=None)


@contextlib.contextmanager
def solver_logging(log: bool | logging.Logger) -> Iterator[None]:
    """Within the block, backends log their progress (see the module docstring)."""
    if not log:
        yield
        return
    parent = log if isinstance(log, logging.Logger) else LOGGER
    handler = None
    if not _handled(parent):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        parent.addHandler(handler)
    previous_level = parent.level
    if parent.getEffectiveLevel() > logging.INFO:
        parent.setLevel(logging.INFO)
    token = _TARGET.set(parent)
    try:
        yield
    finally:
        _TARGET.reset(token)
        parent.setLevel(previous_level)
        if handler is not None:
            parent.removeHandler(handler)


def _handled(logger: logging.Logger) -> bool:
    """Whether a handler that writes somewhere (not a NullHandler) would receive ``logger``'s records."""
    current: logging.Logger | None = logger
    while current is not None:
        if any(not isinstance(h, logging.NullHandler) for h in current.handlers):
            return True
        current = current.parent if current.propagate else None
    return False


def backend_logger(backend: str) -> logging.Logger | None:
    """The logger for ``backend``'s progress lines, or None when not asked."""
    parent = _TARGET.get()
    return None if parent is None else parent.getChild(backend)
