"""Every table a docs page marks as generated (``<!-- table:NAME -->``) is what
its stored results (benchmarks/results/NAME.json) render: no figure drifts from its run
(issue 38 §4)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tables():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_tables", ROOT / "benchmarks" / "tables.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_marked_tables_match_their_stored_results() -> None:
    tables = _tables()
    assert tables.DOC in tables.PAGES
    marked = 0
    for page in tables.PAGES:
        text = page.read_text()
        names = [m.group("name") for m in tables.MARKER.finditer(text)]
        marked += len(names)
        for name in names:
            assert (tables.RESULTS / f"{name}.json").is_file(), f"{page.name}: benchmarks/results/{name}.json is missing"
        _, changed = tables.regenerate(text)
        assert not changed, f"{page.name}: tables differ from their stored results: {changed} (run benchmarks/tables.py)"
    assert marked, "no docs page marks a generated table"


def test_a_changed_cell_is_caught(tmp_path: Path) -> None:
    tables = _tables()
    text = tables.DOC.read_text()
    m = next(tables.MARKER.finditer(text))
    forged = text.replace(m.group("body"), m.group("body").replace("|", "| 0", 1), 1)
    _, changed = tables.regenerate(forged)
    assert changed == [m.group("name")]
