"""``learn``: train DL2 (warm-up from a teacher, then actor-critic RL)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from schedopt.cli.common import app, err, fmt, handles_bad_input, out
from schedopt.errors import InputError
from schedopt.instance import load_instance


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
    out.print(f"held-out average JCT: {teacher} {fmt(base)} s, dl2 after warm-up {fmt(warm_jct)} s, "
              f"after {episodes} RL episodes {fmt(curve_eval[-1][1])} s")
    out.print(f"policy written to {out_path}")
    if plot is not None:
        from schedopt.plots import pyplot

        plt = pyplot()
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
