"""Docs tables from stored results (issue 38 §4).

A benchmark saves each table it measures as ``benchmarks/results/<name>.json``:
its columns, rows, the command that produced it, the seeds, the library versions
and the machine's core count. A docs page (docs/*.md; mostly docs/benchmarks.md) holds
the rendered table between ``<!-- table:<name> -->`` and ``<!-- /table:<name> -->``;
this script re-renders every marked table of every page from its results file:

    .venv/bin/python benchmarks/tables.py           # rewrite the docs pages' marked tables
    .venv/bin/python benchmarks/tables.py --check   # exit 1 naming each table that differs

``tests/test_docs_tables.py`` runs the check in the default suite, so a table
cannot drift from the run that produced it. Why not pytest-benchmark or asv:
both time small callables (and asv tracks them across commits); our tables are
outcomes of whole runs (simulated JCTs, gaps, proofs) whose rows are chosen by the
benchmark, so a plain JSON per table and a renderer are the fitting tool.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "benchmarks.md"
#: every page that may hold marked tables
PAGES = sorted((ROOT / "docs").glob("*.md"))
MARKER = re.compile(r"<!-- table:(?P<name>[\w.-]+) -->\n(?P<body>.*?)<!-- /table:(?P=name) -->", re.S)


def environment() -> dict[str, Any]:
    """Library versions and the machine's core count, stored with every result (the package's
    own record of a run's environment, :func:`schedopt.bench.runner.environment`, cut to what
    the tables show)."""
    from schedopt.bench.runner import environment as run_environment

    env = run_environment()
    versions = {k: env["versions"].get(k) for k in ("schedopt", "numpy", "pyomo", "highspy", "ortools")}
    return {"python": env["python"], "versions": versions, "cores": env["cores"]}


def save(name: str, *, columns: list[str], rows: list[list[Any]], command: str, seeds: list[int] | None = None,
         notes: list[str] | None = None) -> Path:
    """Store one table's results (cells already formatted as the docs show them)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    doc = {"name": name, "command": command, "seeds": seeds, "columns": columns, "rows": rows,
           "notes": notes or [], **environment()}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return path


def save_printed(names: list[str], printed: str, *, command: str, seeds: list[int] | None = None) -> list[Path]:
    """Store the markdown tables a benchmark part printed, in order, as ``names`` (one per
    table); the part's other printed lines (not headings) become the first table's notes."""
    found: list[list[list[str]]] = []
    notes: list[str] = []
    current: list[list[str]] | None = None
    for line in printed.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is None:
                current = []
                found.append(current)
            if not all(set(c) <= {"-"} for c in cells):
                current.append(cells)
            continue
        current = None
        if line.strip() and not line.startswith("#"):
            notes.append(line.strip())
    if len(found) != len(names):
        raise ValueError(f"{len(found)} tables printed, {len(names)} names given: {names}")
    return [save(name, columns=t[0], rows=t[1:], command=command, seeds=seeds, notes=notes if k == 0 else None)
            for k, (name, t) in enumerate(zip(names, found))]


def render(name: str) -> str:
    """The markdown of one stored table: the table, its notes, and where it came from."""
    doc = json.loads((RESULTS / f"{name}.json").read_text())
    lines = ["| " + " | ".join(doc["columns"]) + " |", "|" + "---|" * len(doc["columns"])]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in doc["rows"]]
    lines.append("")
    lines += [f"- {note}" for note in doc["notes"]]
    if doc["notes"]:
        lines.append("")
    seeds = f", seeds {', '.join(map(str, doc['seeds']))}" if doc.get("seeds") else ""
    libs = ", ".join(f"{k} {v}" for k, v in doc["versions"].items() if v)
    lines.append(f"Stored in `benchmarks/results/{name}.json` by `{doc['command']}`{seeds}; "
                 f"{doc['cores']} cores, Python {doc['python']}, {libs}.")
    return "\n".join(lines) + "\n"


def regenerate(text: str) -> tuple[str, list[str]]:
    """``text`` with every marked table re-rendered, and the names of those that changed."""
    changed: list[str] = []

    def sub(m: re.Match[str]) -> str:
        name = m.group("name")
        body = render(name)
        if body != m.group("body"):
            changed.append(name)
        return f"<!-- table:{name} -->\n{body}<!-- /table:{name} -->"

    return MARKER.sub(sub, text), changed


def main() -> int:
    rendered = 0
    differ: list[str] = []
    for page in PAGES:
        text = page.read_text()
        new, changed = regenerate(text)
        rendered += len(MARKER.findall(text))
        differ += [f"docs/{page.name}: {name}" for name in changed]
        if changed and "--check" not in sys.argv:
            page.write_text(new)
    if "--check" in sys.argv:
        for where in differ:
            print(f"{where} differs from its benchmarks/results/ file (run .venv/bin/python benchmarks/tables.py)")
        return 1 if differ else 0
    print(f"{rendered} tables rendered, {len(differ)} changed: {', '.join(differ) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
