"""``learn``: train DL2 (warm-up from a teacher, then actor-critic RL with parallel actors)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, List, Optional

import typer

from schedopt.cli.common import app, err, handles_bad_input, out
from schedopt.errors import InputError

#: held-out traces of a generated workload use seeds from here on (training uses 0, 1, 2, ...)
HELDOUT_SEED = 10_000
#: validation traces (checkpoint selection) use seeds from here on
VALIDATION_SEED = 20_000


@app.command()
@handles_bad_input
def learn(
    train: Optional[List[Path]] = typer.Argument(None, help="training workloads (instance files with arrivals and remaining_steps), cycled; or give --workload"),
    workload: Optional[str] = typer.Option(None, "--workload", help="generate training traces of this family (dl2, optimus-workload, ...): trace k has seed k"),
    jobs: int = typer.Option(30, "--jobs", help="jobs per generated trace"),
    servers: int = typer.Option(13, "--servers", help="servers per generated trace"),
    max_tasks: int = typer.Option(16, "--max-tasks", help="role maximum of generated jobs"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="shared data folder for families that read it; default $SCHEDOPT_DATA_DIR, else ../shared/data"),
    evaluate_on: Optional[List[Path]] = typer.Option(None, "--eval", help="held-out workload files (repeat); default with --workload: --heldout traces"),
    heldout: int = typer.Option(10, "--heldout", help=f"held-out generated traces (seeds {HELDOUT_SEED}, {HELDOUT_SEED + 1}, ...)"),
    validation: int = typer.Option(0, "--validation", help=f"validation traces (seeds {VALIDATION_SEED}, ...): keep the weights best on them; 0 keeps the last"),
    out_path: Path = typer.Option(..., "--out", help="write the trained policy here (.npz)"),
    teacher: str = typer.Option("drf", "--teacher", help="scheduler whose decisions warm the policy up (drf, fifo, srtf, ...)"),
    warmup_traces: int = typer.Option(5, "--warmup-traces", help="training traces the teacher runs for the warm-up"),
    warmup_epochs: int = typer.Option(30, "--warmup-epochs", help="supervised passes over the teacher's samples"),
    rounds: int = typer.Option(100, "--rounds", help="RL rounds (each: --actors episodes, then one pass of updates)"),
    actors: int = typer.Option(2, "--actors", help="parallel actors (Ray tasks; 1 runs in this process unless --address)"),
    address: Optional[str] = typer.Option(None, "--address", help="an existing Ray cluster (default: a new local one)"),
    minutes: Optional[float] = typer.Option(None, "--minutes", help="stop RL after the round that passes this wall time"),
    reward: str = typer.Option("progress", "--reward", help="per-slot reward: progress (DL2: Σ steps trained / total steps) or jct (-jobs in system / J)"),
    lr: float = typer.Option(1e-3, "--lr", help="RL learning rate (Adam)"),
    gamma: float = typer.Option(0.9, "--gamma", help="discount per slot"),
    entropy: float = typer.Option(0.01, "--entropy", help="entropy regularisation β"),
    epsilon: float = typer.Option(0.1, "--epsilon", help="job-aware exploration ε"),
    eval_every: int = typer.Option(10, "--eval-every", help="rounds between held-out evaluations (learning-curve points)"),
    state_jobs: int = typer.Option(32, "--max-jobs", help="J: jobs in the state"),
    hidden: int = typer.Option(64, "--hidden", help="units per hidden layer"),
    features: str = typer.Option("gain", "--features", help="state: type (DL2's: job type, counts, remaining work) or gain (also each move's eq.-9 gain from the instance's speed model)"),
    seed: int = typer.Option(0, "--seed"),
    interference: bool = typer.Option(False, "--interference/--no-interference", help="train and evaluate where jobs' true speeds vary with the cluster's load and over time (DL2 §2.2; schedopt/sim/truth.py)"),
    estimation: str = typer.Option("truth", "--estimation", help="what the schedulers see in training and evaluation: truth, or online (Optimus' fits; measured tables fitted by eq. 4)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="learning curve figure (.png/.pdf/.svg): held-out JCT vs updates"),
    curve_path: Optional[Path] = typer.Option(None, "--curve", help="learning curve as CSV"),
) -> None:
    """Train DL2: warm up from TEACHER, then actor-critic RL over many training traces;
    report the held-out learning curve against the teacher and optimus-greedy."""
    import numpy as np
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from schedopt.generate import generate_instance
    from schedopt.instance import Instance, load_instance
    from schedopt.learn.dl2 import DEFAULT_TYPES, FEATURES, Policy
    from schedopt.learn.train import REWARDS, InProcessActors, RayActors, RLConfig, record_teacher, rl_train, warmup
    from schedopt.registry import solver_info
    from schedopt.sim import simulate

    if out_path.suffix.lower() != ".npz" or not out_path.parent.is_dir():
        raise InputError(str(out_path), "expected a .npz path in an existing directory")
    if plot is not None:
        from schedopt.plots import check_plot_path

        check_plot_path(plot)
    if curve_path is not None and not curve_path.parent.is_dir():
        raise InputError(str(curve_path), "the folder does not exist")
    if min(warmup_epochs, rounds, warmup_traces) < 0 or min(actors, state_jobs, hidden, eval_every) < 1 or min(heldout, validation) < 0:
        raise InputError("learn", "--warmup-epochs, --warmup-traces and --rounds must be >= 0; --actors, --max-jobs, "
                                  "--hidden, --eval-every >= 1; --heldout, --validation >= 0")
    if features not in FEATURES:
        raise InputError("--features", f'unknown state "{features}"; known: {", ".join(FEATURES)}')
    if reward not in REWARDS:
        raise InputError("--reward", f'unknown reward "{reward}"; known: {", ".join(REWARDS)}')
    if not (lr > 0 and 0 <= gamma <= 1 and entropy >= 0 and 0 <= epsilon <= 1):
        raise InputError("learn", "expected --lr > 0, 0 <= --gamma <= 1, --entropy >= 0, 0 <= --epsilon <= 1")
    if minutes is not None and not minutes > 0:
        raise InputError("--minutes", f"must be > 0, got {minutes}")
    if bool(train) == bool(workload):
        raise InputError("learn", "give training workload files or --workload FAMILY (not both)")
    solver_info(teacher)
    from schedopt.sim.estimation import ESTIMATION_MODES
    from schedopt.sim.truth import Interference

    if estimation not in ESTIMATION_MODES:
        raise InputError("--estimation", f"expected one of {', '.join(ESTIMATION_MODES)}, got {estimation!r}")
    sim_options: dict[str, Any] = {"estimation": estimation, **({"interference": Interference()} if interference else {})}

    def gen(s: int) -> Instance:
        assert workload is not None
        return generate_instance(workload, jobs=jobs, servers=servers, seed=s, max_tasks=max_tasks, data_dir=data_dir)

    if train:
        files = [load_instance(p) for p in train]
        get = (lambda k: files[k % len(files)])
    else:
        get = gen
    held = [load_instance(p) for p in evaluate_on] if evaluate_on else (
        [gen(HELDOUT_SEED + k) for k in range(heldout)] if workload else [])
    if validation and not workload:
        raise InputError("--validation", "validation traces are generated: give --workload")
    val = [gen(VALIDATION_SEED + k) for k in range(validation)]
    teach = [get(k) for k in range(warmup_traces)]
    types = sorted({job.model for wl in teach or [get(0)] for job in wl.jobs if job.model} | set(DEFAULT_TYPES))
    pol = Policy.create(J=state_jobs, types=tuple(types), hidden=hidden, seed=seed, features=features)
    cfg = RLConfig(lr=lr, gamma=gamma, entropy=entropy, epsilon=epsilon, reward=reward)
    base = {name: float(np.mean([simulate(w, name, seed=seed, **sim_options).avg_jct_s for w in held])) if held else None
            for name in dict.fromkeys([teacher, "drf", "optimus-greedy"])}
    runner: Any = RayActors(actors, address) if (actors > 1 or address) else InProcessActors()
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TextColumn("{task.fields[info]}"), TimeElapsedColumn(),
                      console=err, transient=True, disable=not err.is_terminal) as bar:
            samples = record_teacher(teach, pol, teacher, seed=seed, sim_options=sim_options)
            t1 = bar.add_task("warm-up", total=warmup_epochs, info="")
            acc = warmup(pol, samples, epochs=warmup_epochs, seed=seed,
                         progress=lambda e, a: bar.update(t1, completed=e, info=f"accuracy {a:.1%}"))
            t2 = bar.add_task("RL", total=rounds, info="")

            def step(r: int, rec: dict[str, Any]) -> None:
                h = rec.get("heldout_jct_s")
                bar.update(t2, completed=r, info=f"{rec['updates']} updates" + (f", held-out JCT {h / 3600:.3f} h" if h else ""))

            curve = rl_train(pol, get, rounds=rounds, actors=actors, config=cfg, seed=seed, heldout=held,
                             eval_every=eval_every, runner=runner, validation=val,
                             time_budget_s=minutes * 60 if minutes else None, progress=step, sim_options=sim_options)
    finally:
        runner.close()
    pol.save(out_path)
    out.print(f"warm-up: {len(samples)} samples from {teacher} on {warmup_traces} traces, accuracy {acc:.1%}")
    last = curve[-1]
    out.print(f"RL: {last.round} rounds × {actors} actors = {last.episodes} episodes, {last.updates} updates, "
              f"{last.seconds:.0f} s")
    kept = next((c for c in curve if c.kept), last)
    if val:
        out.print(f"kept the weights after {kept.updates} updates (round {kept.round}): best mean average JCT on "
                  f"{len(val)} validation traces, {kept.validation_jct_s / 3600:.3f} h")
    if held:
        parts = ", ".join(f"{name} {v / 3600:.3f} h" for name, v in base.items() if v is not None)
        out.print(f"held-out mean average JCT over {len(held)} traces: {parts}; dl2 after warm-up "
                  f"{curve[0].heldout_jct_s / 3600:.3f} h, after RL {kept.heldout_jct_s / 3600:.3f} h")
    out.print(f"policy written to {out_path}")
    if curve_path is not None:
        with curve_path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(last.as_dict()))
            w.writeheader()
            for c in curve:
                w.writerow(c.as_dict())
        out.print(f"learning curve written to {curve_path}")
    if plot is not None and held:
        from schedopt.plots import plot_learning_curve

        plot_learning_curve(curve, base, plot)
        out.print(f"figure written to {plot}")
