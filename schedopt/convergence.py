"""Loss-curve fitting and remaining-steps estimation (Optimus §3.1, SLAQ §2).

Optimus eq. 1:  l(k) = 1 / (β0·k + β1) + β2,  β >= 0.
Preprocessing as in the paper: outliers (a point outside [min of the next 5,
max of the previous 5]) are replaced by the mean of their neighbours; losses
are divided by the largest loss so far; long histories are averaged into at
most ``max_points`` bins. The fit minimises the squared error of l with β >= 0
(scipy's bounded least squares, started from the NNLS fit of the linearised
1/(l - β2) = β0·k + β1).

Convergence, a choice the paper leaves open (stated here): the job has
converged at the first step k where the reducible loss l(k) - β2 is at most δ
of its initial value 1/β1, i.e. K(δ) = β1·(1/δ - 1)/β0 steps in total.

SLAQ: sublinear 1/(a·k² + b·k + c) + d and linear/superlinear μ^(k-b) + c,
fitted with exponentially decaying weights on older points; and the
normalised Δloss (each change over the largest change so far).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import numpy as np
from schedopt.tolerances import CURVE_PARAM_FLOOR, TINY
from numpy.lib.stride_tricks import sliding_window_view
from pydantic import BaseModel, ConfigDict, Field, model_validator


class CurveFitError(ValueError):
    """A loss history that cannot be fitted (too short, non-finite, negative)."""


def _validate(steps: np.ndarray, loss: np.ndarray, minimum: int) -> None:
    if steps.shape != loss.shape or steps.ndim != 1:
        raise CurveFitError(f"steps and losses must be 1-D of equal length, got {steps.shape} and {loss.shape}")
    if len(loss) < minimum:
        raise CurveFitError(f"need at least {minimum} loss points, got {len(loss)}")
    if not (np.all(np.isfinite(steps)) and np.all(np.isfinite(loss))):
        raise CurveFitError("steps or losses contain NaN or infinite values")
    if np.any(loss < 0):
        raise CurveFitError("losses must be >= 0")
    if np.any(np.diff(steps) <= 0):
        raise CurveFitError("steps must be strictly increasing")


def replace_outliers(loss: np.ndarray, window: int = 5) -> np.ndarray:
    """Optimus §3.1: a point outside [min of the next ``window``, max of the
    previous ``window``] is replaced by the mean of its two neighbours."""
    y = np.asarray(loss, dtype=float)
    n = len(y)
    if n < 3:
        return y.copy()
    # for each i: min of y[i+1 : i+1+window] and max of y[i-window : i]
    next_min = sliding_window_view(np.concatenate([y[1:], np.full(window, np.inf)]), window).min(axis=1)[:n]
    prev_max = sliding_window_view(np.concatenate([np.full(window, -np.inf), y]), window).max(axis=1)[:n]
    outlier = ~((next_min <= y) & (y <= prev_max))
    outlier[[0, -1]] = False
    out = y.copy()
    idx = np.nonzero(outlier)[0]
    out[idx] = 0.5 * (y[idx - 1] + y[idx + 1])
    return out


def normalise(loss: np.ndarray) -> np.ndarray:
    """Optimus §3.1: each loss over the largest loss collected so far."""
    running_max = np.maximum.accumulate(loss)
    return np.divide(loss, running_max, out=np.zeros_like(loss, dtype=float), where=running_max > 0)


def bin_average(steps: np.ndarray, loss: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Average consecutive points into at most ``max_points`` bins (the paper's
    per-epoch averaging for long runs)."""
    if len(loss) <= max_points:
        return steps.astype(float), loss.astype(float)
    edges = np.linspace(0, len(loss), max_points + 1).astype(int)
    sums = np.add.reduceat(np.column_stack([steps, loss]).astype(float), edges[:-1], axis=0)
    counts = np.diff(edges)[:, None]
    means = sums / counts
    return means[:, 0], means[:, 1]


@dataclass
class LossFit:
    """Optimus eq. 1 fitted to a (preprocessed) history. ``flags`` name anything
    that makes the fit unreliable (e.g. a loss that does not decrease)."""

    beta: tuple[float, float, float]
    points: int
    rmse: float  # on the normalised losses
    scale: float  # the largest raw loss (normalisation divisor)
    last_step: float
    flags: list[str] = field(default_factory=list)

    def loss(self, k: np.ndarray | float) -> np.ndarray | float:
        """Predicted normalised loss at step k."""
        b0, b1, b2 = self.beta
        return 1.0 / (b0 * np.asarray(k, dtype=float) + b1) + b2

    def total_steps(self, delta: float) -> float:
        """K(δ) = β1·(1/δ - 1)/β0: steps until the reducible loss is <= δ of its start."""
        if not 0 < delta < 1:
            raise CurveFitError(f"delta must be in (0, 1), got {delta}")
        b0, b1, _ = self.beta
        if b0 <= 0:
            return math.inf  # no progress fitted: never converges
        return b1 * (1.0 / delta - 1.0) / b0

    def remaining_steps(self, delta: float, at_step: float | None = None) -> float:
        """Steps left from ``at_step`` (default: the last observed step) to K(δ)."""
        k = self.last_step if at_step is None else at_step
        return max(0.0, self.total_steps(delta) - k)


