"""README's figures are its stored results (issue 54 §3): each figure the "What is implemented"
table states is recomputed here from the benchmark result that produced it
(`benchmarks/results/NAME.json`, rendered in docs/benchmarks.md), so a re-run that moves a
number fails this test until the README says the new one. (The benchmark library's figures
are checked against its records in tests/test_bench_records.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def result(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "benchmarks" / "results" / f"{name}.json").read_text())


def rows(name: str) -> list[dict[str, str]]:
    doc = result(name)
    return [dict(zip(doc["columns"], map(str, r))) for r in doc["rows"]]


def note_ratios(name: str, prefix: str) -> tuple[float, list[float]]:
    """(median, per-seed ratios) of the note starting with ``prefix``."""
    note = next(n for n in result(name)["notes"] if n.startswith(prefix))
    m = re.search(r"median ([\d.]+)×? \(seeds: ([\d., ]+)", note)
    assert m, note
    return float(m.group(1)), [float(x) for x in m.group(2).split(",")]


def span(values: list[float], fmt: str = "{:.1f}") -> str:
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def first(value: str) -> float:
    return float(value.split()[0].rstrip("%"))


def worst(value: str) -> float:
    return float(value.split("[")[1].rstrip("]%"))


def per_seed(value: str) -> list[float]:
    return [float(x) for x in value.split(" / ")]


# ---- each README figure from its result --------------------------------------------------------

def lagrange_gap() -> list[str]:
    r = rows("lagrange-gap")
    within = sum(int(x["within 0.01 %"].split("/")[0]) for x in r)
    total = sum(int(x["instances"]) for x in r)
    worst_gap = max(float(x["worst"].rstrip("%")) for x in r)
    fewer = [x for x in r if x["fewer admitted"] != "0"]
    out = [f"within 0.01 % of the proven optimum on {within} of {total} instances", f"worst {worst_gap:.4f} %"]
    out += [f"on one {int(x['jobs']):,}-job `{x['family']}` seed it admits one job fewer" for x in fewer
            if x["fewer admitted"] == "1"]
    return out


def exact_seeds() -> list[str]:
    r = rows("exact-seeds")
    seeds = [t for x in r for t in per_seed(x["per seed (s)"])]
    medians = [float(x["median s"]) for x in r if x["family"] != "`dl2`"]
    dl2 = [float(x["median s"]) for x in r if x["family"] == "`dl2`"]
    return [f"seeds 5-9, in {span(seeds)} s (medians {span(medians)} s, {span(dl2)} s on `dl2`)"]


def exact_growth() -> list[str]:
    r = rows("exact-growth")
    at = {j: [t for x in r if x["jobs"] == j for t in per_seed(x["per seed (s)"])] for j in ("8,000", "16,000")}
    assert all(x["proven optimal"] == "5/5" for x in r if x["jobs"] in at)
    return [f"at 8,000 jobs in {span(at['8,000'])} s and at 16,000 jobs in {span(at['16,000'])} s"]


def heterogeneous() -> list[str]:
    medians, seeds = zip(*(note_ratios("heterogeneous-sim", f"load {load}: blind ÷ type-aware") for load in ("1.0", "3.0", "6.0")))
    sim240 = "heterogeneous-sim-240"
    vs_sum = [note_ratios(sim240, f"load {load}: optimus-greedy, average-JCT objective ÷ optimus-greedy")[0]
              for load in ("3.0", "6.0")]
    vs_las = [note_ratios(sim240, f"load {load}: optimus-greedy, average-JCT objective ÷ gavel-las")[0]
              for load in ("3.0", "6.0")]
    proven = [float(x["seconds (wall)"]) for x in rows("typed-scale") if x["jobs"] == "16000"
              and x["solver"] == "optimus-milp" and x["status"] == "optimal"]
    tried = sum(x["jobs"] == "16000" and x["solver"] == "optimus-milp" for x in rows("typed-scale"))
    jct = [float(x["average-JCT ÷ Σ t (median per seed)"]) for x in rows("typed-latency-objectives")
           if x["jobs"] in ("144", "200", "400")]
    return [f"a call under it costs {span(jct)}× Σ t's at 144-400 typed jobs",
            f"the blind greedy's average JCT is {span(list(medians), '{:.2f}')}× the type-aware one's",
            f"single seeds {span([s for ss in seeds for s in ss], '{:.2f}')}×",
            f"{vs_sum[0]:.2f}× and {vs_sum[1]:.2f}× Σ t's average JCT and {span(vs_las, '{:.2f}')}× `gavel-las`'s",
            f"16,000 typed jobs are proven optimal in {span(proven, '{:.0f}')} s on {len(proven)} of {tried} seeds"]


def tenants() -> list[str]:
    saved = {load: note_ratios("tenants-sim", f"load {load}, with borrowing: optimus-milp ÷ kueue-admission")
             for load in ("1.0", "2.0", "4.0")}
    pct = {load: round(100 * (1 - m)) for load, (m, _) in saved.items()}
    least = {load: round(100 * (1 - max(s))) for load, (_, s) in saved.items()}
    snaps = [x for x in rows("tenants-snapshots") if x["instance"].startswith("optimus")]
    none = next(x for x in snaps if x["queues"] == "none")
    cohort = next(x for x in snaps if x["queues"] == "cohort borrowing")
    alone = next(x for x in snaps if x["queues"] == "no borrowing")
    return [f"median seed {pct['2.0']} % and {pct['4.0']} % at ×2 and ×4 the traced arrivals, {pct['1.0']} % at ×1 "
            f"(least favourable seed {least['2.0']} %, {least['4.0']} %, {least['1.0']} %)",
            f"`optimus-milp` takes {first(cohort['milp s']):.2f} s against {first(none['milp s']):.2f} s without",
            f"the exact solvers prove {alone['proven optimal'].split('/')[0]} of {alone['proven optimal'].split('/')[1]} "
            f"solves optimal in 30 s when each queue is held to its nominal quota"]


def placement() -> list[str]:
    r = rows("placement-exact")

    def cell(family: str, jobs: str, solver: str) -> dict[str, str]:
        return next(x for x in r if x["family"] == f"`{family}`" and x["jobs"] == jobs and x["solver"] == f"`{solver}`")

    small, mid = cell("placement-classes", "100", "placement-milp"), cell("placement-classes", "400", "placement-milp")
    big = cell("placement", "1000", "placement-milp")
    gaps = [first(x["gap median [worst]"]) for x in r if x["solver"] == "`optimus-placement`" and x["family"] == "`placement`"]
    lag = rows("placement-lagrange")
    lag_worst = max(worst(x["gap to the optimum median [worst]"]) for x in lag)
    assert all(x["placed the most"] == "5/5" for x in lag)
    sizes = sorted({int(x["jobs"]) for x in lag})
    return [f"100 jobs on 50 servers of three classes in {first(small['seconds median [worst]']):.1f} s (median; "
            f"worst {worst(small['seconds median [worst]']):.1f} s)",
            f"400 on 200 in {first(mid['seconds median [worst]']):.0f} s (worst {worst(mid['seconds median [worst]']):.0f} s",
            f"1,000 jobs on 500 distinct servers in {first(big['seconds median [worst]']):.1f} s (worst "
            f"{worst(big['seconds median [worst]']):.1f} s",
            f"`optimus-placement` is {min(gaps):.0f}-{max(gaps):.0f} % above the optimum there",
            f"`placement-lagrange` places the most jobs at {sizes[0]:,}-{sizes[-1]:,} jobs on every seed measured "
            f"and is within {lag_worst:.2f} % of the proven optimum"]


def dl2() -> list[str]:
    held = {x["seed"]: x for x in rows("dl2-heldout")}
    mean, spread = held["mean"], held["median [worst] per trace"]
    inter = {x["scheduler"]: x for x in rows("dl2-interference")}
    rl = next(x for k, x in inter.items() if k.startswith("dl2 (RL from a DRF"))
    shown = inter["optimus-greedy, shown the truth"]
    model_error = round(100 * (1 / first(shown["÷ online greedy, median [worst]"]) - 1))
    return [f"{mean['dl2 / drf']}× the faithful DRF's mean average JCT and {mean['dl2 / optimus-greedy']}× optimus-greedy's",
            f"per trace median {spread['dl2 / drf'].split()[0]}×, worst {worst(spread['dl2 / drf']):.3f}×; and "
            f"{spread['dl2 / optimus-greedy'].split()[0]}×, worst {worst(spread['dl2 / optimus-greedy']):.3f}×",
            f"reaches {first(rl['÷ drf, median [worst]']):.3f}× DRF and {first(rl['÷ online greedy, median [worst]']):.3f}× "
            f"Optimus", f"Optimus' model error is worth only {model_error} % there"]


FIGURES = {f.__name__: f for f in (lagrange_gap, exact_seeds, exact_growth, heterogeneous, tenants, placement, dl2)}


@pytest.mark.parametrize("name", FIGURES)
def test_readme_states_the_stored_figures(name: str) -> None:
    for phrase in FIGURES[name]():
        assert phrase in README, f"README should say (from benchmarks/results/): {phrase!r}"


def test_a_moved_figure_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check bites: a stored result that moves changes the phrase the README must hold."""
    real = rows

    def moved(name: str) -> list[dict[str, str]]:
        out = real(name)
        if name == "exact-growth":
            out = [{**x, "per seed (s)": x["per seed (s)"].replace("2.3", "9.9")} for x in out]
        return out

    monkeypatch.setitem(globals(), "rows", moved)
    assert not all(p in README for p in exact_growth())


def test_readme_input_limits_are_the_code_s() -> None:
    """README's input limits are the constants the readers enforce."""
    from schedopt import instance, io

    stated = {"MAX_FILE_BYTES": f"files up to {io.MAX_FILE_BYTES // 2**20} MiB",
              "MAX_DEPTH": f"nesting up to {io.MAX_DEPTH} levels", "MAX_VALUES": f"{io.MAX_VALUES:,} values",
              "MAX_QUANTITY": f"up to {instance.MAX_QUANTITY:.0e}".replace("e+", "e"),
              "MAX_STEPS": f"`remaining_steps` up to\n{instance.MAX_STEPS:.0e}".replace("e+", "e"),
              "MAX_TASKS": f"up to {instance.MAX_TASKS:,} tasks", "MAX_SERVERS": f"{instance.MAX_SERVERS:,} servers",
              "MAX_JOBS": f"{instance.MAX_JOBS:,} jobs\n(`MAX_JOBS`)"}
    for name, phrase in stated.items():
        assert phrase in README, (name, phrase)
