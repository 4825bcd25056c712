"""pytest plugin (entry point ``pytest11: schedopt``): after the run, the gaps
``schedopt.testing.assert_gap`` measured, per solver: count, mean and worst.

Imports nothing from schedopt until the summary, so it costs nothing in test
runs that do not use it.
"""

from __future__ import annotations

import math
import sys
from typing import Any


def gap_summary(recorded: list[tuple[str, float]]) -> list[str]:
    """One line per solver: ``name: n gaps, mean x %, worst y %`` (inf when a plan admitted fewer jobs)."""
    by: dict[str, list[float]] = {}
    for name, gap in recorded:
        by.setdefault(name, []).append(gap)
    lines = []
    for name in sorted(by):
        gaps = by[name]
        finite = [g for g in gaps if math.isfinite(g)]
        mean = f"{100 * sum(finite) / len(finite):.3g}%" if finite else "-"
        worst = "inf (fewer jobs admitted)" if len(finite) < len(gaps) else f"{100 * max(finite):.3g}%"
        lines.append(f"{name}: {len(gaps)} gaps measured, mean {mean}, worst {worst}")
    return lines


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    gaps = sys.modules.get("schedopt.testing.gaps")
    if gaps is None or not gaps.RECORDED:
        return
    terminalreporter.write_sep("-", "schedopt optimality gaps (assert_gap)")
    for line in gap_summary(gaps.RECORDED):
        terminalreporter.write_line(line)
