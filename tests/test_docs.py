"""Documentation that runs: every ```python block of docs/api.md, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_api_md_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "api.md").read_text(), re.S)
    assert len(blocks) >= 3
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOCS / "api.md"), "exec"), namespace)  # noqa: S102 - our own docs
    printed = capsys.readouterr().out
    assert "round 2:" in printed and 'unknown resource "gpux"' in printed
