"""The ``schedopt`` command. Exit status: 0 success, 1 infeasible or a failed
check, 2 bad input (a message naming the file and field; nothing written).

One module per verb group: ``solving`` (solve, compare, check, solvers),
``generating``, ``fitting`` (fit speed, fit loss), ``simulating``, ``sweeping``, ``learning``,
``importing`` (import, export), ``whatif`` (what-if quota), ``benching`` (bench);
``common`` holds the app and what they share.
"""

from __future__ import annotations

from schedopt.cli import benching, fitting, generating, importing, learning, simulating, solving, sweeping, whatif  # noqa: F401  (registers the verbs)
from schedopt.cli.common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, app

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_OK", "app", "main"]


def main() -> None:
    app(prog_name="schedopt")


if __name__ == "__main__":
    main()
