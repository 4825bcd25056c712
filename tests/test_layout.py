"""One home per concept (issue 33 §6): the layout rules the code keeps."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "schedopt"


def sources() -> dict[str, str]:
    return {str(p.relative_to(PACKAGE)): p.read_text() for p in PACKAGE.rglob("*.py")}


def test_only_backends_lp_drives_highspy() -> None:
    users = sorted(name for name, text in sources().items()
                   if re.search(r"^\s*import highspy|load\(\"highspy\"", text, re.M))
    assert users == ["backends/lp.py"]


def test_core_registry_does_not_import_placement() -> None:
    text = (PACKAGE / "registry.py").read_text()
    assert "schedopt.placement" not in text


def test_heuristic_plans_are_built_in_the_plans_module() -> None:
    found = sorted(name for name, text in sources().items() if "def heuristic_plan(" in text)
    assert found == ["allocation/plans.py"]


def test_checker_side_never_imports_a_solver() -> None:
    """The certificate replays and the checkers share no code with the solvers."""
    solver_modules = ("greedy", "milp", "cpsat", "dual", "lagrange", "price_guided", "exact", "baselines", "dorm",
                      "colgen", "optimus", "kube", "dltap", "paa")
    for name in ("certification.py", "checking.py", "allocation/certificates.py", "partition/certificates.py"):
        text = (PACKAGE / name).read_text()
        imports = re.findall(r"^\s*(?:from|import) (schedopt\.[\w.]+)", text, re.M)
        for module in imports:
            assert module.rsplit(".", 1)[-1] not in solver_modules, (name, module)
