"""Summary statistics the sweeps, the plots and the CLI share (a leaf module)."""

from __future__ import annotations

import math


def ci95(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % confidence interval (Student t; 0 for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    from scipy.stats import t

    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, float(t.ppf(0.975, n - 1) * sd / math.sqrt(n))