def fit_loss_curve(steps: np.ndarray | list[float], loss: np.ndarray | list[float], *, max_points: int = 500,
                   outliers: bool = True) -> LossFit:
    """Fit Optimus eq. 1 to a loss history (steps k, raw losses l)."""
    import scipy.optimize  # imported when fitting: `import schedopt` stays light
    k = np.asarray(steps, dtype=float)
    y = np.asarray(loss, dtype=float)
    _validate(k, y, minimum=3)
    flags: list[str] = []
    if outliers and len(y) >= 3:
        y = replace_outliers(y)
    scale = float(np.max(y))
    if scale <= 0:
        raise CurveFitError("all losses are 0: nothing to fit")
    y = normalise(y)
    k, y = bin_average(k, y, max_points)
    if y[-1] >= y[0]:
        flags.append("loss did not decrease over the history")

    # start: for a grid of asymptotes β2 below min(l), NNLS on 1/(l - β2) = β0·k + β1
    best = None
    for b2 in np.linspace(0.0, 0.99 * float(y.min()), 12):
        A = np.column_stack([k, np.ones_like(k)])
        (b0, b1), _ = scipy.optimize.nnls(A, 1.0 / (y - b2))
        if b1 <= 0:
            continue
        r = 1.0 / (b0 * k + b1) + b2 - y
        sse = float(r @ r)
        if best is None or sse < best[0]:
            best = (sse, (b0, b1, b2))
    x0 = np.array(best[1] if best else (1e-3, 1.0, 0.0))

    def residual(beta: np.ndarray) -> np.ndarray:
        return 1.0 / (beta[0] * k + beta[1]) + beta[2] - y

    res = scipy.optimize.least_squares(residual, x0, bounds=([0.0, CURVE_PARAM_FLOOR, 0.0], [np.inf, np.inf, np.inf]), method="trf")
    beta = tuple(float(b) for b in res.x)
    rmse = float(np.sqrt(np.mean(res.fun ** 2)))
    if beta[0] <= TINY:
        flags.append("no downward trend fitted (beta0 = 0)")
    return LossFit(beta=beta, points=len(y), rmse=rmse, scale=scale, last_step=float(np.asarray(steps)[-1]), flags=flags)


# ---- SLAQ ---------------------------------------------------------------------------------

def normalised_delta_loss(loss: np.ndarray | list[float]) -> np.ndarray:
    """SLAQ §2: the change of loss between iterations over the largest change so
    far (shape n-1); 0 where no positive change has been seen yet."""
    y = np.asarray(loss, dtype=float)
    if y.ndim != 1 or len(y) < 2 or not np.all(np.isfinite(y)):
        raise CurveFitError("need at least 2 finite loss values")
    delta = y[:-1] - y[1:]
    largest = np.maximum.accumulate(np.abs(delta))
    return np.divide(delta, largest, out=np.zeros_like(delta), where=largest > 0)


@dataclass
class SlaqFit:
    family: str  # "sublinear" | "linear"
    params: tuple[float, ...]
    rmse: float

    def loss(self, k: np.ndarray | float) -> np.ndarray | float:
        k = np.asarray(k, dtype=float)
        if self.family == "sublinear":
            a, b, c, d = self.params
            return 1.0 / (a * k * k + b * k + c) + d
        mu, b, c = self.params
        return mu ** (k - b) + c


def fit_slaq_curve(steps: np.ndarray | list[float], loss: np.ndarray | list[float], family: str = "sublinear",
                   *, decay: float = 0.9) -> SlaqFit:
    """SLAQ's curve families with exponentially weighted history: the point i of
    n gets weight decay^(n-1-i), so recent points count most."""
    import scipy.optimize  # imported when fitting: `import schedopt` stays light
    k = np.asarray(steps, dtype=float)
    y = np.asarray(loss, dtype=float)
    _validate(k, y, minimum=4)
    if not 0 < decay <= 1:
        raise CurveFitError(f"decay must be in (0, 1], got {decay}")
    w = np.sqrt(decay ** np.arange(len(y) - 1, -1, -1))
    if family == "sublinear":
        def model(p: np.ndarray) -> np.ndarray:
            return 1.0 / (p[0] * k * k + p[1] * k + p[2]) + p[3]
        x0 = np.array([0.0, 1.0 / max(CURVE_PARAM_FLOOR, float(k[-1] - k[0] + 1)), 1.0 / max(CURVE_PARAM_FLOOR, float(y[0] - y.min() + CURVE_PARAM_FLOOR)), float(y.min()) * 0.9])
        lower, upper = [0.0, 0.0, CURVE_PARAM_FLOOR, 0.0], [np.inf, np.inf, np.inf, np.inf]
    elif family == "linear":
        def model(p: np.ndarray) -> np.ndarray:
            return p[0] ** (k - p[1]) + p[2]
        x0 = np.array([0.9, float(k[0]), float(y.min()) * 0.9])
        lower, upper = [CURVE_PARAM_FLOOR, -np.inf, 0.0], [1.0, np.inf, np.inf]
    else:
        raise CurveFitError(f'unknown family "{family}"; expected "sublinear" or "linear"')
    x0 = np.clip(x0, np.array(lower) + TINY, np.array(upper) - TINY)
    res = scipy.optimize.least_squares(lambda p: (model(p) - y) * w, x0, bounds=(lower, upper), method="trf")
    return SlaqFit(family=family, params=tuple(float(v) for v in res.x),
                   rmse=float(np.sqrt(np.mean((model(res.x) - y) ** 2))))


