"""``simulate``: online runs of schedulers on a workload."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from schedopt.cli.common import app, check_format, check_out_path, err, handles_bad_input, out, print_json, write_out
from schedopt.errors import InputError
from schedopt.instance import load_instance


@app.command()
@handles_bad_input
def simulate(
    workload: Path = typer.Argument(..., help="workload file: an instance whose jobs carry arrival and remaining_steps"),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="allocation solver (e.g. optimus-greedy, drf, tetris)"),
    compare_: Optional[str] = typer.Option(None, "--compare", help="comma-separated schedulers, same workload and seed"),
    placement: Optional[str] = typer.Option(None, "--placement", help="placement solver run after each allocation"),
    interval: float = typer.Option(600.0, "--interval", help="scheduling interval, seconds"),
    restart_overhead: float = typer.Option(60.0, "--restart-overhead", help="seconds lost when a job's configuration changes"),
    restart_aware: bool = typer.Option(True, "--restart-aware/--restart-blind", help="show the scheduler each running job's counts and the restart cost (reconfiguration-aware allocation), or not (Optimus eq. 5-6 as printed)"),
    communication_aware: bool = typer.Option(True, "--communication-aware/--communication-blind", help="with --placement, a PS job's transfer time follows its placement (co-located pairs free); blind: every job at its profile speed"),
    ps_assignment: Optional[str] = typer.Option(None, "--ps-assignment", help="ps-assignment solver (paa, mxnet-default) whose parameter split sets the PS imbalance of jobs with param_blocks; default: even"),
    seed: int = typer.Option(0, "--seed"),
    seeds: int = typer.Option(1, "--seeds", min=1, max=100, help="runs per scheduler, seeds --seed, --seed+1, ...; the table shows means with 95 % intervals (seeds vary the run's randomness: estimation errors, online fits, solver seeds; for other workloads use `schedopt sweep`)"),
    error_steps: float = typer.Option(0.0, "--error-steps", help="estimation error of remaining steps in [0, 1) (Fig. 15)"),
    error_speed: float = typer.Option(0.0, "--error-speed", help="estimation error of speeds in [0, 1) (Fig. 15)"),
    estimation: str = typer.Option("truth", "--estimation", help="what the scheduler sees: truth (with --error-steps/--error-speed) or online (eq. 1 fitted to the losses each job emits, eq. 3/4 refitted to the speeds observed; needs jobs with loss_curve)"),
    interference: bool = typer.Option(False, "--interference/--no-interference", help="jobs' true speeds vary with the cluster's load and over time, as DL2 §2.2 measured (27.3 % average spread of a job's completion time over runs; schedopt/sim/truth.py); default: none"),
    horizon: Optional[float] = typer.Option(None, "--horizon", help="stop after this many seconds"),
    out_path: Optional[Path] = typer.Option(None, "--out", help="write the result (.yaml/.json; - for standard output); with --compare, one file holding every scheduler's result"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="directory for the figures, created if absent (JCT/makespan bars, JCT CDF, utilization)"),
    format_: str = typer.Option("table", "--format", help="table (for people) or json (one JSON document on standard output)"),
) -> None:
    """Simulate WORKLOAD online under one or several schedulers; print JCT, makespan and utilization."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from schedopt.sim import simulate as run
    from schedopt.sim.result import results_document
    from schedopt.sim.truth import Interference

    names = [s.strip() for s in compare_.split(",") if s.strip()] if compare_ else ([scheduler] if scheduler else [])
    if not names:
        raise InputError("--scheduler", "give a scheduler (--scheduler NAME) or several (--compare a,b,c)")
    as_json = check_format(format_) == "json"
    check_out_path(out_path)
    if not 0 <= seed < 2**32 or seed + seeds > 2**32:  # the seeds solve takes
        raise InputError("--seed", f"expected an integer in [0, 2**32), got {seed}")
    if plot is not None and plot.exists() and not plot.is_dir():
        raise InputError(str(plot), "--plot names a file; give a directory (it is created if absent)")
    if plot is not None:
        from schedopt.plots import pyplot

        pyplot()  # fail before simulating when matplotlib is missing
    wl = load_instance(workload)
    for name in names:  # fail fast on an unknown name
        from schedopt.registry import solver_info

        solver_info(name if placement is None else f"{name}+{placement}")
    results = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} jobs done"),
                  TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal) as bar:
        for name in names:
            for run_seed in range(seed, seed + seeds):
                task = bar.add_task(name if seeds == 1 else f"{name} seed {run_seed}", total=len(wl.jobs))
                results.append(run(wl, name, placement=placement, interval_s=interval, restart_overhead_s=restart_overhead,
                                   restart_aware=restart_aware, communication_aware=communication_aware,
                                   ps_assignment=ps_assignment, seed=run_seed, error_steps=error_steps, error_speed=error_speed,
                                   estimation=estimation, horizon_s=horizon,
                                   interference=Interference() if interference else None,
                                   progress=lambda t, done, n, task=task: bar.update(task, completed=done)))
    document = results[0].to_dict() if len(results) == 1 else results_document(results)
    if as_json and not (out_path is not None and str(out_path) == "-"):
        print_json(document)
    if out_path is not None:
        write_out(out_path, document, as_json)
        if str(out_path) != "-" and not as_json:
            err.print(f"result written to {out_path}", highlight=False)
    if plot is not None:
        from schedopt.plots import plot_simulations

        plot.mkdir(parents=True, exist_ok=True)
        for p in plot_simulations(results, plot):
            err.print(f"figure written to {p}", highlight=False)
    if as_json or (out_path is not None and str(out_path) == "-"):
        return
    print_summary_table(wl, results, interval, seeds)


