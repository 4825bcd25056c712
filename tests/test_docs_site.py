"""The docs site and its API reference (issue 54 §4): `make docs` builds from the docstrings
with broken links and missing references as errors (mkdocs.yml: strict); this runs the same
build in `make test`, so CI builds it too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_docs_site_builds_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]'; make install does)")
    pytest.importorskip("mkdocstrings", reason="the docs extra is not installed (pip install -e '.[docs]')")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "bench" / "index.html").is_file()
    page = (tmp_path / "site" / "reference" / "schedopt" / "index.html").read_text()
    assert "solve" in page and "check_fits" in page  # the API's functions, from their docstrings


def test_every_page_is_in_the_nav() -> None:
    """Each docs page and reference page is reachable from mkdocs.yml's nav."""
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    missing = [p for p in pages if f": {p}" not in nav]
    assert not missing, missing
