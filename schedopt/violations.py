"""``Violation``: what a check reports, one broken constraint or wrong figure each.

A leaf module: the checker (``checking``), the certificate dispatcher
(``certification``) and the problem contracts (``problems``) all speak it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Violation:
    """One broken constraint or wrong figure: where in the plan, and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"
