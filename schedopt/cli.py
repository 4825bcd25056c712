"""The ``schedopt`` command. Exit status: 0 success, 1 infeasible or a failed
check, 2 bad input (a message naming the file and field; nothing written)."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer
import yaml
from rich.console import Console
from rich.table import Table

from schedopt.api import compare as compare_solvers
from schedopt.api import solve as solve_instance
from schedopt.errors import InputError
from schedopt.instance import load_instance, save_instance
from schedopt.io import read_csv_numbers
from schedopt.plan import Plan, check as check_plan, load_plan, save_plan
from schedopt.registry import solvers as list_solvers

def _console(stderr: bool = False) -> Console:
    # Piped output gets a wide table rather than rich's 80-column default.
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(stderr=stderr, width=width)


def handles_bad_input(fn: Callable[..., None]) -> Callable[..., None]:
    """Bad input: one message naming the file and field, exit status 2, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except InputError as exc:
            err.print("error: " + exc.render(), highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None

    return wrapper


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True,
                  help="Deep-learning cluster scheduling: exact models and published heuristics.")
out = _console()
err = _console(stderr=True)

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _fmt(x: Any, spec: str = ".6g") -> str:
    return "-" if x is None else format(x, spec)


def _parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError("--option", f'expected KEY=VALUE, got "{pair}"')
        options[key.strip()] = yaml.safe_load(value)
    return options


def _check_out_path(path: Optional[Path]) -> None:
    if path is not None and path.suffix.lower() not in (".json", ".yaml", ".yml"):
        raise InputError(str(path), "unknown file type; expected .json, .yaml or .yml")
    if path is not None and not path.parent.is_dir():
        raise InputError(str(path), f"directory {str(path.parent)!r} does not exist")


