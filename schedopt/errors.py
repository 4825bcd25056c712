"""Errors raised at the library's boundary.

Every error a user can cause with a bad file or bad argument is an
:class:`InputError` naming the file (or ``<dict>``), the path of the field
inside it and what was expected. The CLI turns these into exit status 2.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the most characters of one problem's message shown (echoed values are cut, never megabytes)
MAX_MESSAGE_CHARS = 300


def brief(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


@dataclass(frozen=True)
class FieldProblem:
    """One problem in an input: ``path`` like ``jobs[3].roles.worker.demand.gpu``."""

    path: str
    message: str

    def __str__(self) -> str:
        return brief(f"{self.path}: {self.message}" if self.path else self.message)


class InputError(ValueError):
    """Bad input: a file that cannot be read, parsed or validated, or a bad argument."""

    def __init__(self, source: str, problems: list[FieldProblem] | str):
        if isinstance(problems, str):
            problems = [FieldProblem("", problems)]
        self.source = source
        self.problems = problems
        super().__init__(self.render())

    def render(self, limit: int = 20) -> str:
        lines = [f"{self.source}: {p}" for p in self.problems[:limit]]
        if len(self.problems) > limit:
            lines.append(f"{self.source}: ... and {len(self.problems) - limit} more problems")
        return "\n".join(lines)


class UnknownSolverError(InputError):
    """A solver name that is not in the registry."""
