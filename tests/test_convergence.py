"""Loss-curve fitting (Optimus eq. 1, SLAQ) and remaining-steps estimation."""

from __future__ import annotations

import numpy as np
import pytest

from schedopt.convergence import (
    CurveFitError, fit_loss_curve, fit_slaq_curve, normalise, normalised_delta_loss, replace_outliers,
)

TRUE = (0.02, 1.0, 0.05)  # β0, β1, β2 on the normalised scale


def curve(k: np.ndarray, beta=TRUE) -> np.ndarray:
    return 1.0 / (beta[0] * k + beta[1]) + beta[2]


def test_recovers_noiseless_coefficients() -> None:
    k = np.arange(0, 400.0)
    raw = 3.0 * curve(k)  # any scale: normalisation divides by the first (largest) loss
    fit = fit_loss_curve(k, raw, outliers=False)
    first = curve(0.0)
    np.testing.assert_allclose(fit.beta, (TRUE[0] * first, TRUE[1] * first, TRUE[2] / first), rtol=1e-5, atol=1e-8)
    assert fit.rmse < 1e-8 and not fit.flags


def test_remaining_steps_error_falls_with_progress() -> None:
    """Optimus Fig. 6's shape: the estimate of total steps improves as more of the curve is seen."""
    rng = np.random.default_rng(0)
    k = np.arange(0, 3000.0)
    noisy = curve(k) * (1 + 0.02 * rng.standard_normal(len(k)))
    truth = fit_loss_curve(k, curve(k), outliers=False).total_steps(0.05)
    errors = []
    for frac in (0.05, 0.2, 0.5, 1.0):
        n = int(len(k) * frac)
        est = fit_loss_curve(k[:n], noisy[:n]).total_steps(0.05)
        errors.append(abs(est - truth) / truth)
    assert errors[-1] < errors[0]
    assert errors[-1] < 0.1
    fit = fit_loss_curve(k[:1000], noisy[:1000])
    assert fit.remaining_steps(0.05) == pytest.approx(max(0.0, fit.total_steps(0.05) - 999))


def test_total_steps_closed_form() -> None:
    fit = fit_loss_curve(np.arange(0, 200.0), curve(np.arange(0, 200.0)), outliers=False)
    b0, b1, b2 = fit.beta
    K = fit.total_steps(0.1)
    assert fit.loss(K) - b2 == pytest.approx(0.1 * (fit.loss(0) - b2), rel=1e-9)


@pytest.mark.parametrize("steps,loss,match", [
    ([0], [1.0], "at least 3"),
    ([0, 1, 2], [1.0, float("nan"), 0.5], "NaN"),
    ([0, 1, 2], [1.0, -0.2, 0.5], ">= 0"),
    ([0, 0, 1], [1.0, 0.9, 0.8], "increasing"),
    ([0, 1, 2], [0.0, 0.0, 0.0], "all losses are 0"),
])
def test_degenerate_histories_raise_clear_errors(steps, loss, match) -> None:
    with pytest.raises(CurveFitError, match=match):
        fit_loss_curve(steps, loss)


def test_constant_and_increasing_loss_are_flagged() -> None:
    const = fit_loss_curve(np.arange(10.0), np.ones(10))
    assert "loss did not decrease over the history" in const.flags
    rising = fit_loss_curve(np.arange(10.0), np.linspace(1, 2, 10))
    assert "loss did not decrease over the history" in rising.flags


def test_preprocessing() -> None:
    y = np.array([1.0, 0.9, 5.0, 0.8, 0.7, 0.6, 0.55, 0.5])
    fixed = replace_outliers(y)
    assert fixed[2] == pytest.approx(0.85) and fixed[0] == 1.0
    assert normalise(np.array([2.0, 1.0, 4.0]))[1] == pytest.approx(0.5)
    many = fit_loss_curve(np.arange(10_000.0), curve(np.arange(10_000.0)), max_points=200)
    assert many.points == 200


def test_slaq_normalised_delta_and_curves() -> None:
    d = normalised_delta_loss([10, 6, 4, 3, 2.5])
    np.testing.assert_allclose(d, [1.0, 0.5, 0.25, 0.125])
    k = np.arange(1, 60.0)
    sub = 1.0 / (0.01 * k * k + 0.5 * k + 1.0) + 0.1
    fit = fit_slaq_curve(k, sub, "sublinear")
    assert fit.rmse < 1e-4 and abs(fit.loss(70.0) - (1 / (0.01 * 4900 + 35 + 1) + 0.1)) < 1e-3
    lin = 0.8 ** (k - 2.0) + 0.05
    fit = fit_slaq_curve(k, lin, "linear")
    assert fit.rmse < 1e-4 and fit.params[0] == pytest.approx(0.8, rel=1e-3)
    with pytest.raises(CurveFitError):
        fit_slaq_curve(k, lin, "cubic")


def test_vectorised_outliers_match_the_definition() -> None:
    rng = np.random.default_rng(1)
    y = np.abs(rng.standard_normal(300)).cumsum()[::-1] + rng.exponential(1, 300) * (rng.random(300) < 0.1) * 50
    out = replace_outliers(y)
    for i in range(1, len(y) - 1):
        lo, hi = y[i + 1: i + 6].min(), y[max(0, i - 5): i].max()
        expected = y[i] if lo <= y[i] <= hi else 0.5 * (y[i - 1] + y[i + 1])
        assert out[i] == pytest.approx(expected)
