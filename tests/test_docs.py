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


@pytest.mark.parametrize("page", ["allocation.md", "heterogeneous.md"])
def test_page_python_blocks_run(page: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The python blocks of these pages (issue 50's examples among them), in order, in one namespace,
    from the repository's root (they read the bundled instances); printed comments are checked."""
    monkeypatch.chdir(DOCS.parent)
    text = (DOCS / page).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOCS / page), "exec"), namespace)  # noqa: S102 - our own docs
    printed = capsys.readouterr().out
    for expected in re.findall(r"\)  # (\{.*\})$", "\n".join(blocks), re.M):  # "print(...)  # {...}" states the output
        assert expected in printed, (page, expected, printed)
