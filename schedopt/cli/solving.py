"""``solve``, ``compare``, ``check`` and ``solvers``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schedopt.api import compare as compare_solvers
from schedopt.api import solve as solve_instance
from schedopt.checking import check as check_plan, check_report
from schedopt.cli.common import (EXIT_FAILED, app, busy, check_format, check_out_path, err, fmt, handles_bad_input,
                                 out, parse_options, parse_solver_options, print_json, stderr_logging, write_out)
from schedopt.instance import load_instance
from schedopt.plan import Plan, load_plan
from schedopt.registry import solvers as list_solvers


def summary(plan: Plan, console: Console) -> None:
    o = plan.objective
    console.print(f"[bold]{plan.solver}[/bold] on {plan.instance}: status [bold]{plan.status.value}[/bold] "
                  f"(stopped: {plan.termination.value}), admitted {o.admitted}, paused {len(plan.paused)}")
    console.print(f"  {o.name} = {fmt(o.value)}  bound = {fmt(o.bound)}  gap = "
                  f"{'-' if o.gap is None else f'{100 * o.gap:.4g}%'}  in {plan.solve_seconds:.3f} s")
    if plan.message:
        console.print(f"  note: {plan.message}", markup=False)
    explain(plan, console)


#: pending jobs listed by the summary; the plan's metrics.pending holds them all
SHOWN_PENDING = 20


def explain(plan: Plan, console: Console) -> None:
    """What an admin reads of an admission (``kueue-admission``'s metrics): each queue's usage per
    resource@flavor, the workloads preempted, and why each pending workload is pending."""
    usage = plan.metrics.get("queue_usage") or {}
    shares = plan.metrics.get("share_values") or {}
    for queue, per in usage.items():
        used = ", ".join(f"{key} {fmt(v)}" for key, v in per.items() if v) or "nothing"
        share = f" (share value {fmt(shares[queue])})" if queue in shares else ""
        console.print(f"  queue {queue} uses {used}{share}", markup=False, highlight=False)
    if plan.metrics.get("preempted"):
        console.print(f"  preempted: {', '.join(plan.metrics['preempted'])}", markup=False, highlight=False)
    pending = plan.metrics.get("pending") or {}
    for job_id, why in list(pending.items())[:SHOWN_PENDING]:
        console.print(f"  pending {job_id}: {why}", markup=False, highlight=False)
    if len(pending) > SHOWN_PENDING:
        console.print(f"  ... and {len(pending) - SHOWN_PENDING} more pending (the plan's metrics.pending)", markup=False)


FORMAT_HELP = "table (for people) or json (one JSON document on standard output)"


@app.command()
@handles_bad_input
def solve(
    file: Path = typer.Argument(..., help="instance file (.yaml/.json)"),
    solver: str = typer.Option(..., "--solver", "-s", help="solver name (see `schedopt solvers`)"),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="seconds for the solve, counted once FILE is read and validated (start-up and reading come before it, the plan's check and writing after; 0: the best plan available at once)"),
    seed: Optional[int] = typer.Option(None, "--seed"),
    out_path: Optional[Path] = typer.Option(None, "--out", help="write the plan here (.yaml/.json; - for standard output)"),
    option: list[str] = typer.Option([], "--option", "-o", help="solver option KEY=VALUE (repeatable)"),
    format_: str = typer.Option("table", "--format", help=FORMAT_HELP),
    log: bool = typer.Option(False, "--log", help="stream the backend's progress (HiGHS, CP-SAT) to standard error"),
) -> None:
    """Solve FILE with one solver; print a summary and optionally write the plan.

    Exit status 0 when the plan has a solution (optimal, feasible, heuristic or
    kept_previous, also when the time limit stopped the search); 1 when there is
    no plan (infeasible, or the time limit came first) or the check fails."""
    as_json = check_format(format_) == "json"
    check_out_path(out_path)
    to_stdout = out_path is not None and str(out_path) == "-"
    instance = load_instance(file)
    with busy(f"solving {instance.name} with {solver}", log), stderr_logging(log):
        plan = solve_instance(instance, solver, time_limit=time_limit, seed=seed, log=log, **parse_options(option))
    violations = check_plan(instance, plan)
    if as_json and not to_stdout:
        print_json({"plan": plan.to_dict(), "check": [str(v) for v in violations]})
    elif not as_json:
        summary(plan, err if to_stdout else out)
    for v in violations:
        err.print(f"check: {v}", markup=False, highlight=False)
    if out_path is not None:
        write_out(out_path, plan.to_dict(), as_json)
        if not to_stdout and not as_json:
            out.print(f"  plan written to {out_path}")
    if violations or not plan.has_solution:
        raise typer.Exit(EXIT_FAILED)


@app.command()
@handles_bad_input
def compare(
    file: Path = typer.Argument(..., help="instance file (.yaml/.json)"),
    solvers: Optional[str] = typer.Option(None, "--solvers", help="comma-separated names (default: every solver of the problem)"),
    problem: Optional[str] = typer.Option(None, "--problem", help="allocation | quality | partition | placement | ps-assignment (default: inferred)"),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="seconds per solver"),
    seed: Optional[int] = typer.Option(None, "--seed"),
    option: list[str] = typer.Option([], "--option", "-o", help="SOLVER.KEY=VALUE, e.g. optimus-milp.rel_gap=0.01 (repeatable)"),
    format_: str = typer.Option("table", "--format", help=FORMAT_HELP),
    log: bool = typer.Option(False, "--log", help="stream the backends' progress to standard error"),
) -> None:
    """Run several solvers on FILE and print status, objective, bound, gap, seconds and check."""
    as_json = check_format(format_) == "json"
    instance = load_instance(file)
    names = [s.strip() for s in solvers.split(",") if s.strip()] if solvers else None
    with busy(f"comparing on {instance.name}", log) as status, stderr_logging(log):
        def progress(k: int, name: str) -> None:
            line = f"running {name} ({k + 1}/{len(names) if names else '?'})"
            if status is not None:
                status.update(line)
            elif log:
                err.print(f"compare: {line}", highlight=False)
        result = compare_solvers(instance, names, time_limit=time_limit, seed=seed, problem=problem,
                                 options=parse_solver_options(option), progress=progress, log=log)
    if as_json:
        print_json({"instance": result.instance, "rows": result.records(),
                    "violations": {row.solver: [str(v) for v in row.violations] for row in result.rows if row.violations}})
    else:
        from schedopt.problems import get_problem

        def says(plan) -> str:  # type: ignore[no-untyped-def]
            first = get_problem(plan.problem).objectives
            before = f"; first {first[0].name}, {'maximised' if first[0].sense == 'max' else 'minimised'}" if len(first) > 1 else ""
            return (f"objective {plan.objective.name} ({'minimised' if plan.objective.sense == 'min' else 'maximised'}"
                    f"{before})")

        sense = "; ".join(sorted({says(row.plan) for row in result.rows}))
        table = Table(title=f"{instance.name}: {len(instance.jobs)} jobs, {len(instance.server_names)} servers; {sense}")
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
    format_: str = typer.Option("table", "--format", help=FORMAT_HELP),
    strict: bool = typer.Option(False, "--strict", help="fail on any claim (bound, admitted_bound, gap, optimal) no "
                                                        "replayable certificate proves, and on a solver that carries a "
                                                        "bound stating none"),
) -> None:
    """Recompute PLAN's objective and constraints from FILE alone, replay its certificates; list violations."""
    as_json = check_format(format_) == "json"
    instance = load_instance(file)
    plan = load_plan(plan_file)
    report = check_report(instance, plan, strict=strict)
    violations = report.violations + (report.unverified if strict else [])
    if as_json:
        print_json({"ok": not violations, "solver": plan.solver, "instance": instance.name,
                    "objective": plan.objective.name, "value": plan.objective.value, "strict": strict,
                    "violations": [{"path": v.path, "message": v.message} for v in violations],
                    "not_verified": [{"path": v.path, "message": v.message} for v in report.unverified],
                    "verified": report.verified, "not_stated": report.not_stated})
    else:
        # one line per claim: what is wrong, what is unproven, what is verified, what is not stated
        for v in report.violations:
            out.print(f"violation {v}", markup=False, highlight=False)
        for v in report.unverified:
            out.print(f"{'unproven' if strict else 'not verified'} {v}", markup=False, highlight=False)
        for line in report.verified:
            out.print(f"verified {line}", markup=False, highlight=False)
        for claim in report.not_stated:
            out.print(f"not stated {claim}", markup=False, highlight=False)
        if not violations:
            out.print(f"ok: {plan.solver} plan for {instance.name} passes every check{' (strict)' if strict else ''} "
                      f"({plan.objective.name} = {fmt(plan.objective.value)})", markup=False, highlight=False)
    if violations:
        raise typer.Exit(EXIT_FAILED)


@app.command()
@handles_bad_input
def solvers(
    long: bool = typer.Option(False, "--long", "-l", help="also options and descriptions (a wide table)"),
    format_: str = typer.Option("table", "--format", help=FORMAT_HELP),
) -> None:
    """List the registered solvers with their capability flags (and, with --long, options)."""
    as_json = check_format(format_) == "json"
    infos = list_solvers()
    if as_json:
        print_json([{"name": i.name, "problem": i.problem, "exact": i.exact, "backend": i.backend,
                     "supports_time_limit": i.supports_time_limit, "available": i.unavailable is None,
                     "unavailable_because": i.unavailable, "options": i.options, "description": i.description}
                    for i in infos])
        return
    table = Table(title="schedopt solvers" + ("" if long else " (--long for options and descriptions)"))
    cols = ["name", "problem", "kind", "backend", "time limit", "available"] + (["options", "description"] if long else [])
    for col in cols:
        table.add_column(col, no_wrap=col in ("name", "problem"))
    for info in infos:
        row = [info.name, info.problem, "exact" if info.exact else "heuristic", info.backend,
               "yes" if info.supports_time_limit else "-", "yes" if info.unavailable is None else escape(f"no: {info.unavailable}")]
        if long:
            row += [", ".join(f"{k}={v}" for k, v in info.options.items()) or "-", info.description]
        table.add_row(*row)
    out.print(table)