def print_summary_table(wl, results, interval: float, seeds: int) -> None:  # type: ignore[no-untyped-def]
    """One row per scheduler: with several seeds, mean ± the 95 % interval's half-width."""
    from schedopt.stats import ci95

    label_of = lambda r: r.scheduler + (f"+{r.placement}" if r.placement else "")  # noqa: E731
    labels = list(dict.fromkeys(label_of(r) for r in results))
    many = seeds > 1
    title = (f"{wl.name}: {len(wl.jobs)} jobs, {len(wl.server_names)} servers, interval {interval:g} s; "
             f"{'mean ± 95 % interval over ' + str(seeds) + ' seeds' if many else 'seed ' + str(results[0].seed)}; "
             "every metric is better lower (JCT, makespan: minimised)")
    table = Table(title=title)
    for col in ("scheduler", "avg JCT (h) ↓", "p90 JCT (h) ↓", "makespan (h) ↓", "finished", "restarts", "overhead %", "scheduler s"):
        table.add_column(col, justify="left" if col == "scheduler" else "right")

    def cell(values: list, scale: float = 1.0, digits: int = 3, count: bool = False) -> str:
        vals = [v / scale for v in values if v is not None]
        if not vals:
            return "-"
        mean, half = ci95(vals)
        if not many:
            return str(int(round(mean))) if count else f"{mean:.{digits}f}"
        return f"{mean:.{digits}f} ± {half:.{digits}f}"

    for lab in labels:
        runs = [r for r in results if label_of(r) == lab]
        table.add_row(lab, cell([r.avg_jct_s for r in runs], 3600), cell([r.jct_percentiles_s.get("p90") for r in runs], 3600),
                      cell([r.makespan_s for r in runs], 3600),
                      cell([float(r.finished) for r in runs], digits=1, count=True) + f"/{len(runs[0].jobs)}",
                      cell([float(r.restarts) for r in runs], digits=1, count=True),
                      cell([100 * r.scaling_overhead_share for r in runs], digits=2),
                      cell([r.scheduler_seconds for r in runs], digits=2))
    out.print(table)

