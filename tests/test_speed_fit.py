"""Speed fitting (Optimus §3.2): NNLS on the linearised eq. 3/4."""

from __future__ import annotations

import numpy as np
import pytest

from schedopt.data import dl2_config_speeds
from schedopt.speed import Amdahl, FitError, OptimusAsync, OptimusSync, SpeedFitter, TableSpeed, explain_table, fit_speed, steps_per_s
from tests.conftest import SHARED_DATA

GRID = np.array([(p, w) for p in range(1, 7) for w in range(1, 9)], dtype=float)


def samples(speed, pw=GRID, noise=0.0, seed=0):
    f = steps_per_s(speed, pw[:, 0], pw[:, 1])
    f = f * (1 + noise * np.random.default_rng(seed).standard_normal(len(f)))
    return np.column_stack([pw, f])


@pytest.mark.parametrize("speed", [OptimusSync(theta=[1.02, 2.78, 4.92, 0.0, 0.02], batch=256),
                                   OptimusAsync(theta=[2.83, 3.92, 0.0, 0.11])], ids=["table2-sync", "table2-async"])
def test_table2_coefficients_round_trip(speed) -> None:
    fit = fit_speed(samples(speed), speed.form, batch=getattr(speed, "batch", None))
    np.testing.assert_allclose(fit.speed.theta, speed.theta, atol=1e-9)
    assert fit.max_rel_error < 1e-12 and fit.residual_ss < 1e-20 and not fit.underdetermined


def test_noisy_samples_within_tolerance() -> None:
    truth = OptimusSync(theta=[0.5, 1.0, 2.0, 0.05, 0.1], batch=64)
    fit = fit_speed(samples(truth, noise=0.02, seed=3), "optimus-sync", batch=64)
    # 2% multiplicative noise: predictions within 5% on a held-out grid
    held = np.array([(p, w) for p in range(7, 10) for w in range(9, 12)], dtype=float)
    err = np.abs(steps_per_s(fit.speed, held[:, 0], held[:, 1]) / steps_per_s(truth, held[:, 0], held[:, 1]) - 1)
    assert err.max() < 0.05


def test_refit_as_samples_arrive() -> None:
    truth = OptimusAsync(theta=[2.0, 1.0, 0.1, 0.3])
    fitter = SpeedFitter("optimus-async")
    errors = []
    for p, w, f in samples(truth, noise=0.05, seed=1):
        fitter.add(p, w, f)
        if len(fitter._samples) >= 4:
            fit = fitter.fit()
            errors.append(np.abs(steps_per_s(fit.speed, GRID[:, 0], GRID[:, 1]) / steps_per_s(truth, GRID[:, 0], GRID[:, 1]) - 1).mean())
    assert errors[-1] < errors[0] and errors[-1] < 0.05


def test_degenerate_data_is_flagged_or_refused() -> None:
    one = fit_speed([[1, 1, 2.0]], "optimus-async")
    assert one.underdetermined and one.samples == 1
    with pytest.raises(FitError, match="NaN"):
        fit_speed([[1, 1, float("nan")]], "optimus-async")
    with pytest.raises(FitError, match="> 0"):
        fit_speed([[1, 1, -2.0]], "optimus-async")
    with pytest.raises(FitError, match="shape"):
        fit_speed([[1, 2]], "optimus-async")
    with pytest.raises(FitError, match="batch"):
        fit_speed([[1, 1, 1.0]], "optimus-sync")
    with pytest.raises(FitError, match="cannot fit"):
        fit_speed([[1, 1, 1.0]], "table")
    with pytest.raises(FitError, match=r"\(n, speed\)"):
        fit_speed([[1, 1, 1.0]], "amdahl")


def test_amdahl_recovered_exactly_from_noiseless_samples() -> None:
    truth = Amdahl(serial=0.05, parallel=2.0)
    n = np.arange(1, 9, dtype=float)
    fit = fit_speed(np.column_stack([n, 1.0 / truth.step_time_s(n, 0)]), "amdahl")
    assert fit.speed.serial == pytest.approx(0.05, rel=1e-9)
    assert fit.speed.parallel == pytest.approx(2.0, rel=1e-9)
    assert fit.max_rel_error < 1e-9 and not fit.underdetermined


def test_explain_table() -> None:
    truth = OptimusSync(theta=[0.3, 1.0, 0.5, 0.0, 0.1], batch=32)
    table = TableSpeed(points=samples(truth).tolist())
    assert explain_table(table, batch=32).max_rel_error < 1e-9


@pytest.mark.skipif(not (SHARED_DATA / "measured" / "dl2_config_speed.txt").is_file(),
                    reason="needs ../shared/data/measured/dl2_config_speed.txt (measured DL2 speeds; not redistributed)")
def test_fitted_form_predicts_held_out_measurements() -> None:
    """Optimus Fig. 8: under 10% error from 10 samples; ours on the DL2 measurements."""
    data = dl2_config_speeds(SHARED_DATA)
    rng = np.random.default_rng(0)
    for model, v in data.items():
        pts = v["points"]
        errs = []
        for _ in range(10):
            idx = rng.permutation(len(pts))
            fit = fit_speed(pts[idx[:10]], "optimus-sync", batch=v["batch"])
            te = pts[idx[10:]]
            errs.append(np.median(np.abs(steps_per_s(fit.speed, te[:, 0], te[:, 1]) - te[:, 2]) / te[:, 2]))
        assert np.median(errs) < 0.15, (model, np.median(errs))
