"""A job's time for a configuration, in one place (issue 49 §1): Optimus eq. 6 with the
restart cost,

    t_j(c) = Q_j · step_j(c) + ρ_j · [c ≠ the counts j runs with now]      (seconds)

inf where the job may not run with c (its step time is not finite). The solvers'
arrays (``AllocationData.time_s``), the checker's objective (``metrics``), the
certificates' replays (``certificates.remaining_time_grid``), the Lagrangian
dual's running configurations and DL2's grids all compute it here. A leaf module:
the checker side may import it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def training_s(q: float, step: Any) -> Any:
    """Q_j · step time (s) for the remaining steps ``q``; inf where ``step`` is not finite.
    Scalar in, float out; array in, array out."""
    if np.ndim(step) == 0:
        step = float(step)
        return q * step if math.isfinite(step) else math.inf
    step = np.asarray(step, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.isfinite(step), q * step, np.inf)


def job_time_s(q: float, step: Any, restart_s: float = 0.0, changed: Any = False) -> Any:
    """t_j = Q_j · step + ρ_j where the configuration differs from the running one (``changed``)."""
    t = training_s(q, step)
    if np.ndim(t) == 0 and np.ndim(changed) == 0:
        return t + restart_s if changed else t
    return t + np.where(changed, restart_s, 0.0)
