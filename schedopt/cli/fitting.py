"""``fit speed`` and ``fit loss``: performance models from observations."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
import yaml

from schedopt.cli.common import app, handles_bad_input, out
from schedopt.errors import InputError
from schedopt.io import read_csv_numbers


fit_app = typer.Typer(no_args_is_help=True, help="Fit performance models to observations (Optimus §3, SLAQ §2).")
app.add_typer(fit_app, name="fit")

SPEED_COLUMNS = {"optimus-sync": ("p", "w", "speed"), "optimus-async": ("p", "w", "speed"), "amdahl": ("n", "speed")}


@fit_app.command("speed")
@handles_bad_input
def fit_speed_cmd(
    file: Path = typer.Argument(..., help="CSV of p,w,speed (optimus forms) or n,speed (amdahl); speed in steps/s"),
    form: str = typer.Option("optimus-sync", "--form", help="optimus-sync | optimus-async | amdahl"),
    batch: Optional[float] = typer.Option(None, "--batch", help="batch size M (optimus-sync)"),
    relative: bool = typer.Option(False, "--relative", help="weight rows by speed (fit relative errors)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="draw data and fitted curve (.png/.pdf/.svg)"),
) -> None:
    """Fit Optimus eq. 3/4 (or Amdahl) by NNLS; print coefficients and errors."""
    from schedopt.speed import FitError, fit_speed

    if form not in SPEED_COLUMNS:
        raise InputError("--form", f'expected one of {", ".join(SPEED_COLUMNS)}, got "{form}"')
    if plot is not None:
        from schedopt.plots import check_plot_path

        check_plot_path(plot)
    samples = read_csv_numbers(file, SPEED_COLUMNS[form])
    try:
        fit = fit_speed(samples, form, batch=batch, relative=relative)
    except FitError as exc:
        raise InputError(str(file), f"cannot fit {form}: {exc}") from None
    out.print(f"[bold]{form}[/bold] fitted to {fit.samples} samples ({fit.configurations} configurations) from {file}")
    out.print("  speed: " + yaml.safe_dump(fit.speed.model_dump(mode="json"), default_flow_style=True, width=10**6).strip(),
              markup=False)
    out.print(f"  relative error: mean {100 * fit.mean_rel_error:.2f}%, max {100 * fit.max_rel_error:.2f}%; "
              f"residual sum of squares {fit.residual_ss:.4g}")
    if fit.underdetermined:
        out.print("  warning: fewer distinct configurations than coefficients; the coefficients are not unique")
    if plot is not None:
        from schedopt.plots import plot_speed

        plot_speed(samples, fit.speed, plot, f"{Path(file).name}: {form}")
        out.print(f"  figure written to {plot}")


@fit_app.command("loss")
@handles_bad_input
def fit_loss_cmd(
    file: Path = typer.Argument(..., help="CSV of step,loss"),
    family: str = typer.Option("optimus", "--family", help="optimus (eq. 1) | sublinear | linear (SLAQ)"),
    threshold: float = typer.Option(0.05, "--threshold", help="convergence threshold δ in (0, 1) (optimus family)"),
    decay: float = typer.Option(0.9, "--decay", help="SLAQ history weight in (0, 1]"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="draw data and fitted curve (.png/.pdf/.svg)"),
) -> None:
    """Fit a loss curve; print its parameters, error and (optimus) the steps to convergence."""
    from schedopt.convergence import CurveFitError, fit_history

    if not 0 < threshold < 1:
        raise InputError("--threshold", f"expected a number in (0, 1), got {threshold}")
    if not 0 < decay <= 1:
        raise InputError("--decay", f"expected a number in (0, 1], got {decay}")
    if plot is not None:
        from schedopt.plots import check_plot_path

        check_plot_path(plot)
    data = read_csv_numbers(file, ("step", "loss"))
    try:
        fit = fit_history(data[:, 0], data[:, 1], family=family, decay=decay, threshold=threshold)
    except CurveFitError as exc:
        raise InputError(str(file), f"cannot fit the {family} family: {exc}") from None
    out.print(f"[bold]{family}[/bold] loss curve fitted to {len(data)} points from {file}")
    out.print("  loss_curve: " + yaml.safe_dump(fit.curve.model_dump(mode="json"), default_flow_style=True, width=10**6).strip(),
              markup=False)
    out.print(f"  rmse (normalised loss) {fit.rmse:.4g}")
    for flag in fit.flags:
        out.print(f"  warning: {flag}")
    if fit.total_steps is not None:
        remaining = max(0.0, fit.total_steps - fit.curve.step)
        out.print(f"  converges (δ = {threshold:g}) at step {fit.total_steps:.6g}: {remaining:.6g} steps remaining")
    if plot is not None:
        from schedopt.plots import plot_loss

        plot_loss(data[:, 0], data[:, 1], fit.curve, plot, f"{Path(file).name}: {family}", until_step=fit.total_steps)
        out.print(f"  figure written to {plot}")


