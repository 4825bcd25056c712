"""``bench``: the benchmark library (list, materialize, run, verify, report; docs/benchmarks.md)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from schedopt.cli.common import (EXIT_FAILED, app, check_format, check_out_path, err, fmt, handles_bad_input, out,
                                 parse_options, print_json)
from schedopt.errors import InputError

bench = typer.Typer(help="The benchmark library: instance sets with best known values and proofs.", no_args_is_help=True)
app.add_typer(bench, name="bench")

SET_HELP = ("all, benchmark (the quick subset), a set (allocation, quality, partition, placement, ps-assignment), "
            "SET:benchmark, or a record id; several joined by commas")
DATA_HELP = "shared data folder (traces/, measured/); default $SCHEDOPT_DATA_DIR, else ../shared/data"
SUBMISSION_HELP = "a submission folder (bench run --submit) whose records replace the package's"


def _list_row(r: Any) -> dict[str, Any]:
    return {"id": r.id, "set": r.set, "problem": r.problem, "family": r.family, "tags": r.tags, "benchmark": r.benchmark,
            "jobs": r.jobs, "servers": r.servers, "recipe": r.recipe.model_dump(mode="json", exclude_defaults=True),
            "command": r.recipe.command(), "checksum": r.checksum, "status": r.status, "objective": r.objective,
            "sense": r.sense, "best_known": r.best_known, "admitted": r.admitted, "bound": r.bound,
            "admitted_bound": r.admitted_bound, "gap": r.gap, "backend_optimal": r.backend_optimal,
            "solver": r.provenance.solver, "bound_from": r.provenance.bound_from}


@bench.command("list")
@handles_bad_input
def list_(
    set_: str = typer.Option("all", "--set", help=SET_HELP),
    format_: str = typer.Option("table", "--format", help="table or json (one object per instance)"),
    submission: list[Path] = typer.Option([], "--submission", help=SUBMISSION_HELP),
) -> None:
    """List the records: id, set, problem, size, status, best known value and bound."""
    from schedopt.bench import select

    check_format(format_)
    sel = select(set_, submissions=list(submission))
    if format_ == "json":
        print_json({"collection": sel.collection.collection, "instances": [_list_row(r) for r in sel.records]})
        return
    table = Table(title=f"{sel.collection.collection}: {len(sel.records)} instances ({set_})")
    for col in ("id", "problem", "jobs", "servers", "status", "admitted", "best known", "bound", "gap", "bench", "data"):
        table.add_column(col, overflow="fold")
    for r in sel.records:
        gap = r.gap
        table.add_row(r.id, r.problem, str(r.jobs), str(r.servers), r.status + (" (backend)" if r.backend_optimal else " (hard)" if "hard" in r.tags else ""),
                      fmt(r.admitted), fmt(r.best_known), fmt(r.bound),
                      "-" if gap is None else ("inf" if math.isinf(gap) else f"{100 * gap:.3g}%"),
                      "yes" if r.benchmark else "", "yes" if r.recipe.data else "")
    out.print(table)
    n_opt = sum(r.status == "optimal" for r in sel.records)
    out.print(f"{n_opt} optimal (replayable proof), {len(sel.records) - n_opt} open; "
              f"{sum(r.recipe.data for r in sel.records)} made from the shared data folder at run time", highlight=False)


@bench.command("materialize")
@handles_bad_input
def materialize(
    set_: str = typer.Argument(..., metavar="SET", help=SET_HELP),
    out_dir: Path = typer.Option(..., "--out", help="folder to write ID.json instances into (created if absent)"),
    plans: bool = typer.Option(False, "--plans", help="also write each record's best known plan as ID.plan.json"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_HELP),
) -> None:
    """Write the instances of SET as files (those made from the data folder only when it is there)."""
    from schedopt.bench import instances
    from schedopt.instance import save_instance
    from schedopt.plan import save_plan

    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(str(out_dir), "--out names a file; give a folder")
    items = instances(set_, data_dir=data_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = 0
    for item in items:
        if item.instance is None:
            err.print(f"skipped {item.record.id}: {item.skipped}", highlight=False, markup=False)
            continue
        save_instance(item.instance, out_dir / f"{item.record.id}.json")
        if plans:
            save_plan(item.best_plan, out_dir / f"{item.record.id}.plan.json")
        written += 1
    out.print(f"wrote {written} instances to {out_dir} ({len(items) - written} skipped)", highlight=False)


@bench.command("run")
@handles_bad_input
def run(
    set_: str = typer.Argument(..., metavar="SET", help=SET_HELP),
    solver: str = typer.Option(..., "--solver", help="a registered solver (plugins too; schedopt solvers lists them)"),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="seconds per instance"),
    seed: int = typer.Option(0, "--seed", help="the solver's seed"),
    option: list[str] = typer.Option([], "--option", help="solver option KEY=VALUE (repeatable)"),
    format_: str = typer.Option("table", "--format", help="table or json"),
    out_path: Optional[Path] = typer.Option(None, "--out", help="write the run (instances, summary, environment) as JSON"),
    submit: Optional[Path] = typer.Option(None, "--submit", help="write improvements on the records into this folder "
                                                                "(bench verify --submission DIR replays them)"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_HELP),
    submission: list[Path] = typer.Option([], "--submission", help=SUBMISSION_HELP),
) -> None:
    """Run SOLVER on each instance of SET that poses its problem; check each plan and report its gap
    to the best known, time and status, and a summary (solved count, mean gap, shifted geometric mean time)."""
    from schedopt.bench import run as run_bench
    from schedopt.io import write_document

    check_format(format_)
    options = parse_options(list(option))
    if out_path is not None:
        check_out_path(out_path)
        if out_path.suffix.lower() != ".json":
            raise InputError(str(out_path), "--out: a bench run is written as JSON (.json)")
    if submit is not None and submit.exists() and not submit.is_dir():
        raise InputError(str(submit), "--submit names a file; give a folder")

    def progress(row: Any) -> None:
        if format_ == "table" and err.is_terminal:
            err.print(f"{row.id}: {row.outcome}", highlight=False, markup=False)

    result = run_bench(set_, solver, time_limit=time_limit, seed=seed, options=options, data_dir=data_dir,
                       submissions=list(submission), submit=submit, progress=progress)
    data = result.to_dict()
    if out_path is not None:
        write_document(out_path, data, tidy=True)
    s = result.summary()
    if format_ == "json":
        print_json(data)
    else:
        table = Table(title=f"{solver} on {result.collection} ({set_}): {s['records']} {result.problem} instances")
        for col in ("id", "outcome", "status", "admitted", "value", "best known", "best status", "gap", "seconds", "note"):
            table.add_column(col, overflow="fold")
        for r in result.rows:
            gap = "inf (fewer admitted)" if r.fewer_admitted else ("better" if r.improves else
                                                                   ("-" if r.gap is None else f"{100 * r.gap:.3g}%"))
            table.add_row(r.id, r.outcome, r.status or "-", fmt(r.admitted), fmt(r.value), fmt(r.best_known),
                          r.best_status or "-", gap, fmt(r.seconds, ".3g"), r.note or "")
        out.print(table)
        out.print(f"ran {s['ran']}, solved {s['solved']}, at the best known {s['at_best']}, proven optimal "
                  f"{s['proven_optimal']}, improvements {s['improvements']}, fewer admitted {s['fewer_admitted']}; "
                  f"mean gap {fmt(None if s['mean_gap'] is None else 100 * s['mean_gap'], '.3g')}%, worst "
                  f"{fmt(None if s['worst_gap'] is None else 100 * s['worst_gap'], '.3g')}%; shifted geometric mean "
                  f"{fmt(s['sgm_seconds'], '.3g')} s (shift {s['sgm_shift_s']:g} s); refused {s['refused']}, skipped "
                  f"{s['skipped']}, no plan {s['no_plan']}, check failed {s['check_failed']}"
                  + (f"; {result.other_problems} instances of other problems not run" if result.other_problems else ""),
                  highlight=False)
        if submit is not None and s["improvements"]:
            out.print(f"improvements written to {submit}: bench verify --submission {submit}", highlight=False)
    if s["check_failed"] or s["instance_differs"]:
        raise typer.Exit(EXIT_FAILED)


@bench.command("verify")
@handles_bad_input
def verify(
    set_: str = typer.Argument("all", metavar="[SET]", help=SET_HELP),
    submission: list[Path] = typer.Option([], "--submission", help=SUBMISSION_HELP),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_HELP),
    format_: str = typer.Option("table", "--format", help="table or json"),
) -> None:
    """Replay every record of SET: its instance's checksum, its stored plan under check --strict, its
    value, bounds and status. Exit status 1 when any record fails."""
    from dataclasses import asdict

    from schedopt.bench import verify as verify_bench

    check_format(format_)

    def progress(row: Any) -> None:
        if format_ == "table" and err.is_terminal:
            err.print(f"{row.id}: {'skipped' if row.ok is None else 'ok' if row.ok else 'FAILED'}", highlight=False)

    rows = verify_bench(set_, data_dir=data_dir, submissions=list(submission), progress=progress)
    failed = [r for r in rows if r.ok is False]
    skipped = [r for r in rows if r.ok is None]
    if format_ == "json":
        print_json({"verified": len(rows) - len(failed) - len(skipped), "failed": len(failed), "skipped": len(skipped),
                    "records": [asdict(r) for r in rows]})
    else:
        for r in failed:
            out.print(f"FAILED {r.id}: {r.reason}", highlight=False, markup=False)
        if skipped:
            out.print(f"skipped {len(skipped)} records: {skipped[0].reason}", highlight=False, markup=False)
        out.print(f"{len(rows) - len(failed) - len(skipped)} of {len(rows)} records verified, {len(failed)} failed, "
                  f"{len(skipped)} skipped ({sum(r.status == 'optimal' and r.ok is True for r in rows)} proven optimal)",
                  highlight=False)
    if failed:
        raise typer.Exit(EXIT_FAILED)


@bench.command("report")
@handles_bad_input
def report(
    runs: list[Path] = typer.Argument(..., help="bench run --out files (the newest per solver, set and options is used)"),
    out_path: Path = typer.Option(Path("-"), "--out", help="the page to write (Markdown); - for standard output"),
) -> None:
    """Render the leaderboard page from stored runs, with their date, versions and machine."""
    from schedopt.bench import report as render_report

    if str(out_path) != "-" and not out_path.parent.is_dir():
        raise InputError(str(out_path), f"directory {str(out_path.parent)!r} does not exist")
    from schedopt.bench.report import LEADERBOARD_COMMAND

    page = Path("docs") / "leaderboard.md"
    text = render_report(list(runs), command=LEADERBOARD_COMMAND if str(out_path) == str(page) else None)
    if str(out_path) == "-":
        typer.echo(text)
    else:
        out_path.write_text(text + "\n", encoding="utf-8")
        out.print(f"wrote {out_path} ({len(runs)} run files)", highlight=False)
