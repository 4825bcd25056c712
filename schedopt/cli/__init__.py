"""The ``schedopt`` command. Exit status: 0 success, 1 infeasible or a failed
check, 2 bad input (a message naming the file and field; nothing written).

One module per verb group: ``solving`` (solve, compare, check, solvers),
``generating``, ``fitting`` (fit speed, fit loss), ``simulating``, ``sweeping``, ``learning``;
``common`` holds the app and what they share.
"""

from __future__ import annotations

import time

#: when the command started running schedopt's code (before its imports): the clock
#: ``solve --time-limit`` counts from (the interpreter's own start-up comes before)
STARTED = time.perf_counter()

from schedopt.cli import fitting, generating, learning, simulating, solving, sweeping  # noqa: E402,F401  (registers the verbs)
from schedopt.cli.common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, app  # noqa: E402

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_OK", "app", "main"]


def main() -> None:
    app(prog_name="schedopt")


if __name__ == "__main__":
    main()
