"""``bench report``: a leaderboard page from stored ``bench run`` results.

Solvers are ranked per problem by how many instances they bring to the best
known value (within 1e-4, or better), then by the shifted geometric mean of
their times. Each run file keeps its date, versions and machine; the page says them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schedopt.bench.runner import RUN_SCHEMA

#: how docs/leaderboard.md is made (benchmarks/leaderboard.py runs the solvers first)
LEADERBOARD_COMMAND = "schedopt bench report benchmarks/results/leaderboard/*.json --out docs/leaderboard.md"
from schedopt.errors import InputError


def read_run(path: Path) -> dict[str, Any]:
    """A ``bench run --out FILE`` result; InputError naming the file and field."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(str(path), f"cannot read a bench run: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != RUN_SCHEMA:
        raise InputError(str(path), f'schema: expected "{RUN_SCHEMA}" (a bench run --out file)')
    for key in ("solver", "problem", "summary", "environment", "instances", "set", "collection"):
        if key not in data:
            raise InputError(str(path), f"{key}: missing")
    return data


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.2f}%"


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def render(runs: list[dict[str, Any]], *, kinds: dict[str, str] | None = None, command: str | None = None) -> str:
    """The leaderboard page (Markdown) for ``runs``; ``kinds``: solver -> exact/heuristic."""
    kinds = kinds or {}
    lines = ["# Leaderboard", ""]
    if not runs:
        return "\n".join(lines + ["No stored runs.", ""])
    colls = sorted({r["collection"] for r in runs})
    sets = sorted({r["set"] for r in runs})
    limits = sorted({str(r["time_limit"]) for r in runs})
    env = runs[0]["environment"]
    dates = sorted(r["environment"].get("date", "") for r in runs)
    versions = ", ".join(f"{k} {v}" for k, v in env.get("versions", {}).items() if v)
    lines += [f"Collection {', '.join(colls)}, set `{', '.join(sets)}`; time limit {', '.join(limits)} s per instance, seed "
              f"{runs[0].get('seed')}; each solver with its default options unless listed.",
              f"Run {dates[0][:10]} to {dates[-1][:10]} on {env.get('cores')} cores ({env.get('system')} {env.get('machine')}), "
              f"Python {env.get('python')}, {versions}.", ""]
    if command:
        lines += [f"Made by `{command}` from the run files in `benchmarks/results/leaderboard/`.", ""]
    lines += ["A row of your own (a solver on two of the benchmark instances, then its page):", "", "```sh",
              "schedopt bench run optimus-8j-3s-t3-s1,optimus-50j-12s-s1 --solver optimus-greedy --time-limit 10 "
              "--out run.json",
              "schedopt bench report run.json --out my-leaderboard.md", "```", ""]
    lines += ["Columns: **at best** = plans within 1e-4 of the record's best known value (or better); **proven** = plans "
              "whose \"optimal\" `check --strict` replays; **mean gap** / **worst gap** = |value - best known| / |value| over "
              "plans admitting as many jobs as the record; **fewer** = plans admitting fewer jobs than the record (gap "
              "infinite); **SGM s** = shifted geometric mean of wall seconds (shift 1 s) over the instances run; "
              "**refused** = instances stating what the solver does not model (quotas, types, ...); **failed** = plans "
              "`check` rejects or no plan.", ""]
    for problem in sorted({r["problem"] for r in runs}):
        mine = [r for r in runs if r["problem"] == problem]
        mine.sort(key=lambda r: (-r["summary"]["at_best"], r["summary"]["sgm_seconds"] or 0.0, r["solver"]))
        n = max(r["summary"]["records"] for r in mine)
        lines += [f"## {problem} ({n} instances)", "",
                  "| rank | solver | kind | ran | at best | proven | mean gap | worst gap | fewer | SGM s | refused | skipped | failed |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for rank, r in enumerate(mine, 1):
            s = r["summary"]
            opts = f" ({', '.join(f'{k}={v}' for k, v in r['options'].items())})" if r.get("options") else ""
            lines.append(f"| {rank} | `{r['solver']}`{opts} | {kinds.get(r['solver'], '')} | {s['ran']} | {s['at_best']} | "
                         f"{s['proven_optimal']} | {_pct(s['mean_gap'])} | {_pct(s['worst_gap'])} | {s['fewer_admitted']} | "
                         f"{_num(s['sgm_seconds'])} | {s['refused']} | {s['skipped']} | {s['check_failed'] + s['no_plan']} |")
        lines.append("")
    return "\n".join(lines)


def report(paths: list[Path], *, command: str | None = None) -> str:
    """The leaderboard page for the run files ``paths`` (the newest run per solver and set)."""
    from schedopt.registry import solver_info

    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for path in paths:
        data = read_run(path)
        key = (data["solver"], data["set"], json.dumps(data.get("options") or {}, sort_keys=True))
        if key not in latest or data["environment"].get("date", "") >= latest[key]["environment"].get("date", ""):
            latest[key] = data
    runs = list(latest.values())
    kinds = {}
    for r in runs:
        try:
            kinds[r["solver"]] = "exact" if solver_info(r["solver"]).exact else "heuristic"
        except InputError:  # a plugin solver not installed here: its run file still ranks it
            kinds[r["solver"]] = ""
    return render(runs, kinds=kinds, command=command)
