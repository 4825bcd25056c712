"""What every exact backend stage answers, in one type for every problem (issue 49 §2).

As Pyomo's ``contrib.solver`` results do, a :class:`StageResult` keeps why a solve
stopped (``termination``) apart from what it found (``solution``, ``value``) and what
it proved (``bound``; ``proven``: whether the solution is optimal for the model itself,
not only for an approximation of it). The solution is the problem's own decision:
allocation's chosen configuration indices (``list[int]``), placement's PS and worker
counts per job and server (``(P, W)``, each (J, S)), partition's containers per
application and server with the servers per pattern (:class:`schedopt.partition.model.DormSolution`).
Every backend (HiGHS, CP-SAT), driver and repair speaks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from schedopt.plan import Termination

S = TypeVar("S")


@dataclass
class StageResult(Generic[S]):
    """One backend solve: ``solution`` None when none was found; ``value`` its objective and
    ``bound`` the bound the backend proved, both in the stage's own units; ``note`` why a
    solution is not proven for the model (``proven`` False)."""

    termination: Termination
    solution: S | None = None
    value: float | None = None
    bound: float | None = None
    info: dict[str, Any] = field(default_factory=dict)
    proven: bool = True
    note: str | None = None
