"""``solve``, ``compare``, ``check`` and ``solvers``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from schedopt.api import compare as compare_solvers
from schedopt.api import solve as solve_instance
from schedopt.checking import check as check_plan
from schedopt.cli.common import (EXIT_FAILED, app, check_out_path, err, fmt, handles_bad_input, out,
                                 parse_options)
from schedopt.instance import load_instance
from schedopt.plan import Plan, load_plan, save_plan
from schedopt.registry import solvers as list_solvers


def summary(plan: Plan) -> None:
    o = plan.objective
    out.print(f"[bold]{plan.solver}[/bold] on {plan.instance}: status [bold]{plan.status.value}[/bold] "
              f"(stopped: {plan.termination.value}), admitted {o.admitted}, paused {len(plan.paused)}")
    out.print(f"  {o.name} = {fmt(o.value)}  bound = {fmt(o.bound)}  gap = "
              f"{'-' if o.gap is None else f'{100 * o.gap:.4g}%'}  in {plan.solve_seconds:.3f} s")
    if plan.message:
        out.print(f"  note: {plan.message}", markup=False)


@app.command()
@handles_bad_input
def solve(
    file: Path = typer.Argument(..., help="instance file (.yaml/.json)"),
    solver: str = typer.Option(..., "--solver", "-s", help="solver name (see `schedopt solvers`)"),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="seconds (exact solvers)"),
    seed: Optional[int] = typer.Option(None, "--seed"),
    out_path: Optional[Path] = typer.Option(None, "--out", help="write the plan here (.yaml/.json)"),
    option: list[str] = typer.Option([], "--option", "-o", help="solver option KEY=VALUE (repeatable)"),
) -> None:
    """Solve FILE with one solver; print a summary and optionally write the plan."""
    check_out_path(out_path)
    instance = load_instance(file)
    plan = solve_instance(instance, solver, time_limit=time_limit, seed=seed, **parse_options(option))
    violations = check_plan(instance, plan)
    summary(plan)
    for v in violations:
        err.print(f"check: {v}", markup=False, highlight=False)
    if out_path is not None:
        save_plan(plan, out_path)
        out.print(f"  plan written to {out_path}")
    if violations or not plan.has_solution:
        raise typer.Exit(EXIT_FAILED)


@app.command()
@handles_bad_input
def compare(
    file: Path = typer.Argument(..., help="instance file (.yaml/.json)"),
    solvers: Optional[str] = typer.Option(None, "--solvers", help="comma-separated names (default: every solver of the problem)"),
    problem: Optional[str] = typer.Option(None, "--problem", help="allocation | quality | partition (default: inferred from the jobs)"),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="seconds per exact solver"),
    seed: Optional[int] = typer.Option(None, "--seed"),
) -> None:
    """Run several solvers on FILE and print status, objective, bound, gap, seconds and check."""
    instance = load_instance(file)
    names = [s.strip() for s in solvers.split(",") if s.strip()] if solvers else None
    result = compare_solvers(instance, names, time_limit=time_limit, seed=seed, problem=problem)
    table = Table(title=f"{instance.name}: {len(instance.jobs)} jobs, {len(instance.server_names)} servers")
    for col, justify in [("solver", "left"), ("status", "left"), ("admitted", "right"), ("objective", "right"),
                         ("bound", "right"), ("gap %", "right"), ("seconds", "right"), ("check", "left")]:
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for rec in result.records():
        table.add_row(rec["solver"], rec["status"], fmt(rec["admitted"], "d"), fmt(rec["objective"]),
                      fmt(rec["bound"]), "-" if rec["gap"] is None else f"{100 * rec['gap']:.4f}",
                      f"{rec['seconds']:.3f}", rec["check"])
    out.print(table)
    if any(not row.ok for row in result.rows):
        raise typer.Exit(EXIT_FAILED)


@app.command()
@handles_bad_input
def check(
    file: Path = typer.Argument(..., help="instance file"),
    plan_file: Path = typer.Argument(..., metavar="PLAN", help="plan file"),
) -> None:
    """Recompute PLAN's objective and constraints from FILE alone; list violations."""
    instance = load_instance(file)
    plan = load_plan(plan_file)
    violations = check_plan(instance, plan)
    if violations:
        for v in violations:
            out.print(f"violation {v}", markup=False, highlight=False)
        raise typer.Exit(EXIT_FAILED)
    out.print(f"ok: {plan.solver} plan for {instance.name} passes every check "
              f"({plan.objective.name} = {fmt(plan.objective.value)})")


@app.command()
@handles_bad_input
def solvers() -> None:
    """List the registered solvers with their capability flags and options."""
    table = Table(title="schedopt solvers")
    for col in ("name", "problem", "kind", "backend", "time limit", "options", "description"):
        table.add_column(col)
    for info in list_solvers():
        opts = ", ".join(f"{k}={v}" for k, v in info.options.items()) or "-"
        table.add_row(info.name, info.problem, "exact" if info.exact else "heuristic", info.backend,
                      "yes" if info.supports_time_limit else "-", opts, info.description)
    out.print(table)


