"""docs/formats.md is generated from the models' field descriptions and must match them."""

from __future__ import annotations

from pathlib import Path

from schedopt.formats import FORMATS, render
from schedopt.instance import Server

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_formats_md_is_up_to_date() -> None:
    assert (DOCS / "formats.md").read_text() == render(), \
        "docs/formats.md is stale: run `python -m schedopt.formats > docs/formats.md`"


def test_every_field_is_described() -> None:
    for _title, _schema, top, nested in FORMATS:
        for model in (top, *nested):
            missing = [name for name, info in model.model_fields.items() if not info.description]
            assert not missing, f"{model.__name__}: fields without a description: {missing}"


def test_help_shows_field_meanings() -> None:
    assert "capacity (required): resource -> amount this server offers" in (Server.__doc__ or "")
