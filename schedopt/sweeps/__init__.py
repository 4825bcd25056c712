"""Sweeps: many simulations or solves from one spec, on Ray or in process,
resumable, with one tidy table (docs/sweeps.md).

    import schedopt
    table = schedopt.sweep("benchmarks/sweeps/optimus.yaml", out_dir="out/optimus", workers=2)
    table.rows[0]["avg_jct_s"], table.summary[0]

Ray is imported only when cells run on it (``workers`` other than 1).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedopt.stats import ci95
from schedopt.sweeps.cells import PARAM_COLUMNS, TIMING_COLUMNS, run_cell
from schedopt.sweeps.engine import CellCache, Progress, atomic_write, run_cells
from schedopt.sweeps.spec import SweepSpec, check_spec, expand, load_spec, spec_from_dict

RESULTS_SCHEMA = "schedopt/sweep-results@1"
#: metrics summarised across seeds, per kind
SUMMARY_METRICS = {"simulate": ("avg_jct_s", "makespan_s", "p90_jct_s", "restarts", "scheduler_seconds"),
                   "solve": ("objective", "gap", "admitted", "solve_seconds")}


@dataclass
class SweepTable:
    """The tidy result: one row per cell (every parameter and metric), and a
    summary per (workload, load, scheduler, time limit) across seeds."""

    name: str
    kind: str
    rows: list[dict[str, Any]]

    @property
    def columns(self) -> list[str]:
        seen: dict[str, None] = dict.fromkeys([*PARAM_COLUMNS, "ok", "error"])
        for row in self.rows:
            seen.update(dict.fromkeys(k for k in row if k not in TIMING_COLUMNS and k != "key"))
        seen.update(dict.fromkeys(k for k in TIMING_COLUMNS if any(k in r for r in self.rows)))
        return list(seen)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if not r.get("ok")]

    @property
    def summary(self) -> list[dict[str, Any]]:
        groups: dict[tuple, list[dict[str, Any]]] = {}
        for r in self.rows:
            if r.get("ok"):
                groups.setdefault((r["workload"], r["load"], r["scheduler"], r["time_limit"]), []).append(r)
        out = []
        for (workload, load, scheduler, limit), rs in groups.items():
            entry: dict[str, Any] = {"workload": workload, "load": load, "scheduler": scheduler, "time_limit": limit,
                                     "seeds": len(rs)}
            for m in SUMMARY_METRICS[self.kind]:
                vals = [float(r[m]) for r in rs if r.get(m) is not None and math.isfinite(float(r[m]))]
                mean, half = ci95(vals) if vals else (None, None)
                entry[f"{m}_mean"], entry[f"{m}_ci95"] = mean, half
            out.append(entry)
        return out

    def csv(self, rows: list[dict[str, Any]] | None = None, columns: list[str] | None = None) -> str:
        rows = self.rows if rows is None else rows
        columns = columns or self.columns
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})
        return buf.getvalue()

    def write(self, out_dir: str | os.PathLike[str], *, figures: bool = True) -> list[Path]:
        """results.csv, results.json, summary.csv, summary.json and (with
        matplotlib) the figures, each written atomically. Returns the paths."""
        d = Path(out_dir)
        d.mkdir(parents=True, exist_ok=True)
        summary = self.summary
        files = {
            "results.csv": self.csv(),
            "results.json": json.dumps({"schema": RESULTS_SCHEMA, "name": self.name, "kind": self.kind,
                                        "columns": self.columns, "rows": self.rows}, indent=1, default=str),
            "summary.csv": self.csv(summary, list(summary[0]) if summary else ["workload"]),
            "summary.json": json.dumps({"name": self.name, "kind": self.kind, "summary": summary}, indent=1, default=str),
        }
        paths = []
        for name, text in files.items():
            atomic_write(d / name, text)
            paths.append(d / name)
        if figures and summary:
            paths += plot_sweep(self, d)
        return paths


def plot_sweep(table: SweepTable, out_dir: Path) -> list[Path]:
    """Simulations: JCT and makespan vs load with 95 % error bars, one line per
    scheduler, one panel row per workload (``jct_makespan_vs_load.png``).
    Solves: certified gap vs contention per solver (``gap_vs_contention.png``).
    Without matplotlib: no figures."""
    try:
        from schedopt.plots import pyplot

        plt = pyplot()
    except Exception:
        return []
    if table.kind == "simulate":
        summary = table.summary
        workloads = sorted({s["workload"] for s in summary})
        fig, axes = plt.subplots(len(workloads), 2, figsize=(9, 3.2 * len(workloads)), squeeze=False)
        for i, w in enumerate(workloads):
            for j, (metric, title) in enumerate((("avg_jct_s", "average JCT (h)"), ("makespan_s", "makespan (h)"))):
                ax = axes[i][j]
                for sched in sorted({s["scheduler"] for s in summary if s["workload"] == w}):
                    pts = sorted((s["load"], s[f"{metric}_mean"], s[f"{metric}_ci95"]) for s in summary
                                 if s["workload"] == w and s["scheduler"] == sched and s[f"{metric}_mean"] is not None)
                    if pts:
                        ax.errorbar([p[0] for p in pts], [p[1] / 3600 for p in pts], yerr=[p[2] / 3600 for p in pts],
                                    marker="o", capsize=3, label=sched)
                ax.set_xlabel("load factor")
                ax.set_title(f"{w}: {title}", fontsize=9)
                ax.legend(fontsize=7)
        path = out_dir / "jct_makespan_vs_load.png"
    else:
        fig, ax = plt.subplots(figsize=(6, 4))
        for sched in sorted({r["scheduler"] for r in table.rows if r.get("ok")}):
            pts = [(r["contention"], r["gap"]) for r in table.rows
                   if r.get("ok") and r["scheduler"] == sched and r.get("gap") is not None]
            if pts:
                ax.scatter([p[0] for p in pts], [100 * p[1] for p in pts], label=sched, s=14)
        ax.set_xlabel("contention (Σ minimum demand / capacity, scarcest resource)")
        ax.set_ylabel("certified gap (%)")
        ax.legend(fontsize=7)
        path = out_dir / "gap_vs_contention.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def sweep(spec: str | os.PathLike[str] | SweepSpec | dict[str, Any], out_dir: str | os.PathLike[str] | None = None, *,
          workers: int | None = None, address: str | None = None, progress: Progress | None = None,
          base_dir: str | os.PathLike[str] | None = None, figures: bool = True) -> SweepTable:
    """Run a sweep and return its table. ``spec``: a spec file, a dict or a
    :class:`SweepSpec` (relative files from ``base_dir``, default the spec's
    folder or the working directory). ``out_dir``: cache and results (a rerun
    computes only the missing cells); None keeps nothing on disk.
    ``workers=1``: in this process, no Ray; otherwise Ray tasks on a local Ray
    with ``workers`` CPUs (default all) or on the cluster at ``address``
    ("auto", "ray://host:port")."""
    if isinstance(spec, (str, os.PathLike)):
        parsed, base = load_spec(spec)
    else:
        parsed = spec if isinstance(spec, SweepSpec) else spec_from_dict(spec)
        base = Path(base_dir or ".").resolve()
        check_spec(parsed, base)
    if base_dir is not None:
        base = Path(base_dir).resolve()
    cells = expand(parsed, base)
    cache = CellCache(None if out_dir is None else Path(out_dir))
    try:
        rows = run_cells(cells, cache, workers=workers, address=address, progress=progress)
    except BaseException:  # Ctrl-C included: the table of the cells finished so far, then stop
        if out_dir is not None:
            done = [r for c in cells if (r := cache.get(c["key"])) is not None]
            SweepTable(parsed.name, parsed.kind, done).write(out_dir, figures=False)
        raise
    table = SweepTable(parsed.name, parsed.kind, [rows[c["key"]] for c in cells if c["key"] in rows])
    if out_dir is not None:
        table.write(out_dir, figures=figures)
    return table


__all__ = ["SweepSpec", "SweepTable", "ci95", "expand", "load_spec", "run_cell", "sweep"]
