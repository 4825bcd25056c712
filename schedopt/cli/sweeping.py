"""``sweep``: many simulations or solves from one spec, on Ray or in process (docs/sweeps.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from schedopt.cli.common import EXIT_FAILED, app, err, handles_bad_input, out
from schedopt.errors import InputError


@app.command()
@handles_bad_input
def sweep(
    spec: Path = typer.Argument(..., help="sweep spec (schema schedopt/sweep@1): workloads, seeds, loads, schedulers, settings"),
    out_dir: Path = typer.Option(..., "--out", help="folder for the cell cache and results (results.csv/json, summary, figures)"),
    workers: Optional[int] = typer.Option(None, "--workers", help="CPUs of the local Ray started for the run (default: all); 1 = in this process, without Ray"),
    address: Optional[str] = typer.Option(None, "--address", help="an existing Ray cluster: auto, or ray://HOST:PORT"),
) -> None:
    """Run every cell of SPEC as a Ray task (or in process with --workers 1); a rerun computes only missing cells."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from schedopt.sweeps import sweep as run_sweep

    if workers is not None and not 1 <= workers <= 4096:
        raise InputError("--workers", f"expected an integer in [1, 4096], got {workers}")
    if workers is not None and workers != 1 and address is not None:
        raise InputError("--workers", "--workers sizes a local Ray; with --address the cluster decides (leave --workers out)")
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(str(out_dir), "--out names a file; give a folder (it is created if absent)")
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[state]}"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err, transient=True,
                  disable=not err.is_terminal) as bar:
        task = bar.add_task("cells", total=None, state="")

        def progress(done: int, failed: int, running: int, total: int) -> None:
            bar.update(task, total=total, completed=done + failed,
                       state=f"{done} done, {failed} failed, {running} queued or running, {total} in all")

        try:
            table = run_sweep(spec, out_dir, workers=workers, address=address, progress=progress)
        except KeyboardInterrupt:
            err.print(f"interrupted: finished cells are cached in {out_dir}; run the same command to go on", highlight=False)
            raise typer.Exit(130) from None
    failed = table.failed
    out.print(f"{len(table.rows) - len(failed)} cells done, {len(failed)} failed; results in {out_dir}/results.csv, "
              f"summary in {out_dir}/summary.csv", highlight=False)
    for r in failed[:10]:
        err.print(f"failed: {r['workload']} seed {r['seed']} load {r['load']} {r['scheduler']}: {r['error']}",
                  highlight=False, markup=False)
    if failed:
        raise typer.Exit(EXIT_FAILED)