def _summary(plan: Plan) -> None:
    o = plan.objective
    out.print(f"[bold]{plan.solver}[/bold] on {plan.instance}: status [bold]{plan.status.value}[/bold] "
              f"(stopped: {plan.termination.value}), admitted {o.admitted}, paused {len(plan.paused)}")
    out.print(f"  {o.name} = {_fmt(o.value)}  bound = {_fmt(o.bound)}  gap = "
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
    _check_out_path(out_path)
    instance = load_instance(file)
    plan = solve_instance(instance, solver, time_limit=time_limit, seed=seed, **_parse_options(option))
    violations = check_plan(instance, plan)
    _summary(plan)
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
        table.add_row(rec["solver"], rec["status"], _fmt(rec["admitted"], "d"), _fmt(rec["objective"]),
                      _fmt(rec["bound"]), "-" if rec["gap"] is None else f"{100 * rec['gap']:.4f}",
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
              f"({plan.objective.name} = {_fmt(plan.objective.value)})")


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


@app.command()
@handles_bad_input
def generate(
    family: str = typer.Argument(..., help="instance family (e.g. optimus)"),
    jobs: int = typer.Option(..., "--jobs", min=0),
    servers: int = typer.Option(..., "--servers", min=1),
    seed: int = typer.Option(0, "--seed"),
    out_path: Path = typer.Option(..., "--out", help="instance file to write (.yaml/.json)"),
    max_tasks: int = typer.Option(32, "--max-tasks", min=1, help="max PS and max workers per job"),
    name: Optional[str] = typer.Option(None, "--name", help="instance name (default: from family and sizes)"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="shared data folder (alibaba-dorm; default ../shared/data)"),
) -> None:
    """Generate an instance of FAMILY, deterministic in --seed."""
    from schedopt.generate import generate_instance

    _check_out_path(out_path)
    instance = generate_instance(family, jobs=jobs, servers=servers, seed=seed, max_tasks=max_tasks, name=name,
                                 data_dir=data_dir)
    save_instance(instance, out_path)
    out.print(f"wrote {out_path}: {len(instance.jobs)} jobs, {len(instance.server_names)} servers")


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


@app.command()
@handles_bad_input
def simulate(
    workload: Path = typer.Argument(..., help="workload file: an instance whose jobs carry arrival and remaining_steps"),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="allocation solver (e.g. optimus-greedy, drf, tetris)"),
    compare_: Optional[str] = typer.Option(None, "--compare", help="comma-separated schedulers, same workload and seed"),
    placement: Optional[str] = typer.Option(None, "--placement", help="placement solver run after each allocation"),
    interval: float = typer.Option(600.0, "--interval", help="scheduling interval, seconds"),
    restart_overhead: float = typer.Option(60.0, "--restart-overhead", help="seconds lost when a job's configuration changes"),
    seed: int = typer.Option(0, "--seed"),
    error_steps: float = typer.Option(0.0, "--error-steps", help="estimation error of remaining steps in [0, 1) (Fig. 15)"),
    error_speed: float = typer.Option(0.0, "--error-speed", help="estimation error of speeds in [0, 1) (Fig. 15)"),
    horizon: Optional[float] = typer.Option(None, "--horizon", help="stop after this many seconds"),
    out_path: Optional[Path] = typer.Option(None, "--out", help="write the result (.yaml/.json); with --compare, one file per scheduler (NAME-SCHEDULER.yaml)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="directory for the figures (JCT/makespan bars, JCT CDF, utilization)"),
) -> None:
    """Simulate WORKLOAD online under one or several schedulers; print JCT, makespan and utilization."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from schedopt.sim import save_result
    from schedopt.sim import simulate as run

    names = [s.strip() for s in compare_.split(",") if s.strip()] if compare_ else ([scheduler] if scheduler else [])
    if not names:
        raise InputError("--scheduler", "give a scheduler (--scheduler NAME) or several (--compare a,b,c)")
    _check_out_path(out_path)
    if plot is not None and not plot.is_dir():
        raise InputError(str(plot), "--plot needs an existing directory")
    if plot is not None:
        from schedopt.plots import _pyplot

        _pyplot()  # fail before simulating when matplotlib is missing
    wl = load_instance(workload)
    for name in names:  # fail fast on an unknown name
        from schedopt.registry import solver_info

        solver_info(name if placement is None else f"{name}+{placement}")
    results = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} jobs done"),
                  TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal) as bar:
        for name in names:
            task = bar.add_task(name, total=len(wl.jobs))
            results.append(run(wl, name, placement=placement, interval_s=interval, restart_overhead_s=restart_overhead,
                               seed=seed, error_steps=error_steps, error_speed=error_speed, horizon_s=horizon,
                               progress=lambda t, done, n, task=task: bar.update(task, completed=done)))
    table = Table(title=f"{wl.name}: {len(wl.jobs)} jobs, {len(wl.server_names)} servers, interval {interval:g} s")
    for col in ("scheduler", "avg JCT (h)", "p90 JCT (h)", "makespan (h)", "finished", "overhead %", "scheduler s"):
        table.add_column(col, justify="left" if col == "scheduler" else "right")
    for r in results:
        h = lambda x: "-" if x is None else f"{x / 3600:.3f}"  # noqa: E731
        table.add_row(r.scheduler + (f"+{r.placement}" if r.placement else ""), h(r.avg_jct_s),
                      h(r.jct_percentiles_s.get("p90")), h(r.makespan_s), f"{r.finished}/{len(r.jobs)}",
                      f"{100 * r.scaling_overhead_share:.2f}", f"{r.scheduler_seconds:.2f}")
    out.print(table)
    if out_path is not None:
        for r in results:
            path = out_path if len(results) == 1 else out_path.with_name(f"{out_path.stem}-{r.scheduler}{out_path.suffix}")
            save_result(r, path)
            out.print(f"result written to {path}")
    if plot is not None:
        from schedopt.plots import plot_simulations

        for p in plot_simulations(results, plot):
            out.print(f"figure written to {p}")


@app.command()
@handles_bad_input
def learn(
    train: Path = typer.Argument(..., help="training workload (instance file with arrivals and remaining_steps)"),
    evaluate_on: Path = typer.Option(..., "--eval", help="held-out workload to evaluate on (e.g. another seed)"),
    out_path: Path = typer.Option(..., "--out", help="write the trained policy here (.npz)"),
    teacher: str = typer.Option("drf", "--teacher", help="scheduler whose decisions warm the policy up (drf, fifo, srtf, ...)"),
    warmup_epochs: int = typer.Option(200, "--warmup-epochs", help="supervised passes over the teacher's samples"),
    episodes: int = typer.Option(10, "--episodes", help="RL episodes (each a simulated run of TRAIN with a new exploration seed)"),
    jobs: int = typer.Option(20, "--max-jobs", help="J: jobs in the state"),
    hidden: int = typer.Option(256, "--hidden", help="units per hidden layer"),
    seed: int = typer.Option(0, "--seed"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="learning curve figure (.png/.pdf/.svg)"),
) -> None:
    """Train DL2: warm up from TEACHER on TRAIN, then actor-critic RL; evaluate on --eval against the teacher."""
    from rich.progress import Progress

    from schedopt.learn.dl2 import Policy
    from schedopt.learn.train import evaluate, record_teacher, rl_train, warmup
    from schedopt.sim import simulate as run

    if out_path.suffix.lower() != ".npz" or not out_path.parent.is_dir():
        raise InputError(str(out_path), "expected a .npz path in an existing directory")
    if plot is not None:
        from schedopt.plots import check_plot_path

        check_plot_path(plot)
    if warmup_epochs < 0 or episodes < 0 or jobs < 1 or hidden < 1:
        raise InputError("learn", "--warmup-epochs and --episodes must be >= 0, --max-jobs and --hidden >= 1")
    wl, held = load_instance(train), load_instance(evaluate_on)
    from schedopt.registry import solver_info

    solver_info(teacher)
    pol = Policy.create(J=jobs, hidden=hidden, seed=seed)
    samples = record_teacher(wl, pol, teacher, seed=seed)
    curve_eval = []
    with Progress(console=err, transient=True, disable=not err.is_terminal) as bar:
        t1 = bar.add_task("warm-up", total=warmup_epochs)
        acc = warmup(pol, samples, epochs=warmup_epochs, seed=seed, progress=lambda e, a: bar.update(t1, completed=e))
        warm_jct = evaluate(pol, held, seed=seed).avg_jct_s
        curve_eval.append((0, warm_jct))
        t2 = bar.add_task("RL", total=episodes)
        episodes_wl = [wl.model_copy(update={"name": f"{wl.name}-ep{k}"}) for k in range(episodes)]

        def step(ep: int, rec: dict) -> None:
            bar.update(t2, completed=ep)
            curve_eval.append((ep, evaluate(pol, held, seed=seed).avg_jct_s))

        rl_train(pol, episodes_wl, seed=seed, progress=step)
    pol.save(out_path)
    base = run(held, teacher, seed=seed).avg_jct_s
    out.print(f"warm-up: {len(samples)} samples from {teacher}, accuracy {acc:.1%}")
    out.print(f"held-out average JCT: {teacher} {_fmt(base)} s, dl2 after warm-up {_fmt(warm_jct)} s, "
              f"after {episodes} RL episodes {_fmt(curve_eval[-1][1])} s")
    out.print(f"policy written to {out_path}")
    if plot is not None:
        from schedopt.plots import _pyplot

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot([e for e, _ in curve_eval], [v / 3600 for _, v in curve_eval], "o-", label="dl2 (held-out)")
        ax.axhline(base / 3600, ls="--", color="grey", label=f"{teacher} (held-out)")
        ax.set_xlabel("RL episodes (0 = after supervised warm-up)")
        ax.set_ylabel("average JCT (h)")
        ax.set_title("DL2 learning curve")
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(plot)
        plt.close(fig)
        out.print(f"figure written to {plot}")


def main() -> None:
    app(prog_name="schedopt")


if __name__ == "__main__":
    main()
