"""DL2 policy files refused at the door (issue 41 §1-2): one line naming the file
and the member, exit 2, nothing written, nothing large allocated."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from typer.testing import CliRunner

from schedopt.cli import app
from schedopt.errors import InputError
from schedopt.learn.dl2 import Dl2, Policy

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "instances" / "small-hand.yaml")


def good_arrays() -> dict[str, np.ndarray]:
    return Policy.create(J=4, hidden=8, seed=0).arrays()


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> Path:
    np.savez(path, **arrays)
    return path


def with_(key: str, value: np.ndarray) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        arrays = good_arrays()
        arrays[key] = value
        return write_npz(path, arrays)
    return make


def truncated(path: Path) -> Path:
    write_npz(path, good_arrays())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def empty(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def unknown_member(path: Path) -> Path:
    arrays = good_arrays()
    arrays["payload"] = np.zeros(10)
    return write_npz(path, arrays)


def lying_header(path: Path) -> Path:
    """A member whose .npy header claims 10^11 elements (a few bytes on disk)."""
    arrays = good_arrays()
    write_npz(path, arrays)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**11,)})
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("rows_W9.npy", header.getvalue() + b"\0" * 64)
    return path


def nan_weights(path: Path) -> Path:
    arrays = good_arrays()
    arrays["rows_W0"] = np.full_like(arrays["rows_W0"], np.nan)
    return write_npz(path, arrays)


CASES = {
    "truncated": (truncated, "not a DL2 policy"),
    "empty": (empty, "not a DL2 policy"),
    "unknown member": (unknown_member, "payload"),
    "lying header": (lying_header, "rows_W9"),
    "NaN weights": (nan_weights, "NaN or infinite"),
    "wrong shape": (with_("rows_W0", np.zeros((3, 3))), "rows_W0"),
    "string weights": (with_("v_W0", np.array([["a"]])), "v_W0"),
    "complex weights": (lambda p: with_("rows_b0", good_arrays()["rows_b0"].astype(complex))(p), "real numbers"),
    "J negative": (with_("J", np.array(-3)), "'J'"),
    "J vector": (with_("J", np.array([1, 2])), "'J'"),
    "J huge": (with_("J", np.array(10**12)), "'J'"),
    "J zero": (with_("J", np.array(0)), "'J'"),
    "no types": (with_("types", np.array([], dtype=str)), "'types'"),
    "duplicate types": (with_("types", np.array(["a", "a"])), "twice"),
    "wrong value net": (with_("v_sizes", np.array([3, 1])), "v_sizes"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_policy_file_is_one_clear_error(tmp_path: Path, case: str) -> None:
    make, phrase = CASES[case]
    path = make(tmp_path / "policy.npz")
    with pytest.raises(InputError) as err:
        Policy.load(path)
    assert str(path) in str(err.value) and phrase in str(err.value), str(err.value)
    out = tmp_path / "plan.yaml"
    res = CliRunner().invoke(app, ["solve", SMALL, "--solver", "dl2", "--option", f"policy={path}", "--out", str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert len([line for line in res.output.splitlines() if line.strip()]) == 1
    assert not out.exists()


@pytest.mark.parametrize("value", [123, "", "  "])
def test_policy_option_must_be_a_path(value: object) -> None:
    with pytest.raises(InputError, match="policy"):
        Dl2(policy=value)  # type: ignore[arg-type]


def test_good_policy_round_trips_and_saves_atomically(tmp_path: Path) -> None:
    pol = Policy.create(J=4, hidden=8, seed=0)
    pol.save(tmp_path / "p.npz")
    assert [p.name for p in tmp_path.iterdir()] == ["p.npz"]  # no temporary left beside it
    back = Policy.load(tmp_path / "p.npz")
    assert back.types == pol.types and back.J == pol.J


def test_a_policy_that_does_not_know_the_models_says_so() -> None:
    from schedopt.instance import load_instance

    plan = Dl2().solve(load_instance(SMALL), seed=0)
    if not plan.metrics["trained"]:
        assert "untrained policy" in (plan.message or "")
