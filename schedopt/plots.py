"""Figures (matplotlib, optional: ``pip install 'schedopt[plot]'``): data and
fitted curves in the shapes of Optimus Fig. 7 (loss vs. steps) and Fig. 9
(speed vs. workers for several parameter-server counts)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from schedopt.convergence import LossCurve
from schedopt.errors import InputError
from schedopt.speed import steps_per_s

PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def check_plot_path(path: str | os.PathLike[str]) -> None:
    """Fail before any work on a plot path that cannot be written."""
    p = Path(path)
    if p.suffix.lower() not in PLOT_SUFFIXES:
        raise InputError(str(path), f"unknown figure type; expected one of {', '.join(PLOT_SUFFIXES)}")
    if not p.parent.is_dir():
        raise InputError(str(path), f"directory {str(p.parent)!r} does not exist")


def pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot", "matplotlib is not installed; install schedopt[plot]") from None
    return plt


def plot_speed(samples: np.ndarray, speed: Any, path: str | os.PathLike[str], title: str) -> None:
    """Measured speeds (points) and the fitted form (lines): one series per PS
    count for two-role samples (p, w, speed), one for one-role (n, speed)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    if samples.shape[1] == 2:
        n = samples[:, 0]
        grid = np.arange(1, int(n.max()) + 1)
        ax.plot(n, samples[:, 1], "o", label="measured")
        ax.plot(grid, steps_per_s(speed, grid, 1), "-", label="fitted")
        ax.set_xlabel("tasks n")
    else:
        for p in np.unique(samples[:, 0]):
            rows = samples[samples[:, 0] == p]
            grid = np.arange(1, int(samples[:, 1].max()) + 1)
            line = ax.plot(grid, steps_per_s(speed, np.full(len(grid), p), grid), "-", label=f"p = {int(p)} (fitted)")
            ax.plot(rows[:, 1], rows[:, 2], "o", color=line[0].get_color())
        ax.set_xlabel("workers w")
    ax.set_ylabel("speed (steps/s)")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_loss(steps: np.ndarray, loss: np.ndarray, curve: LossCurve, path: str | os.PathLike[str], title: str,
              until_step: float | None = None) -> None:
    """Normalised losses (points) and the fitted curve, extended to ``until_step``
    (e.g. the predicted convergence step K(δ))."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    end = max(float(steps.max()), float(until_step or 0))
    grid = np.linspace(float(steps.min()), end, 400)
    ax.plot(steps, loss / loss.max(), ".", ms=3, label="observed (normalised)")
    ax.plot(grid, curve.loss(grid), "-", label=f"fitted ({curve.family})")
    if until_step is not None and np.isfinite(until_step):
        ax.axvline(until_step, ls="--", color="grey", label="predicted convergence")
    ax.set_xlabel("step k")
    ax.set_ylabel("training loss / largest loss")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_simulations(results: list[Any], directory: str | os.PathLike[str]) -> list[Path]:
    """The papers' simulation figures for one or more runs on the same workload
    (Optimus Fig. 11, 14; DL2 Fig. 6): ``jct_makespan.png`` (average JCT and
    makespan per scheduler, hours; with several seeds the mean and its 95 %
    interval), ``jct_cdf.png`` and ``utilization.png`` (share of the cluster's
    resources allocated over time, the first seed). Every figure names the
    workload and seeds, its axes start at 0 and carry units, and each line has
    its own marker and dash so none hides another. Returns the paths."""
    from schedopt.stats import ci95

    plt = pyplot()
    d = Path(directory)
    label_of = lambda r: r.scheduler + (f"+{r.placement}" if r.placement else "")  # noqa: E731
    labels = list(dict.fromkeys(label_of(r) for r in results))
    seeds = sorted({r.seed for r in results})
    where = f"{results[0].workload if results else ''}, seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"
    first = {lab: next(r for r in results if label_of(r) == lab) for lab in labels}  # the first seed's run
    markers = "osD^v<>pxh*"
    styles = ["-", "--", "-.", ":"]
    paths = []

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.8))
    for ax, key, title in ((axes[0], "avg_jct_s", "average JCT (h)"), (axes[1], "makespan_s", "makespan (h)")):
        stats = [ci95([(getattr(r, key) or 0.0) / 3600.0 for r in results if label_of(r) == lab]) for lab in labels]
        ax.bar(range(len(labels)), [m for m, _ in stats], yerr=[h for _, h in stats] if len(seeds) > 1 else None,
               capsize=4, color=[f"C{i}" for i in range(len(labels))])
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize="small")
        ax.set_ylim(bottom=0)
        ax.set_ylabel(title)
        ax.set_title(title + (" (mean, 95 % interval)" if len(seeds) > 1 else ""), fontsize="medium")
    fig.suptitle(where, fontsize="small")
    fig.tight_layout()
    paths.append(d / "jct_makespan.png")
    fig.savefig(paths[-1])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for k, lab in enumerate(labels):
        r = first[lab]
        jct = np.sort([(o.completion_s - o.arrival_s) / 3600.0 for o in r.jobs.values() if o.completion_s is not None])
        if len(jct):
            ax.step(jct, np.arange(1, len(jct) + 1) / len(r.jobs), where="post", label=lab,
                    linestyle=styles[k % len(styles)], marker=markers[k % len(markers)], markevery=max(1, len(jct) // 8))
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("job completion time (h)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(f"CDF of JCT ({results[0].workload if results else ''}, seed {seeds[0] if seeds else ''})", fontsize="medium")
    ax.legend(fontsize="small")
    fig.tight_layout()
    paths.append(d / "jct_cdf.png")
    fig.savefig(paths[-1])
    plt.close(fig)

    resources = list(results[0].timeline.get("utilization", {})) if results else []
    fig, axes = plt.subplots(len(resources) + 1, 1, figsize=(7, 2.2 * (len(resources) + 1)), sharex=True, squeeze=False)
    for k, lab in enumerate(labels):
        r = first[lab]
        t = np.array(r.timeline.get("time_s", [])) / 3600.0
        step = max(1, len(t) // 10)
        style = {"where": "post", "label": lab, "linestyle": styles[k % len(styles)], "marker": markers[k % len(markers)],
                 "markevery": ((k * max(1, step // max(1, len(labels)))) % step, step), "ms": 4}  # staggered: none hides another
        for i, res in enumerate(resources):
            axes[i, 0].step(t, r.timeline["utilization"][res], **style)
            axes[i, 0].set_ylabel(f"{res} allocated\n(share of total)")
            axes[i, 0].set_ylim(0, 1.05)
        axes[-1, 0].step(t, r.timeline.get("running_tasks", []), **style)
    axes[-1, 0].set_ylabel("running tasks")
    axes[-1, 0].set_ylim(bottom=0)
    axes[-1, 0].set_xlim(left=0)
    axes[-1, 0].set_xlabel("time (h)")
    axes[0, 0].legend(fontsize="small")
    axes[0, 0].set_title(f"allocation over time ({results[0].workload if results else ''}, seed {seeds[0] if seeds else ''})",
                         fontsize="medium")
    fig.tight_layout()
    paths.append(d / "utilization.png")
    fig.savefig(paths[-1])
    plt.close(fig)
    return paths


def plot_learning_curve(curve: list[Any], baselines: dict[str, float | None], path: str | os.PathLike[str]) -> None:
    """DL2's held-out learning curve: mean average JCT (h) against updates, with
    the baselines' mean average JCT on the same traces as horizontal lines."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([c.updates for c in curve], [c.heldout_jct_s / 3600 for c in curve], "o-", ms=3, label="dl2 (greedy policy)")
    kept = [c for c in curve if getattr(c, "kept", False)]
    if kept:
        ax.plot([kept[0].updates], [kept[0].heldout_jct_s / 3600], "*", ms=12, color="C3",
                label="weights kept (best on validation traces)")
    for (name, v), style in zip(baselines.items(), ("--", ":", "-.")):
        if v is not None:
            ax.axhline(v / 3600, ls=style, color="grey", label=name)
    ax.set_xlabel("RL updates (0 = after the supervised warm-up)")
    ax.set_ylabel("held-out mean average JCT (h)")
    ax.set_title("DL2 learning curve")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