# ---- curves as instance data ----------------------------------------------------------------

CURVE_FAMILIES = {"optimus": 3, "sublinear": 4, "linear": 3}


class LossCurve(BaseModel):
    """A job's predicted *normalised* loss l(k) (1 = the largest loss seen) and
    the steps it has done. ``params``: optimus [β0, β1, β2] (eq. 1), sublinear
    [a, b, c, d], linear [μ, b, c] (SLAQ §2)."""

    model_config = ConfigDict(extra="forbid")

    family: Literal["optimus", "sublinear", "linear"] = Field("optimus", description="optimus (eq. 1), SLAQ sublinear or linear")
    params: list[float] = Field(description="optimus [β0, β1, β2]; sublinear [a, b, c, d]; linear [μ, b, c]")
    step: Annotated[float, Field(ge=0)] = Field(0.0, description="training steps done so far")

    @model_validator(mode="after")
    def _shape(self) -> "LossCurve":
        need = CURVE_FAMILIES[self.family]
        if len(self.params) != need:
            raise ValueError(f'family "{self.family}" takes {need} params, got {len(self.params)}')
        if not all(math.isfinite(p) for p in self.params):
            raise ValueError("params must be finite numbers")
        if self.family in ("optimus", "sublinear") and any(p < 0 for p in self.params):
            raise ValueError(f'family "{self.family}" takes params >= 0')
        if self.family == "optimus" and self.params[1] <= 0:
            raise ValueError("optimus family: beta1 must be > 0 (else l(0) is infinite)")
        if self.family == "sublinear" and self.params[2] <= 0:
            raise ValueError("sublinear family: c must be > 0 (else l(0) is infinite)")
        if self.family == "linear" and not 0 < self.params[0] <= 1:
            raise ValueError("linear family: mu must be in (0, 1]")
        return self

    @staticmethod
    def formula(family: str, p: Any, k: Any) -> Any:
        """l(k) of ``family`` with parameters ``p`` (a sequence, or columns
        ``p[i]`` of arrays shaped like ``k``), written once for scalars and arrays."""
        if family == "optimus":
            return 1.0 / (p[0] * k + p[1]) + p[2]
        if family == "sublinear":
            return 1.0 / (p[0] * k * k + p[1] * k + p[2]) + p[3]
        return p[0] ** (k - p[1]) + p[2]

    def loss(self, k: Any) -> Any:
        """l(k) for a scalar or an array of steps."""
        return self.formula(self.family, self.params, k)

    def reduction(self, steps_ahead: Any) -> Any:
        """l(step) - l(step + steps_ahead): the predicted loss reduction (SLAQ's objective term)."""
        return self.loss(self.step) - self.loss(self.step + steps_ahead)


@dataclass
class HistoryFit:
    """A loss history turned into a :class:`LossCurve` (and, for the optimus
    family, the steps to convergence), with the fit's diagnostics."""

    curve: LossCurve
    rmse: float  # on the normalised losses
    flags: list[str]
    total_steps: float | None = None  # optimus family: K(δ)


def fit_history(steps: Any, loss: Any, *, family: str = "optimus", decay: float = 0.9,
                threshold: float = 0.05) -> HistoryFit:
    """Fit a raw loss history to a normalised :class:`LossCurve`. The optimus
    family uses Optimus eq. 1 with its preprocessing; the SLAQ families fit the
    losses divided by the largest one, with exponentially decaying weights."""
    if family == "optimus":
        fit = fit_loss_curve(steps, loss)
        curve = LossCurve(family="optimus", params=list(fit.beta), step=fit.last_step)
        return HistoryFit(curve=curve, rmse=fit.rmse, flags=list(fit.flags), total_steps=fit.total_steps(threshold))
    if family not in CURVE_FAMILIES:
        raise CurveFitError(f'unknown family "{family}"; expected one of {", ".join(CURVE_FAMILIES)}')
    y = np.asarray(loss, dtype=float)
    k = np.asarray(steps, dtype=float)
    _validate(k, y, minimum=4)
    scale = float(y.max())
    if scale <= 0:
        raise CurveFitError("all losses are 0: nothing to fit")
    fit = fit_slaq_curve(k, y / scale, family, decay=decay)
    flags = ["loss did not decrease over the history"] if y[-1] >= y[0] else []
    return HistoryFit(curve=LossCurve(family=family, params=list(fit.params), step=float(k[-1])),
                      rmse=fit.rmse, flags=flags)
